// Epilogue: the text form, its errors, the rendered hook and the host reference.
#include "ktune/core/epilogue.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ktune {
namespace {

TEST(Epilogue, ParsesStepsInOrderAndNamesThemCanonically) {
  Result<Epilogue> e = Epilogue::parse(" bias , scale=0.5,gelu,residual ");
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->name(), "bias+scale=0.5+gelu+residual");
  ASSERT_EQ(e->operands().size(), 2u);
  EXPECT_EQ(e->operands()[0].name, "bias");
  EXPECT_EQ(e->operands()[1].name, "residual");
  EXPECT_EQ(e->operands()[1].shape, EpilogueOperandShape::kMatrix);
  // The canonical name of the parsed name is itself (it goes into problem names).
  Result<Epilogue> none = Epilogue::parse("none");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(none->name(), "none");
  EXPECT_TRUE(Epilogue::parse("")->empty());
}

TEST(Epilogue, RejectsUnknownStepsRepeatedOperandsAndBadScales) {
  Result<Epilogue> e = Epilogue::parse("bias,tanh");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(e.error().message.find("unknown step 'tanh'"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("relu, gelu, silu"), std::string::npos);
  e = Epilogue::parse("bias,relu,bias");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("'bias' appears twice"), std::string::npos);
  e = Epilogue::parse("scale=x");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("expected a finite number, got 'x'"), std::string::npos);
  EXPECT_FALSE(Epilogue::parse("bias,,relu").has_value());
}

TEST(Epilogue, RendersTheHookWithOperandsAndLanguageSpecificMath) {
  const Epilogue e = *Epilogue::parse("rowbias,silu,gelu");
  const std::string cuda = e.render_defines("const T*", EpilogueLanguage::kCuda);
  EXPECT_NE(cuda.find("#define KTUNE_EPILOGUE_PARAMS , const T* rowbias\n"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("#define KTUNE_EPILOGUE_ARGS , rowbias\n"), std::string::npos);
  EXPECT_NE(cuda.find("KTUNE_LOAD(rowbias, row)"), std::string::npos);
  EXPECT_NE(cuda.find("__fdividef(v, 1.0f + __expf(-v))"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("erff("), std::string::npos);
  const std::string cpp = e.render_defines("const T*", EpilogueLanguage::kCpp);
  EXPECT_NE(cpp.find("v / (1.0f + expf(-v))"), std::string::npos) << cpp;
  const std::string ocl = e.render_defines("__global const float*", EpilogueLanguage::kOpenCL);
  EXPECT_NE(ocl.find(" exp(-v)"), std::string::npos);
  EXPECT_EQ(ocl.find("erff("), std::string::npos);
  // Steps apply in order: the body lists rowbias before silu before gelu.
  EXPECT_LT(cuda.find("rowbias, row"), cuda.find("expf"));
  EXPECT_LT(cuda.find("expf"), cuda.find("erff"));
  // No operand of C's shape: nothing for a template to load its own way.
  EXPECT_EQ(cuda.find("KTUNE_EPILOGUE_MATRIX"), std::string::npos);
  const std::string residual =
      Epilogue::parse("bias,residual,gelu")->render_defines("const T*", EpilogueLanguage::kCuda);
  EXPECT_NE(residual.find("#define KTUNE_EPILOGUE_MATRIX residual\n"), std::string::npos)
      << residual;
}

TEST(Epilogue, TheReferenceAppliesEachStepInOrder) {
  const Epilogue e = *Epilogue::parse("bias,rowbias,scale=2,relu,residual");
  // 2 x 3 matrix.
  float c[6] = {1, -5, 2, 0, 3, -1};
  const float bias[3] = {1, 1, 1};
  const float rowbias[2] = {0, -1};
  const float residual[6] = {10, 20, 30, 40, 50, 60};
  e.apply(c, 2, 3, {bias, rowbias, residual});
  // row 0: (c + 1 + 0) * 2, relu, + residual
  EXPECT_FLOAT_EQ(c[0], 4 + 10);
  EXPECT_FLOAT_EQ(c[1], 0 + 20);
  EXPECT_FLOAT_EQ(c[2], 6 + 30);
  // row 1: (c + 1 - 1) * 2
  EXPECT_FLOAT_EQ(c[3], 0 + 40);
  EXPECT_FLOAT_EQ(c[4], 6 + 50);
  EXPECT_FLOAT_EQ(c[5], 0 + 60);
  const Epilogue g = *Epilogue::parse("gelu");
  EXPECT_NEAR(g.apply_one(1.0f, 0, 0, 1, {}), 0.8413447f, 1e-6);
  const Epilogue s = *Epilogue::parse("silu");
  EXPECT_NEAR(s.apply_one(1.0f, 0, 0, 1, {}), 0.7310586f, 1e-6);
}

TEST(Epilogue, ProblemArgumentsFollowTheOperands) {
  const Epilogue e = *Epilogue::parse("residual,bias");
  const std::vector<ProblemArg> args = e.problem_args(DType::kBF16, 4, 8, Device{});
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].param.name, "residual");
  EXPECT_EQ(args[0].tensor.sizes, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(args[1].param.name, "bias");
  EXPECT_EQ(args[1].tensor.sizes, (std::vector<std::int64_t>{8}));
  EXPECT_EQ(args[1].param.dtype, DType::kBF16);
}

}  // namespace
}  // namespace ktune
