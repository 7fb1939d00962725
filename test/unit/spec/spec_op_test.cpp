// The op: form (a built-in op instead of a kernel): what it reads, the example spec, and each
// error, exact message and position included.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

// A valid op spec (lines 1-6); a case replaces or appends lines.
constexpr const char* kHead = R"y(name: gemm_bf16
op: cuda.gemm
dtype: bf16
problems:
  - {name: square, M: 64, N: 128, K: 32}
  - {M: 32, N: 8192, K: 8192}
)y";

std::string inline_path() { return (specs_dir() / "inline.yaml").string(); }

TEST(SpecOp, ReadsOpDtypeEpilogueProblemsAndSeed) {
  Result<Spec> spec = parse_inline(std::string(kHead) + "epilogue: bias,relu\nseed: 7\n");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->name, "gemm_bf16");
  EXPECT_EQ(spec->op.name, "cuda.gemm");
  EXPECT_EQ(spec->op.line, 2);
  EXPECT_EQ(spec->op.dtype, DType::kBF16);
  EXPECT_EQ(spec->epilogue.name(), "bias+relu");
  EXPECT_EQ(spec->seed, 7u);
  ASSERT_EQ(spec->problems.size(), 2u);
  EXPECT_EQ(spec->problems[0].name, "square");
  EXPECT_EQ(spec->problems[1].name, "M=32,N=8192,K=8192");
  EXPECT_EQ(problem_size(spec->problems[0], "M"), 64);
  EXPECT_EQ(problem_size(spec->problems[0], "N"), 128);
  EXPECT_EQ(problem_size(spec->problems[0], "K"), 32);
  EXPECT_EQ(problem_size(spec->problems[0], "L"), std::nullopt);
  EXPECT_TRUE(spec->args.empty());
}

TEST(SpecOp, DtypeDefaultsToBf16AsKtuneGemm) {
  Result<Spec> f16 =
      parse_inline("name: g\nop: cuda.gemm\ndtype: f16\nproblems: [{M: 1, N: 2, K: 3}]\n");
  ASSERT_TRUE(f16) << f16.error().message;
  EXPECT_EQ(f16->op.dtype, DType::kF16);
  EXPECT_TRUE(f16->epilogue.empty());
  Result<Spec> unset = parse_inline("name: g\nop: cuda.gemm\nproblems: [{M: 1, N: 2, K: 3}]\n");
  ASSERT_TRUE(unset) << unset.error().message;
  EXPECT_EQ(unset->op.dtype, DType::kBF16);
}

TEST(SpecOp, KnownOpsAndTheirDtypes) {
  EXPECT_EQ(spec_ops(), std::vector<std::string>{"cuda.gemm"});
  EXPECT_EQ(spec_op_dtypes("cuda.gemm"),
            (std::vector<DType>{DType::kF32, DType::kF16, DType::kBF16}));
  EXPECT_TRUE(spec_op_dtypes("cuda.conv").empty());
}

