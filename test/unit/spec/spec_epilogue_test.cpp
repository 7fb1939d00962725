// The epilogue: key: parsed as a string or a list, its operands appended to every problem and the
// signature, the problem named after it, the candidates fused and the externs unfused; and each
// error, exact message and position included.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

// A GEMM-shaped spec (lines 1-12); a case appends its own lines from 13.
constexpr const char* kGemm = R"y(name: matmul
kernel: {source: matmul.cpp, entry: matmul}
args:
  - {name: C, role: out, dtype: f32, shape: [M, N]}
  - {name: A, role: in, dtype: f32, shape: [M, K]}
  - {name: B, role: in, dtype: f32, shape: [K, N]}
  - {name: M, dtype: i32, value: M}
  - {name: N, dtype: i32, value: N}
  - {name: K, dtype: i32, value: K}
problems: [{M: 37, N: 53, K: 29}, {name: big, M: 64, N: 128, K: 32}]
params: {TILE_M: [8], TILE_N: [16], ORDER: [ijk, ikj]}
externs: [{name: openblas, kind: openblas.gemm, bind: {c: C, a: A, b: B, m: M, n: N, k: K}}]
)y";

Spec parse_ok(const std::string& text) {
  Result<Spec> spec = parse_inline(text);
  EXPECT_TRUE(spec) << spec.error().message;
  return spec ? *spec : Spec{};
}

TEST(SpecEpilogue, StringAndListReadAlike) {
  const Spec a = parse_ok(std::string(kGemm) + "epilogue: bias, relu\n");
  const Spec b = parse_ok(std::string(kGemm) + "epilogue: [bias, relu]\n");
  EXPECT_EQ(a.epilogue.name(), "bias+relu");
  EXPECT_EQ(a.epilogue, b.epilogue);
  EXPECT_EQ(a.output, 0u);
  EXPECT_TRUE(parse_ok(std::string(kGemm) + "epilogue: none\n").epilogue.empty());
  EXPECT_TRUE(parse_ok(kGemm).epilogue.empty());
}

TEST(SpecEpilogue, OperandsFollowTheArgsAndNameTheProblem) {
  const Spec spec = parse_ok(std::string(kGemm) + "epilogue: rowbias,scale=0.5,gelu,residual\n");
  const Signature sig = spec_signature(spec);
  ASSERT_EQ(sig.size(), 8u);
  EXPECT_EQ(sig[6].name, "rowbias");
  EXPECT_EQ(sig[6].role, ArgRole::kIn);
  EXPECT_EQ(sig[7].name, "residual");
  Result<Problem> p = make_problem(spec, spec.problems[0]);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->name, "M=37,N=53,K=29,rowbias+scale=0.5+gelu+residual");
  ASSERT_EQ(p->args.size(), 8u);
  EXPECT_EQ(p->args[6].tensor, TensorSpec::contiguous(DType::kF32, {37}));
  EXPECT_EQ(p->args[7].tensor, TensorSpec::contiguous(DType::kF32, {37, 53}));
  const Signature got = p->signature();
  ASSERT_EQ(got.size(), sig.size());
  for (std::size_t i = 0; i < sig.size(); ++i) EXPECT_EQ(got[i].name, sig[i].name);
  // The plain GEMM of the same sizes is another problem, and so is another epilogue.
  Result<Problem> plain = make_problem(parse_ok(kGemm), spec.problems[0]);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->name, "M=37,N=53,K=29");
  EXPECT_NE(plain->key(), p->key());
  Result<Problem> bias =
      make_problem(parse_ok(std::string(kGemm) + "epilogue: bias\n"), spec.problems[1]);
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->name, "big,bias");
  EXPECT_EQ(bias->args[6].tensor, TensorSpec::contiguous(DType::kF32, {128}));
}

TEST(SpecEpilogue, TemplatesFusedExternsUnfusedReferenceOnTheHost) {
  const Spec spec =
      parse_ok(std::string(kGemm) + "epilogue: bias,relu\nreference: {extern: openblas}\n");
  Result<SpecChoices> choices = make_spec_choices(spec);
  ASSERT_TRUE(choices) << choices.error().message;
  const KernelTemplateDesc& desc = choices->kernel_template->desc();
  EXPECT_TRUE(desc.source.starts_with(
      "#define KTUNE_EPILOGUE 1\n#define KTUNE_EPILOGUE_NAME \"bias+relu\"\n"))
      << desc.source.substr(0, 200);
  EXPECT_NE(desc.source.find("#define KTUNE_EPILOGUE_PARAMS , const float* __restrict__ bias\n"
                             "#define KTUNE_EPILOGUE_ARGS , bias\n"),
            std::string::npos);
  EXPECT_NE(desc.source.find("\n#line 1\n"), std::string::npos);
  EXPECT_EQ(desc.signature.size(), 7u);
  ASSERT_EQ(choices->candidates.size(), 3u);
  EXPECT_EQ(choices->candidates[0]->name(), "matmul_bias_relu_TILE_M8_TILE_N16_ORDERijk");
  EXPECT_EQ(choices->candidates[2]->name(), "openblas+epilogue");
  EXPECT_EQ(choices->candidates[2]->kind(), Choice::Kind::kExtern);
  ASSERT_TRUE(choices->reference);
  EXPECT_EQ(choices->reference->name(), "reference:openblas+epilogue");
  // The pair runs compiled for candidates and on the host for the reference.
  EXPECT_TRUE(choices->candidates[2]->info().ends_with(" then epilogue_pass_bias_relu"))
      << choices->candidates[2]->info();
  EXPECT_TRUE(choices->reference->info().ends_with(" then epilogue_pass_bias_relu_host"))
      << choices->reference->info();
  // The source, hence every candidate's identity, differs from the plain GEMM's.
  Result<SpecChoices> plain = make_spec_choices(parse_ok(kGemm));
  ASSERT_TRUE(plain);
  EXPECT_NE(plain->candidates[0]->hash_key(), choices->candidates[0]->hash_key());
}

