// End to end through the real CLI and its workers: an output's own tolerance, NaN as a legal
// output (nan_ok), input data from a .npy file, and a scratch buffer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/cli_run.h"
#include "support/npy_write.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void replace(std::string& text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// log(x) over [-1, 1): half of Y is NaN, legal (nan_ok); Z's own tolerance lets UNROLL = 4's
// 1e-3 error through. The planted configs fail: NaN where the reference has a number, a number
// where it has NaN.
TEST(TolCli, NanOkAndAnOutputsOwnToleranceTune) {
  ScratchDir cache("tol-lognan");
  CliResult r = run_cli(cache.path(), {"tune", data_path("tol/lognan.yaml"), "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("6 candidates (2 valid, 4 failed)"));
  EXPECT_THAT(r.output, HasSubstr("lognan_UNROLL1_PLANT1  nan_output"));
  EXPECT_THAT(r.output, HasSubstr("lognan_UNROLL4_PLANT1  nan_output"));
  EXPECT_THAT(r.output, HasSubstr("lognan_UNROLL1_PLANT2  wrong_result"));
  EXPECT_THAT(r.output, HasSubstr("first at [4]: 0 vs -nan"));
  EXPECT_THAT(r.output, HasSubstr("Selected lognan_UNROLL"));
  EXPECT_THAT(r.output, Not(HasSubstr("Selected lognan_UNROLL1_PLANT1")));
}

// The same spec with Z at the spec-level default and Y without nan_ok: the reference's own NaN
// stops everything (today's behaviour), and without Z's tolerance UNROLL = 4 is wrong.
TEST(TolCli, WithoutTheOutputChecksNothingIsLegal) {
  ScratchDir dir("tol-strict");
  std::string spec = read_text(data_path("tol/lognan.yaml"));
  replace(spec, "source: lognan.cpp", "source: " + data_path("tol/lognan.cpp"));
  replace(spec, "source: lognan_ref.cpp", "source: " + data_path("tol/lognan_ref.cpp"));
  std::string no_nan = spec;
  replace(no_nan, ", nan_ok: true", "");
  CliResult r = run_cli(dir.path() / "c1", {"tune", write_text(dir.path(), "a.yaml", no_nan)});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nan_output"));
  EXPECT_THAT(r.output, HasSubstr("Tuned 0 problem(s)"));

  std::string no_tol = spec;
  replace(no_tol, ", tolerance: {rtol: 1e-2, max_rel_l2: 1e-2}", "");
  r = run_cli(dir.path() / "c2",
              {"tune", write_text(dir.path(), "b.yaml", no_tol), "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("6 candidates (1 valid, 5 failed)"));
  EXPECT_THAT(r.output, HasSubstr("lognan_UNROLL4_PLANT0  wrong_result      output Z"));
}

// X from a .npy file next to the spec (half of it negative): it tunes with nan_ok and Z's
// tolerance; unchanged, the second run is the tuning cache's; the file edited, it is another
// problem and tunes again.
TEST(TolCli, NpyInputTunesAndItsContentIsTheKey) {
  ScratchDir dir("tol-npy");
  std::string spec = read_text(data_path("tol/lognan.yaml"));
  replace(spec, "source: lognan.cpp", "source: " + data_path("tol/lognan.cpp"));
  replace(spec, "source: lognan_ref.cpp", "source: " + data_path("tol/lognan_ref.cpp"));
  replace(spec, "init: {uniform: {low: -1, high: 1}}", "init: {npy: data/x.npy}");
  const std::string spec_path = write_text(dir.path(), "spec.yaml", spec);
  std::vector<float> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / 2048.0f - 1.0f;
  write_bytes(dir.path() / "data" / "x.npy", npy_bytes(npy_dict("<f4", "(4096,)"), raw_bytes(x)));

  const auto cache = dir.path() / "cache";
  CliResult r = run_cli(cache, {"tune", spec_path, "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("6 candidates (2 valid, 4 failed)"));
  EXPECT_THAT(r.output, HasSubstr("(0 from the tuning cache)"));
  r = run_cli(cache, {"tune", spec_path, "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(1 from the tuning cache)"));

  x[0] = 0.25f;
  write_bytes(dir.path() / "data" / "x.npy", npy_bytes(npy_dict("<f4", "(4096,)"), raw_bytes(x)));
  r = run_cli(cache, {"tune", spec_path, "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(0 from the tuning cache)"));

  // The wrong shape is the spec's error, before anything is compiled.
  write_bytes(dir.path() / "data" / "x.npy", npy_bytes(npy_dict("<f4", "(64, 64)"), raw_bytes(x)));
  r = run_cli(cache, {"tune", spec_path});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("shape (64, 64); expected the argument's shape (4096)"));
}

// Partial sums in a scratch buffer: never compared, but poisoned before every run, so the
// configs that assume it starts at zero fail.
TEST(TolCli, ScratchIsPoisonedAndNeverCompared) {
  ScratchDir cache("tol-scratch");
  CliResult r = run_cli(cache.path(), {"tune", data_path("tol/psum.yaml"), "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("4 candidates (2 valid, 2 failed)"));
  EXPECT_THAT(r.output, HasSubstr("psum_BLOCKS8_ASSUME_ZEROS1   unwritten_output"));
  EXPECT_THAT(r.output, Not(HasSubstr("wrote into input")));
  EXPECT_THAT(r.output, HasSubstr("Selected psum_BLOCKS"));
  EXPECT_THAT(r.output, Not(HasSubstr("ASSUME_ZEROS=1)")));
}

}  // namespace
}  // namespace ktune::test

namespace ktune::test {
namespace {

// reference.expected on the CPU: x from a file, y's expected values from another; the config
// that gets one element wrong fails against the file, isolated and in ktune's own process alike
// (the reference file reaches the workers). A second run is a cache hit: the files' digests key it.
TEST(TolCli, ExpectedOutputsFromAFileVerifyCandidates) {
  ScratchDir cache("expected-npy");
  const std::vector<std::string> args = {"tune", data_path("opencl_spec/expected_cpu.yaml"),
                                         "--budget-ms", "2"};
  CliResult r = run_cli(cache.path(), args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("4 candidates (2 valid, 2 failed)"));
  EXPECT_THAT(r.output, HasSubstr("scale_expected_cpu_UNROLL4_FAULT3  wrong_result"));
  EXPECT_THAT(r.output, HasSubstr("first at [500]: 1501 vs 1000"));
  EXPECT_THAT(r.output, HasSubstr("Selected scale_expected_cpu_UNROLL"));
  EXPECT_THAT(r.output, Not(HasSubstr("no reference")));
  CliResult again = run_cli(cache.path(), args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("from the tuning cache"));
}

}  // namespace
}  // namespace ktune::test
