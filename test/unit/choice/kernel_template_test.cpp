// KernelTemplate and its choices: rendering (defines, mustache without HTML escaping), names,
// hash keys, supports(), and a real compile/load/launch through CpuBackend with the code cache.
#include "ktune/choice/kernel_template.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "ktune/backend/cpu_backend.h"
#include "support/all_choices.h"
#include "support/temp_dir.h"

namespace ktune {

using test::all_choices;
using test::all_configs;
namespace {

using namespace std::chrono_literals;

Signature axpy_signature() {
  return {{"y", ArgRole::kInOut, DType::kF32},
          {"x", ArgRole::kIn, DType::kF32},
          {"n", ArgRole::kScalar, DType::kI64}};
}

KernelTemplateDesc axpy_desc(bool mustache = false) {
  KernelTemplateDesc d;
  d.name = "axpy";
  d.entry = "axpy";
  d.signature = axpy_signature();
  d.mustache = mustache;
  d.source = mustache ? "void axpy(float* y, const float* x, long n) {\n"
                        "  for (long i = 0; i < n; ++i) y[i] += {{SCALE}} * x[i] + UNROLL;\n}\n"
                      : "void axpy(float* y, const float* x, long n) {\n"
                        "  for (long i = 0; i < n; ++i) y[i] += SCALE * x[i] + UNROLL;\n}\n";
  return d;
}

SearchSpace space(std::vector<Param> params, std::vector<std::string> restrictions = {}) {
  auto s = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(s.has_value());
  return std::move(*s);
}

SearchSpace axpy_space() {
  return space({{"SCALE", {std::int64_t{2}, std::int64_t{3}}}, {"UNROLL", {std::int64_t{1}}}});
}

Config config(std::vector<std::string> names, std::vector<ParamValue> values) {
  Config c;
  c.names = std::move(names);
  c.values = std::move(values);
  return c;
}

Problem axpy_problem(std::int64_t n, DType dtype = DType::kF32) {
  Problem p;
  p.op = "axpy";
  p.args.push_back({{"y", ArgRole::kInOut, dtype}, TensorSpec::contiguous(dtype, {n}), {}});
  p.args.push_back({{"x", ArgRole::kIn, dtype}, TensorSpec::contiguous(dtype, {n}), {}});
  p.args.push_back({{"n", ArgRole::kScalar, DType::kI64}, {}, ScalarValue{n}});
  return p;
}

TEST(KernelTemplate, RenderPassesParametersAsDefines) {
  auto t = KernelTemplate::create(axpy_desc(), axpy_space());
  auto src = t->render(config({"SCALE", "UNROLL"}, {std::int64_t{3}, std::int64_t{1}}));
  ASSERT_TRUE(src.has_value()) << src.error().message;
  EXPECT_EQ(src->name, "axpy_SCALE3_UNROLL1");
  EXPECT_EQ(src->code, axpy_desc().source);
  EXPECT_EQ(src->entry, "axpy");
  using Defines = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(src->defines, (Defines{{"SCALE", "3"}, {"UNROLL", "1"}}));
  EXPECT_EQ(src->signature.size(), 3u);
}

TEST(KernelTemplate, MustacheRendersWithoutHtmlEscaping) {
  KernelTemplateDesc d = axpy_desc(true);
  d.source = "// {{CMP}} {{{CMP}}} {{TYPE}}\nconst int k = {{SCALE}};{{#SCALE}}{{/SCALE}}";
  auto t = KernelTemplate::create(d, space({{"SCALE", {std::int64_t{4}}},
                                            {"CMP", {std::string("a<b&&c>\"d\"")}},
                                            {"TYPE", {std::string("float")}}}));
  auto src = t->render(all_configs(t->space()).at(0));
  ASSERT_TRUE(src.has_value()) << src.error().message;
  EXPECT_EQ(src->code, "// a<b&&c>\"d\" a<b&&c>\"d\" float\nconst int k = 4;");
  EXPECT_EQ(src->name, "axpy_SCALE4_CMPa_b__c__d__TYPEfloat");  // greppable characters only
}

TEST(KernelTemplate, MustacheSyntaxErrorIsInvalidArgument) {
  KernelTemplateDesc d = axpy_desc(true);
  d.source = "{{#SCALE}} never closed";
  auto t = KernelTemplate::create(d, axpy_space());
  auto src = t->render(all_configs(t->space()).at(0));
  ASSERT_FALSE(src.has_value());
  EXPECT_EQ(src.error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(src.error().message.starts_with("axpy_SCALE2_UNROLL1: mustache: "))
      << src.error().message;
}

TEST(KernelTemplate, ChoicesFollowTheSpaceWithProceduralNames) {
  KernelTemplateDesc d = axpy_desc();
  d.name = "matmul";
  auto t = KernelTemplate::create(d, space({{"TILE_M", {std::int64_t{16}, std::int64_t{32}}},
                                            {"TILE_N", {std::int64_t{32}, std::int64_t{64}}}},
                                           {"TILE_M * TILE_N <= 1024"}));
  std::vector<ChoicePtr> choices = all_choices(t);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(choices[0]->name(), "matmul_TILE_M16_TILE_N32");
  EXPECT_EQ(choices[1]->name(), "matmul_TILE_M16_TILE_N64");
  EXPECT_EQ(choices[2]->name(), "matmul_TILE_M32_TILE_N32");
  EXPECT_EQ(choices[2]->info(), "TILE_M=32 TILE_N=32");
  // The parameters the tuning cache records, in the space's order.
  using Params = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(choices[1]->params(), (Params{{"TILE_M", "16"}, {"TILE_N", "64"}}));
  EXPECT_EQ(choices[0]->kind(), Choice::Kind::kTemplate);
  EXPECT_EQ(t->choice(Config{})->name(), "matmul");
}

TEST(KernelTemplate, HashKeyFollowsWhatWouldRun) {
  auto t = KernelTemplate::create(axpy_desc(), axpy_space());
  auto choices = all_choices(t);
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_NE(choices[0]->hash_key(), choices[1]->hash_key());
  EXPECT_EQ(choices[0]->hash_key(), all_choices(t)[0]->hash_key());  // stable

  KernelTemplateDesc flagged = axpy_desc();
  flagged.extra_flags = {"-ffast-math"};
  auto t2 = KernelTemplate::create(flagged, axpy_space());
  EXPECT_NE(all_choices(t2)[0]->hash_key(), choices[0]->hash_key());
  KernelTemplateDesc edited = axpy_desc();
  edited.source += "// edited\n";
  auto t3 = KernelTemplate::create(edited, axpy_space());
  EXPECT_NE(all_choices(t3)[0]->hash_key(), choices[0]->hash_key());
}

TEST(KernelTemplate, SupportsNamesTheFirstMismatch) {
  auto t = KernelTemplate::create(axpy_desc(), axpy_space());
  ChoicePtr c = std::move(all_choices(t).at(0));
  EXPECT_TRUE(c->supports(axpy_problem(8)).has_value());

  auto wrong_dtype = c->supports(axpy_problem(8, DType::kF64));
  ASSERT_FALSE(wrong_dtype.has_value());
  EXPECT_EQ(wrong_dtype.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(wrong_dtype.error().message,
            "axpy_SCALE2_UNROLL1: argument 0 ('y'); expected inout f32, got inout f64 ('y')");

  Problem short_problem = axpy_problem(8);
  short_problem.args.pop_back();
  auto wrong_count = c->supports(short_problem);
  ASSERT_FALSE(wrong_count.has_value());
  EXPECT_NE(wrong_count.error().message.find("expected 3"), std::string::npos)
      << wrong_count.error().message;
}

class TemplateChoiceRun : public ::testing::Test {
 protected:
  void SetUp() override {
    CpuCompileOptions o;
    o.flags = {"-O1", "-shared", "-fPIC", "-std=c++17"};
    o.timeout = 60s;
    auto b = CpuBackend::create(o, dir_.path());
    ASSERT_TRUE(b.has_value()) << b.error().message;
    backend_.emplace(std::move(*b));
  }
  test::TempDir dir_;
  std::optional<CpuBackend> backend_;
};

TEST_F(TemplateChoiceRun, CompilesLoadsAndRuns) {
  for (bool mustache : {false, true}) {
    SCOPED_TRACE(mustache ? "mustache" : "defines");
    auto t = KernelTemplate::create(axpy_desc(mustache), axpy_space());
    ChoicePtr c = std::move(all_choices(t).at(1));  // SCALE=3
    ASSERT_TRUE(c->compile(*backend_).has_value());
    EXPECT_GT(c->compile_s(), 0);
    Problem p = axpy_problem(4);
    auto fn = c->load(*backend_, p);
    ASSERT_TRUE(fn.has_value()) << fn.error().message;
    std::vector<float> y = {1, 1, 1, 1}, x = {1, 2, 3, 4};
    std::int64_t n = 3;
    void* args[] = {y.data(), x.data(), &n};
    ASSERT_TRUE((*fn)(args).has_value());
    EXPECT_EQ(y, (std::vector<float>{5, 8, 11, 1}));

    // The same choice built again comes from the code cache.
    ChoicePtr again = std::move(all_choices(t).at(1));
    ASSERT_TRUE(again->compile(*backend_).has_value());
    EXPECT_EQ(again->compile_s(), 0);
  }
}

TEST_F(TemplateChoiceRun, CompileErrorAndUnsupportedLoadAreReported) {
  KernelTemplateDesc d = axpy_desc();
  d.source = "void axpy(float* y, const float* x, long n) { undeclared(); }\n";
  auto t = KernelTemplate::create(d, axpy_space());
  ChoicePtr c = std::move(all_choices(t).at(0));
  auto s = c->compile(*backend_);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kCompile);
  EXPECT_TRUE(s.error().message.starts_with("axpy_SCALE2_UNROLL1: compiler exited with"))
      << s.error().message;

  ChoicePtr good = std::move(all_choices(KernelTemplate::create(axpy_desc(), axpy_space())).at(0));
  auto fn = good->load(*backend_, axpy_problem(4, DType::kF64));
  ASSERT_FALSE(fn.has_value());
  EXPECT_EQ(fn.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ktune