struct BadCase {
  const char* label;
  std::string text;
  std::string message;  // after "<specs dir>/inline.yaml:"
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

class BadEpilogue : public testing::TestWithParam<BadCase> {};

TEST_P(BadEpilogue, ReportsWhereAndWhat) {
  const BadCase& c = GetParam();
  Result<Spec> spec = parse_inline(c.text);
  ASSERT_FALSE(spec) << "accepted:\n" << c.text;
  EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(spec.error().message, (specs_dir() / "inline.yaml").string() + ":" + c.message);
}

std::string gemm(const std::string& tail) { return kGemm + tail; }

// kGemm with its args replaced (lines 3 onwards) and no externs, then `tail`.
std::string with_args(const std::string& args, const std::string& tail) {
  std::string head = kGemm;
  const std::size_t from = head.find("args:");
  const std::size_t to = head.find("problems:");
  const std::size_t externs = head.find("externs:");
  return head.substr(0, from) + args + head.substr(to, externs - to) + tail;
}

constexpr const char* kSteps = "bias, rowbias, scale=<number>, relu, gelu, silu, residual";

INSTANTIATE_TEST_SUITE_P(
    Spec, BadEpilogue,
    testing::Values(
        BadCase{"unknown_step", gemm("epilogue: bias,relux\n"),
                fmt::format("13:11: epilogue: unknown step 'relux'; expected a comma-separated "
                            "list of {}",
                            kSteps)},
        BadCase{"bad_scale", gemm("epilogue: scale=fast\n"),
                "13:11: epilogue: scale; expected a finite number, got 'fast'"},
        BadCase{"twice", gemm("epilogue: bias,relu,bias\n"),
                "13:11: epilogue: 'bias' appears twice; each tensor operand may appear once"},
        BadCase{"list_item", gemm("epilogue: [bias, tanh]\n"),
                fmt::format("13:18: epilogue[1]: unknown step 'tanh'; expected a "
                            "comma-separated list of {}",
                            kSteps)},
        BadCase{"list_item_with_comma", gemm("epilogue: [bias, 'relu,gelu']\n"),
                "13:18: epilogue[1]: 'relu,gelu' holds a comma; expected one step per item"},
        BadCase{"list_twice", gemm("epilogue: [residual, relu, residual]\n"),
                "13:11: epilogue: 'residual' appears twice; each tensor operand may appear once"},
        BadCase{"mapping", gemm("epilogue: {bias: 1}\n"),
                "13:11: epilogue: expected a string like 'bias,relu' or a list of steps; got a "
                "mapping"},
        BadCase{"two_outputs",
                with_args("args:\n  - {name: C, role: out, dtype: f32, shape: [M, N]}\n"
                          "  - {name: D, role: inout, dtype: f32, shape: [M, N]}\n",
                          "epilogue: relu\n"),
                "8:11: epilogue: expected a GEMM with exactly one output (role out or inout) "
                "to apply it to; got 2 (C, D)"},
        BadCase{"not_2d",
                with_args("args:\n  - {name: C, role: out, dtype: f32, shape: [M]}\n",
                          "epilogue: relu\n"),
                "7:11: epilogue: output 'C' has shape [M]; expected a 2-D shape [M, N]"},
        BadCase{"f64_output",
                with_args("args:\n  - {name: C, role: out, dtype: f64, shape: [M, N]}\n",
                          "epilogue: relu\n"),
                "7:11: epilogue: output 'C' is f64; expected f32 (the epilogue computes in f32)"},
        BadCase{"operand_clash",
                with_args("args:\n  - {name: C, role: out, dtype: f32, shape: [M, N]}\n"
                          "  - {name: bias, role: in, dtype: f32, shape: [N]}\n",
                          "epilogue: bias,relu\n"),
                "8:11: epilogue: operand 'bias' is also the name of args[1]; expected the "
                "epilogue's operands (appended after args) to have names of their own"},
        BadCase{"kernel_reference",
                gemm("epilogue: relu\nreference: {kernel: {source: matmul_ref.cpp, entry: "
                     "matmul_ref}}\n"),
                "13:11: epilogue: a reference.kernel has no epilogue; expected reference: "
                "{extern: <name>} (the library call followed by the epilogue) or no "
                "reference"}));

}  // namespace
}  // namespace ktune
