// kernel.language cuda/opencl, kernel.launch, size_defines, and restrictions over problem sizes
// and device limits: what the parser accepts and refuses, and the candidates built per problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spec/spec_sections.h"
#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using ::testing::HasSubstr;

// A CUDA spec over add.cpp's folder (the source's contents are not read by the parser).
std::string device_spec(const std::string& language, const std::string& kernel_extra,
                        const std::string& tail = "") {
  return "name: dev\n"
         "kernel:\n"
         "  language: " +
         language +
         "\n"
         "  source: add.cpp\n" +
         kernel_extra +
         "args:\n"
         "  - {name: y, role: out, dtype: f32, shape: [n]}\n"
         "  - {name: x, role: in, dtype: f32, shape: [n]}\n"
         "  - {name: count, role: scalar, dtype: i32, value: n}\n"
         "problems:\n"
         "  - {n: 1000}\n"
         "  - {n: 64}\n"
         "params:\n"
         "  B: [32, 64, 128, 2048]\n"
         "  I: [1, 2]\n" +
         tail;
}

const std::string kCudaKernel =
    "  entry: scale<{{B}}, {{I}}>\n"
    "  launch: {grid: [ceil_div(n, B * I)], block: [B]}\n";

TEST(SpecLaunch, CudaKernelParsesItsLaunchAndEntry) {
  Result<Spec> spec = parse_inline(device_spec("cuda", kCudaKernel));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->kernel.language, "cuda");
  ASSERT_EQ(spec->kernel.launch.size(), 1u);
  // YAML split the flow list at the comma inside ceil_div(...): joined back.
  ASSERT_EQ(spec->kernel.launch[0].grid.size(), 1u);
  EXPECT_EQ(spec->kernel.launch[0].grid[0], "ceil_div(n, B * I)");
  EXPECT_EQ(spec->kernel.launch[0].entry, "scale<{{B}}, {{I}}>");
  EXPECT_TRUE(spec_choices_per_problem(*spec));
}

TEST(SpecLaunch, CandidatesArePerProblemAndOverLimitConfigsAreLeftOut) {
  Result<Spec> spec = parse_inline(device_spec("cuda", kCudaKernel));
  ASSERT_TRUE(spec) << spec.error().message;
  // Without a problem: refused, saying why.
  Result<SpecChoices> none = make_spec_choices(*spec);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("built per problem"));

  const DeviceLimits limits = {{"max_threads_per_block", 1024}, {"warp_size", 32}};
  Result<SpecChoices> c = make_spec_choices(*spec, {}, SpecTarget{limits, &spec->problems[0]});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->candidates.size(), 6u);  // B = 2048 is over 1024 threads: 2 configs out
  EXPECT_EQ(c->over_limits, 2u);
  EXPECT_THAT(c->over_limits_example, HasSubstr("2048 threads per block > max_threads_per_block"));

  // The entry is rendered per config and handed to NVRTC as a name expression.
  Result<std::vector<Config>> configs = c->kernel_template->space().enumerate();
  ASSERT_TRUE(configs);
  Result<KernelSource> src = c->kernel_template->render(configs->front());
  ASSERT_TRUE(src);
  EXPECT_EQ(src->name_expressions, std::vector<std::string>{"scale<32, 1>"});
  // Built for n=1000: the other problem is unsupported, not silently launched with this grid.
  Result<Problem> other = make_problem(*spec, spec->problems[1]);
  ASSERT_TRUE(other);
  Status s = c->candidates[0]->supports(*other);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("built for problem n=1000"));
}

TEST(SpecLaunch, OpenCLGridCountsWorkGroupsAndBecomesTheGlobalSize) {
  Result<Spec> spec = parse_inline(
      device_spec("opencl", "  entry: scale\n  launch: {grid: [ceil_div(n, B)], block: [B]}\n"));
  ASSERT_TRUE(spec) << spec.error().message;
  Config config{{"B", "I"}, {std::int64_t{64}, std::int64_t{1}}};
  Result<std::vector<LaunchGeometry>> g =
      spec_detail::eval_launch(*spec, spec->kernel, spec->problems[0], config);
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0].grid[0], 16u * 64u);  // ceil(1000 / 64) = 16 groups of 64 work-items
  EXPECT_EQ((*g)[0].block[0], 64u);
  // Problems on the OpenCL device.
  Result<Problem> p = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->args[0].tensor.device.kind, DeviceKind::kOpenCL);
}

TEST(SpecLaunch, AFractionalGridIsThatConfigsUnsupportedReason) {
  Result<Spec> spec =
      parse_inline(device_spec("cuda", "  entry: k\n  launch: {grid: [n / B], block: [B]}\n"));
  ASSERT_TRUE(spec) << spec.error().message;
  Config config{{"B", "I"}, {std::int64_t{64}, std::int64_t{1}}};
  auto g = spec_detail::eval_launch(*spec, spec->kernel, spec->problems[0], config);
  ASSERT_FALSE(g);
  EXPECT_THAT(g.error().message, HasSubstr("not a whole number"));
  EXPECT_THAT(g.error().message, HasSubstr("n / B"));
}

