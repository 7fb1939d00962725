// load_spec on good specs: every field read, defaults filled, YAML and JSON alike.
#include <gtest/gtest.h>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::specs_dir;

bool same_values(const std::vector<ParamValue>& a, const std::vector<ParamValue>& b) {
  return a == b;
}

// Spec has no operator== (its parts come from other modules); compare field by field.
void expect_same(const Spec& a, const Spec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kernel.source, b.kernel.source);
  EXPECT_EQ(a.kernel.entry, b.kernel.entry);
  EXPECT_EQ(a.kernel.language, b.kernel.language);
  EXPECT_EQ(a.kernel.mustache, b.kernel.mustache);
  EXPECT_EQ(a.kernel.flags, b.kernel.flags);
  ASSERT_EQ(a.args.size(), b.args.size());
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    SCOPED_TRACE(a.args[i].name);
    EXPECT_EQ(a.args[i].name, b.args[i].name);
    EXPECT_EQ(a.args[i].role, b.args[i].role);
    EXPECT_EQ(a.args[i].dtype, b.args[i].dtype);
    EXPECT_EQ(a.args[i].shape, b.args[i].shape);
    EXPECT_EQ(a.args[i].strides, b.args[i].strides);
    EXPECT_EQ(a.args[i].offset, b.args[i].offset);
    EXPECT_EQ(a.args[i].value, b.args[i].value);
  }
  ASSERT_EQ(a.problems.size(), b.problems.size());
  for (std::size_t i = 0; i < a.problems.size(); ++i) {
    EXPECT_EQ(a.problems[i].name, b.problems[i].name);
    EXPECT_EQ(a.problems[i].sizes, b.problems[i].sizes);
  }
  ASSERT_EQ(a.params.size(), b.params.size());
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_EQ(a.params[i].name, b.params[i].name);
    EXPECT_TRUE(same_values(a.params[i].values, b.params[i].values)) << a.params[i].name;
  }
  EXPECT_EQ(a.restrictions, b.restrictions);
  EXPECT_EQ(a.reference.kind, b.reference.kind);
  EXPECT_EQ(a.reference.extern_name, b.reference.extern_name);
  EXPECT_EQ(a.reference.kernel.source, b.reference.kernel.source);
  EXPECT_EQ(a.reference.kernel.entry, b.reference.kernel.entry);
  ASSERT_EQ(a.tolerance.has_value(), b.tolerance.has_value());
  if (a.tolerance) {
    EXPECT_EQ(a.tolerance->rtol, b.tolerance->rtol);
    EXPECT_EQ(a.tolerance->atol, b.tolerance->atol);
    EXPECT_EQ(a.tolerance->max_rel_l2, b.tolerance->max_rel_l2);
  }
  ASSERT_EQ(a.externs.size(), b.externs.size());
  for (std::size_t i = 0; i < a.externs.size(); ++i) {
    EXPECT_EQ(a.externs[i].name, b.externs[i].name);
    EXPECT_EQ(a.externs[i].kind, b.externs[i].kind);
    EXPECT_EQ(a.externs[i].bind, b.externs[i].bind);
  }
  EXPECT_EQ(a.seed, b.seed);
}

TEST(LoadSpec, ReadsEveryField) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->file, specs_dir() / "matmul.yaml");
  EXPECT_EQ(spec->name, "matmul");
  EXPECT_EQ(spec->kernel.source, (specs_dir() / "matmul.cpp").lexically_normal());
  EXPECT_EQ(spec->kernel.entry, "matmul");
  EXPECT_EQ(spec->kernel.language, "c++");
  EXPECT_FALSE(spec->kernel.mustache);
  EXPECT_EQ(spec->kernel.flags, std::vector<std::string>{"-O2"});

  ASSERT_EQ(spec->args.size(), 6u);
  const ArgDecl& a = spec->args[1];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.role, ArgRole::kIn);
  EXPECT_EQ(a.dtype, DType::kF32);
  EXPECT_EQ(a.shape, (std::vector<std::string>{"M", "K"}));
  EXPECT_EQ(a.strides, (std::vector<std::string>{"K", "1"}));
  EXPECT_EQ(a.offset, "0");
  EXPECT_EQ(a.line, 11);
  EXPECT_EQ(spec->args[0].role, ArgRole::kOut);
  EXPECT_EQ(spec->args[2].dtype, DType::kF32);  // the alias float32
  EXPECT_EQ(spec->args[3].role, ArgRole::kScalar);
  EXPECT_EQ(spec->args[3].dtype, DType::kI32);
  EXPECT_EQ(spec->args[3].value, "M");

  ASSERT_EQ(spec->problems.size(), 2u);
  EXPECT_EQ(spec->problems[0].name, "M=64,N=64,K=64");
  EXPECT_EQ(spec->problems[0].line, 17);
  EXPECT_EQ(spec->problems[1].name, "skinny");
  using Sizes = std::vector<std::pair<std::string, std::int64_t>>;
  EXPECT_EQ(spec->problems[1].sizes, (Sizes{{"M", 8}, {"N", 256}, {"K", 128}}));

  ASSERT_EQ(spec->params.size(), 3u);
  EXPECT_EQ(spec->params[0].name, "TILE_M");
  EXPECT_EQ(spec->params[0].values,
            (std::vector<ParamValue>{std::int64_t{8}, std::int64_t{16}, std::int64_t{32}}));
  EXPECT_EQ(spec->params[2].name, "ORDER");
  EXPECT_EQ(spec->params[2].values,
            (std::vector<ParamValue>{std::string("ijk"), std::string("ikj")}));
  EXPECT_EQ(spec->restrictions, std::vector<std::string>{"TILE_M * TILE_N <= 256"});

  EXPECT_EQ(spec->reference.kind, ReferenceDecl::Kind::kExtern);
  EXPECT_EQ(spec->reference.extern_name, "openblas");
  ASSERT_TRUE(spec->tolerance);
  EXPECT_EQ(spec->tolerance->rtol, 1e-3);
  EXPECT_EQ(spec->tolerance->atol, 1e-5);
  EXPECT_EQ(spec->tolerance->max_rel_l2, default_tolerance(DType::kF32).max_rel_l2);
  ASSERT_EQ(spec->externs.size(), 1u);
  EXPECT_EQ(spec->externs[0].name, "openblas");
  EXPECT_EQ(spec->externs[0].kind, "openblas.gemm");
  EXPECT_EQ(spec->externs[0].bind.size(), 6u);
  EXPECT_EQ(spec->externs[0].bind[0], (std::pair<std::string, std::string>{"c", "C"}));
  EXPECT_EQ(spec->seed, 7u);
}

