// make_problem: a spec's expressions evaluated for each problem into TensorSpecs and scalars.
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

TEST(MakeProblem, MatmulShapesStridesAndScalars) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> p = make_problem(*spec, spec->problems[1]);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->op, "matmul");
  EXPECT_EQ(p->name, "skinny");
  ASSERT_EQ(p->args.size(), 6u);
  EXPECT_EQ(p->args[0].tensor, TensorSpec::contiguous(DType::kF32, {8, 256}));
  EXPECT_EQ(p->args[1].tensor.sizes, (std::vector<std::int64_t>{8, 128}));
  EXPECT_EQ(p->args[1].tensor.strides, (std::vector<std::int64_t>{128, 1}));
  EXPECT_EQ(p->args[1].tensor.offset, 0);
  EXPECT_EQ(p->args[2].tensor, TensorSpec::contiguous(DType::kF32, {128, 256}));
  EXPECT_EQ(p->args[3].param.role, ArgRole::kScalar);
  EXPECT_EQ(p->args[3].param.name, "M");
  EXPECT_EQ(p->args[3].scalar, ScalarValue(std::int64_t{8}));
  EXPECT_EQ(p->args[4].scalar, ScalarValue(std::int64_t{256}));
  EXPECT_EQ(p->args[5].scalar, ScalarValue(std::int64_t{128}));
  EXPECT_EQ(p->signature().size(), spec_signature(*spec).size());
}

TEST(MakeProblem, DefaultNameFollowsBindingOrder) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->name, "M=64,N=64,K=64");
  // A ProblemDecl built in code without a name gets the same default.
  ProblemDecl decl{"", {{"M", 32}, {"N", 4096}, {"K", 4096}}, 0};
  Result<Problem> q = make_problem(*spec, decl);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->name, "M=32,N=4096,K=4096");
  EXPECT_EQ(q->args[0].tensor.sizes, (std::vector<std::int64_t>{32, 4096}));
}

TEST(MakeProblem, ExpressionsStridesOffsetsAndFloatScalars) {
  Result<Spec> spec = parse_inline(R"y(name: padded
kernel: {source: add.cpp, entry: add}
args:
  - {name: C, role: inout, dtype: f64, shape: [M, N], strides: [N + 8, 1], offset: 2 * N}
  - {name: T, role: in, dtype: bf16, shape: ["max(M, N)", M ^ 2 / 4]}
  - {name: E, role: in, dtype: i8, shape: [], offset: "ceil(N / 3) + floor(N / 3)"}
  - {name: alpha, dtype: f32, value: M / 8}
  - {name: big, dtype: i64, value: M * N * 1000000}
  - {name: neg, dtype: i32, value: 0 - M}
problems:
  - {M: 12, N: 4}
)y");
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(p) << p.error().message;
  const TensorSpec& c = p->args[0].tensor;
  EXPECT_EQ(c.dtype, DType::kF64);
  EXPECT_EQ(c.sizes, (std::vector<std::int64_t>{12, 4}));
  EXPECT_EQ(c.strides, (std::vector<std::int64_t>{12, 1}));
  EXPECT_EQ(c.offset, 8);
  EXPECT_EQ(p->args[1].tensor, TensorSpec::contiguous(DType::kBF16, {12, 36}));
  EXPECT_TRUE(p->args[2].tensor.sizes.empty());
  EXPECT_EQ(p->args[2].tensor.offset, 3);
  EXPECT_EQ(p->args[3].scalar, ScalarValue(1.5));
  EXPECT_EQ(p->args[4].scalar, ScalarValue(std::int64_t{48000000}));
  EXPECT_EQ(p->args[5].scalar, ScalarValue(std::int64_t{-12}));
}

TEST(MakeProblem, NegativeSizeNamesArgAndProblem) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  spec->args[1].shape[1] = "K - 200";
  Result<Problem> p = make_problem(*spec, spec->problems[1]);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(p.error().message, (specs_dir() / "matmul.yaml").string() +
                                   ":11: args[1].shape[1]: 'K - 200' is -72 in problem 'skinny' "
                                   "(arg 'A'); expected a non-negative integer");
}

TEST(MakeProblem, UnboundSizeIsAnError) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  ProblemDecl decl{"partial", {{"M", 4}, {"N", 4}}, 0};  // no K
  Result<Problem> p = make_problem(*spec, decl);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message.find(":11: args[1].shape[1]: 'K': "), std::string::npos)
      << p.error().message;
  EXPECT_NE(p.error().message.find("in problem 'partial' (arg 'A')"), std::string::npos)
      << p.error().message;
}

}  // namespace
}  // namespace ktune
