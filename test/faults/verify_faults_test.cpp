// Issue 16, classes 1, 2, 3, 7 and 9 through the real CLI with isolation on: kernels that one
// verification call (right on the first call only, a race), one data set (a clamp, a wrapping
// integer part), unchecked timed runs (remembering the argument pointers) or a check of the
// view's elements alone (writes into a strided view's gaps or offset prefix, or an input's gap)
// would let through are each rejected with their outcome and the correct kernel wins; and a
// reference that crashes costs a worker, not ktune, and leaves no file in the temporary folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "faults/fault_support.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// spec.yaml over verify_faults.cpp, FAULT in `faults`, with the reference entry `reference`.
std::string write_verify_spec(const ScratchDir& dir, const std::vector<int>& faults,
                              const std::string& reference = "vadd_ref") {
  std::filesystem::copy_file(data_path("faults/verify_faults.cpp"),
                             dir.path() / "verify_faults.cpp",
                             std::filesystem::copy_options::overwrite_existing);
  return write_text(dir.path(), "spec.yaml",
                    fmt::format(R"(name: vadd
kernel: {{source: verify_faults.cpp, entry: vadd}}
args:
  - {{name: C, role: out, dtype: f32, shape: [n], strides: [2], offset: 1}}
  - {{name: A, role: in, dtype: f32, shape: [n], strides: [2]}}
  - {{name: B, role: in, dtype: f32, shape: [n]}}
  - {{name: n, dtype: i32, value: n}}
problems:
  - {{n: 4096}}
params:
  FAULT: [{}]
reference:
  kernel: {{source: verify_faults.cpp, entry: {}}}
)",
                                fmt::join(faults, ", "), reference));
}

struct Fault {
  int value;
  const char* name;
  const char* outcome;  // as printed in the AUTOTUNE table
  const char* detail;   // a substring of the message
};

class VerifyFault : public ::testing::TestWithParam<Fault> {};

TEST_P(VerifyFault, IsRejectedAndTheCorrectKernelWins) {
  const Fault& f = GetParam();
  ScratchDir dir(std::string("verify-fault-") + f.name);
  const std::string spec = write_verify_spec(dir, {0, f.value});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Selected vadd_FAULT0 "));
  const std::string row = fmt::format("vadd_FAULT{}", f.value);
  const auto at = r.output.find(row + " ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_THAT(line, HasSubstr(f.outcome)) << r.output;
  EXPECT_THAT(line, HasSubstr(f.detail)) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, VerifyFault,
    ::testing::Values(
        Fault{30, "first_call_only", "unwritten_output", "on the stress data set"},
        Fault{31, "clamps", "wrong_result", "on the stress data set"},
        Fault{32, "wrapping_integer_part", "wrong_result", "on the stress data set"},
        Fault{33, "remembers_pointers", "unwritten_output", "changed behaviour under timing"},
        Fault{34, "writes_a_gap", "redzone_violation", "outside the view of C: storage element 2"},
        Fault{35, "writes_the_prefix", "redzone_violation",
              "outside the view of C: storage element 0"},
        Fault{36, "racy", "wrong_result", "1 of 4096 elements differ"},
        Fault{37, "writes_an_input_gap", "input_modified", "A (storage element 4097)"},
        Fault{38, "skips_after_40_calls", "unwritten_output", "changed behaviour under timing"}),
    [](const auto& info) { return std::string(info.param.name); });

// The reference runs in a worker: one that crashes ends the tuning with a message, not ktune
// with the signal, and no reference file is written to the temporary folder.
TEST(VerifyFaults, ACrashingReferenceCostsAWorkerNotKtune) {
  ScratchDir dir("verify-reference-crash");
  ScratchDir tmp("verify-reference-tmp");
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  const std::string spec = write_verify_spec(dir, {0}, "vadd_ref_crash");
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("in a worker: crashed")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("SIGSEGV")) << r.output;

  const std::string good = write_verify_spec(dir, {0});
  r = run_cli(dir.path() / "cache", fault_tune_args(good));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("reference:")));
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr("ktune-reference"))) << e.path();
  }
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace ktune::test