TEST(LoadSpec, JsonEqualsYaml) {
  Result<Spec> yaml = load_spec(specs_dir() / "matmul.yaml");
  Result<Spec> json = load_spec(specs_dir() / "matmul.json");
  ASSERT_TRUE(yaml) << yaml.error().message;
  ASSERT_TRUE(json) << json.error().message;
  expect_same(*yaml, *json);
}

TEST(LoadSpec, DefaultsWhenFieldsAreLeftOut) {
  Result<Spec> spec = load_spec(specs_dir() / "add.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->kernel.language, "c++");
  EXPECT_FALSE(spec->kernel.mustache);
  EXPECT_TRUE(spec->kernel.flags.empty());
  EXPECT_TRUE(spec->params.empty());
  EXPECT_TRUE(spec->restrictions.empty());
  EXPECT_EQ(spec->reference.kind, ReferenceDecl::Kind::kNone);
  EXPECT_TRUE(spec->externs.empty());
  EXPECT_EQ(spec->seed, 0u);
  EXPECT_TRUE(spec->args[0].strides.empty());
  EXPECT_TRUE(spec->args[0].offset.empty());
  EXPECT_EQ(spec->problems[0].name, "n=1000");
  // Fields left out of tolerance come from the first output's dtype (f16 here).
  ASSERT_TRUE(spec->tolerance);
  EXPECT_EQ(spec->tolerance->atol, 0.5);
  EXPECT_EQ(spec->tolerance->rtol, default_tolerance(DType::kF16).rtol);
  EXPECT_EQ(spec->tolerance->max_rel_l2, default_tolerance(DType::kF16).max_rel_l2);
}

TEST(LoadSpec, ReferenceKernelAndMustache) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul_kernel_ref.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_TRUE(spec->kernel.mustache);
  EXPECT_FALSE(spec->tolerance);
  EXPECT_EQ(spec->reference.kind, ReferenceDecl::Kind::kKernel);
  EXPECT_EQ(spec->reference.kernel.source, (specs_dir() / "matmul_ref.cpp").lexically_normal());
  EXPECT_EQ(spec->reference.kernel.entry, "matmul_ref");
}

TEST(LoadSpec, QuotedParamValuesStayStrings) {
  Result<Spec> spec = spec_test::parse_inline(R"y(name: add
kernel: {source: add.cpp, entry: add}
args:
  - {name: C, role: out, dtype: f32, shape: [n]}
problems:
  - {n: 4}
params:
  A: [1, "2", -3, 1.5, float]
)y");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->params[0].values,
            (std::vector<ParamValue>{std::int64_t{1}, std::string("2"), std::int64_t{-3},
                                     std::string("1.5"), std::string("float")}));
}

TEST(LoadSpec, ExpressionsAndExternDefaultName) {
  Result<Spec> spec = spec_test::parse_inline(R"y(name: gemm
kernel: {source: add.cpp, entry: add}
args:
  - {name: C, role: out, dtype: f64, shape: [M, N]}
  - {name: A, role: in, dtype: f64, shape: ["max(M, K)", K + 1], strides: [K + 1, 1], offset: 2 * K}
  - {name: B, role: in, dtype: f64, shape: [K, N]}
  - {name: M, dtype: i64, value: M}
  - {name: N, dtype: int, value: N}
  - {name: K, dtype: i32, value: K}
problems:
  - {M: 4, N: 5, K: 6}
externs:
  - {kind: openblas.gemm, bind: {c: C, a: A, b: B, m: M, n: N, k: K, beta: 0.5}}
)y");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->args[1].shape, (std::vector<std::string>{"max(M, K)", "K + 1"}));
  EXPECT_EQ(spec->externs[0].name, "openblas_gemm");
  EXPECT_EQ(spec->externs[0].bind.back(), (std::pair<std::string, std::string>{"beta", "0.5"}));
}

TEST(LoadSpec, SpecSignatureFollowsArgs) {
  Result<Spec> spec = load_spec(specs_dir() / "matmul.yaml");
  ASSERT_TRUE(spec) << spec.error().message;
  Signature sig = spec_signature(*spec);
  ASSERT_EQ(sig.size(), 6u);
  EXPECT_EQ(sig[0].name, "C");
  EXPECT_EQ(sig[0].role, ArgRole::kOut);
  EXPECT_EQ(sig[5].name, "K");
  EXPECT_EQ(sig[5].role, ArgRole::kScalar);
  EXPECT_EQ(sig[5].dtype, DType::kI32);
}

}  // namespace
}  // namespace ktune