TEST(SpecLaunch, RestrictionsSeeProblemSizesDeviceLimitsAndStrings) {
  Result<Spec> spec = parse_inline(device_spec("cuda", kCudaKernel + "  size_defines: [n]\n",
                                               "  S: [fast, safe]\n"
                                               "restrictions:\n"
                                               "  - B * I <= n\n"
                                               "  - B <= max_threads_per_block / 8\n"
                                               "  - S == \"fast\" || I == 1\n"));
  ASSERT_TRUE(spec) << spec.error().message;
  const DeviceLimits limits = {{"max_threads_per_block", 1024}};
  // n = 64: B * I <= 64 leaves (32,1), (32,2), (64,1); times S with the last restriction.
  Result<SpecChoices> small = make_spec_choices(*spec, {}, SpecTarget{limits, &spec->problems[1]});
  ASSERT_TRUE(small) << small.error().message;
  EXPECT_EQ(small->candidates.size(), 5u);
  // n = 1000: B <= 128 by the limit restriction.
  Result<SpecChoices> big = make_spec_choices(*spec, {}, SpecTarget{limits, &spec->problems[0]});
  ASSERT_TRUE(big) << big.error().message;
  EXPECT_EQ(big->candidates.size(), 9u);
  EXPECT_EQ(big->over_limits, 4u);  // B = 2048 with each I and S, removed at B
  // size_defines: the size reaches the source.
  EXPECT_THAT(big->kernel_template->desc().extra_flags, testing::Contains("-Dn=1000"));
}

TEST(SpecLaunch, ACppKernelWithSizeDefinesIsBuiltPerProblem) {
  Result<Spec> spec = parse_inline(device_spec("c++", "  entry: add\n  size_defines: [n]\n"));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_TRUE(spec_choices_per_problem(*spec));
  Result<SpecChoices> c = make_spec_choices(*spec, {}, SpecTarget{{}, &spec->problems[1]});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_THAT(c->kernel_template->desc().extra_flags, testing::Contains("-Dn=64"));
  Result<Problem> own = make_problem(*spec, spec->problems[1]);
  Result<Problem> other = make_problem(*spec, spec->problems[0]);
  ASSERT_TRUE(own && other);
  EXPECT_TRUE(c->candidates[0]->supports(*own));
  Status s = c->candidates[0]->supports(*other);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("built for problem n=64, not n=1000"));
}

struct Bad {
  const char* label;
  std::string text;
  std::string message;  // a substring of the error
};
void PrintTo(const Bad& c, std::ostream* os) { *os << c.label; }
class BadLaunch : public testing::TestWithParam<Bad> {};

TEST_P(BadLaunch, IsAPositionedError) {
  Result<Spec> spec = parse_inline(GetParam().text);
  ASSERT_FALSE(spec) << "accepted:\n" << GetParam().text;
  EXPECT_THAT(spec.error().message, HasSubstr(GetParam().message));
  EXPECT_THAT(spec.error().message, HasSubstr("inline.yaml:"));
}

INSTANTIATE_TEST_SUITE_P(
    Schema, BadLaunch,
    testing::Values(
        Bad{"unknown_language", device_spec("hip", kCudaKernel),
            "unsupported language 'hip'; expected one of c++, cuda, opencl"},
        Bad{"no_launch", device_spec("cuda", "  entry: k\n"), "missing 'launch'"},
        Bad{"launch_on_cpp", device_spec("c++", "  entry: k\n  launch: {grid: [1]}\n"),
            "launch is for language cuda or opencl"},
        Bad{"unknown_symbol",
            device_spec("cuda", "  entry: k\n  launch: {grid: [m], block: [B]}\n"),
            "kernel.launch.grid[0]: unknown name 'm'"},
        Bad{"zero_grid", device_spec("cuda", "  entry: k\n  launch: {grid: [0], block: [B]}\n"),
            "'0' is 0; expected a whole number >= 1"},
        Bad{"four_dims",
            device_spec("cuda", "  entry: k\n  launch: {grid: [1, 1, 1, 1], block: [B]}\n"),
            "expected 1 to 3 expressions; got 4"},
        Bad{"bad_cuda_entry", device_spec("cuda", "  entry: \"k<1; x\"\n  launch: {grid: [1]}\n"),
            "kernel.entry: 'k<1; x'"},
        Bad{"entry_unknown_param",
            device_spec("cuda", "  entry: k<{{TILE}}>\n  launch: {grid: [1]}\n"),
            "'{{TILE}}' in 'k<{{TILE}}>' is not a parameter"},
        Bad{"opencl_template_entry",
            device_spec("opencl", "  entry: k<{{B}}>\n  launch: {grid: [1]}\n"),
            "kernel.entry: 'k<{{B}}>' is not an identifier"},
        Bad{"opencl_shared_bytes",
            device_spec("opencl", "  entry: k\n  launch: {grid: [1], shared_bytes: 64}\n"),
            "dynamic shared memory is for cuda kernels"},
        Bad{"size_define_unknown", device_spec("cuda", kCudaKernel + "  size_defines: [FW]\n"),
            "'FW' is not a problem size"},
        Bad{"restriction_unknown_name",
            device_spec("cuda", kCudaKernel, "restrictions:\n  - B <= nope\n"),
            "unknown name 'nope'"},
        Bad{"cpp_restriction_device_limit",
            device_spec("c++", "  entry: k\n", "restrictions:\n  - B <= warp_size\n"),
            "unknown name 'warp_size'"},
        Bad{"step_without_entry",
            device_spec("cuda", "  launch: [{entry: a, grid: [1]}, {grid: [1]}]\n"),
            "kernel.launch[1]: missing 'entry'"}));

}  // namespace
}  // namespace ktune