TEST(SpecOp, TheExampleSpecLoads) {
  Result<Spec> spec = load_spec(std::filesystem::path(KTUNE_SOURCE_DIR) / "examples" / "cuda_gemm" /
                                "gemm_bf16.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->op.name, "cuda.gemm");
  EXPECT_EQ(spec->op.dtype, DType::kBF16);
  ASSERT_EQ(spec->problems.size(), 5u);
  // --problem 2 is 1024^3, as the GPU test and the README use it.
  EXPECT_EQ(spec->problems[2].name, "square1024");
  EXPECT_EQ(problem_size(spec->problems[2], "K"), 1024);
}

// Problems and candidates come from the op (in the CLI): asking the spec module is an error
// rather than an empty problem that something downstream would tune.
TEST(SpecOp, MakeProblemAndChoicesRefuseAnOpSpec) {
  Result<Spec> spec = parse_inline(kHead);
  ASSERT_TRUE(spec) << spec.error().message;
  Result<Problem> problem = make_problem(*spec, spec->problems[0]);
  ASSERT_FALSE(problem);
  EXPECT_EQ(problem.error().message,
            inline_path() +
                ":2: op: spec 'gemm_bf16' names the built-in op cuda.gemm, whose problems are "
                "its own; expected a spec with a kernel (ktune tune runs op specs)");
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_FALSE(choices);
  EXPECT_NE(choices.error().message.find("whose candidates are its own"), std::string::npos)
      << choices.error().message;
}

struct BadOp {
  const char* label;
  std::string text;
  std::string message;  // after "<specs dir>/inline.yaml:"
};

void PrintTo(const BadOp& c, std::ostream* os) { *os << c.label; }

class BadOpSpec : public testing::TestWithParam<BadOp> {};

TEST_P(BadOpSpec, ReportsWhereAndWhat) {
  const BadOp& c = GetParam();
  Result<Spec> spec = parse_inline(c.text);
  ASSERT_FALSE(spec) << "accepted:\n" << c.text;
  EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(spec.error().message, inline_path() + ":" + c.message);
}

std::string with(const std::string& tail) { return kHead + tail; }
// The kernel form's key on line 7, rejected by name.
BadOp kernel_key(const char* key, const char* value) {
  return BadOp{key, with(std::string(key) + ": " + value + "\n"),
               fmt::format("7:1: {}: not allowed with op: cuda.gemm (the op brings its own "
                           "kernels, arguments, search space and reference); expected only name, "
                           "op, dtype, epilogue, problems, seed, search",
                           key)};
}

INSTANTIATE_TEST_SUITE_P(KernelKeys, BadOpSpec,
                         testing::Values(kernel_key("kernel", "{source: add.cpp, entry: add}"),
                                         kernel_key("args", "[]"), kernel_key("params", "{T: [1]}"),
                                         kernel_key("restrictions", "[T > 0]"),
                                         kernel_key("externs", "[]"),
                                         kernel_key("reference", "{extern: x}")));

INSTANTIATE_TEST_SUITE_P(
    Schema, BadOpSpec,
    testing::Values(
        BadOp{"unknown_op", "name: g\nop: cuda.gemv\nproblems: [{M: 1, N: 1, K: 1}]\n",
              "2:5: op: unknown op 'cuda.gemv'; expected one of cuda.gemm"},
        BadOp{"op_not_string", "name: g\nop: [cuda.gemm]\n",
              "2:5: op: expected a string; got a list"},
        BadOp{"dtype_not_of_op", "name: g\nop: cuda.gemm\ndtype: i8\n",
              "3:8: dtype: unsupported dtype 'i8' for op cuda.gemm; expected one of f32, f16, "
              "bf16"},
        BadOp{"dtype_unknown", "name: g\nop: cuda.gemm\ndtype: f33\n",
              "3:8: dtype: unsupported dtype 'f33' for op cuda.gemm; expected one of f32, f16, "
              "bf16"},
        BadOp{"unknown_key", with("tolerance: {rtol: 1}\n"),
              "7:1: tolerance: unknown key; expected one of name, op, dtype, epilogue, problems, "
              "seed, search"},
        BadOp{"missing_name", "op: cuda.gemm\nproblems: [{M: 1, N: 1, K: 1}]\n",
              "1:1: name: missing required field"},
        BadOp{"missing_problems", "name: g\nop: cuda.gemm\n",
              "1:1: problems: missing required field"},
        BadOp{"bad_epilogue", with("epilogue: bias,tanh\n"),
              "7:11: epilogue: unknown step 'tanh'; expected a comma-separated list of bias, "
              "rowbias, scale=<number>, relu, gelu, silu, residual"},
        BadOp{"missing_size", "name: g\nop: cuda.gemm\nproblems: [{M: 1, N: 1}]\n",
              "3:12: problems[0]: binds sizes M, N; expected K, M, N (the sizes of op "
              "cuda.gemm)"},
        BadOp{"extra_size", "name: g\nop: cuda.gemm\nproblems: [{M: 1, N: 1, K: 1, L: 2}]\n",
              "3:12: problems[0]: binds sizes K, L, M, N; expected K, M, N (the sizes of op "
              "cuda.gemm)"},
        BadOp{"zero_size", with("  - {M: 32, N: 0, K: 8}\n"),
              "7:16: problems[2].N: expected an integer >= 1; got 0"},
        BadOp{"negative_size", "name: g\nop: cuda.gemm\nproblems: [{M: -4, N: 1, K: 1}]\n",
              "3:16: problems[0].M: expected an integer >= 1; got -4"},
        BadOp{"bad_seed", with("seed: -1\n"), "7:7: seed: expected an integer >= 0; got -1"}));

}  // namespace
}  // namespace ktune
