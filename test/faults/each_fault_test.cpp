// Each planted fault, alone beside a correct kernel: it is classified, tuning completes, the
// correct kernel wins, and the tuning cache holds the fault's outcome.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faults/fault_support.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

struct Fault {
  int value;
  const char* name;
  const char* outcome;  // as printed in the AUTOTUNE table and stored in the cache
  const char* detail;   // a substring of the message
};

class EachFault : public ::testing::TestWithParam<Fault> {};

TEST_P(EachFault, CostsOnlyItsCandidate) {
  const Fault& f = GetParam();
  ScratchDir dir(std::string("fault-") + f.name);
  const std::string spec = write_fault_spec(dir, {0, f.value});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Selected add_FAULT0 "));
  const std::string row = fmt::format("add_FAULT{}", f.value);
  const auto at = r.output.find(row + " ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_THAT(line, HasSubstr(f.outcome));
  EXPECT_THAT(line, HasSubstr(f.detail));

  CliResult exported = run_cli(dir.path() / "cache", {"cache", "export", "-"});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr(fmt::format("\"outcome\": \"{}\"", f.outcome)));
}

INSTANTIATE_TEST_SUITE_P(
    Faults, EachFault,
    ::testing::Values(Fault{10, "segfault", "crashed", "SIGSEGV"},
                      Fault{11, "abort", "crashed", "SIGABRT"},
                      Fault{12, "exit0", "crashed", "status 0"},
                      Fault{13, "infinite_loop", "timed_out", "no answer within"},
                      Fault{14, "sleep", "timed_out", "no answer within"},
                      Fault{15, "one_past_end", "redzone_violation", "C"},
                      Fault{16, "far_out_of_bounds", "crashed", "SIGSEGV"},
                      Fault{17, "writes_input", "input_modified", "A"},
                      Fault{18, "partial_output", "unwritten_output", "unwritten"},
                      Fault{19, "nan", "nan_output", "NaN"},
                      Fault{20, "wrong_value", "wrong_result", "differ"},
                      Fault{21, "unbounded_memory", "resource_exhausted", "limit"},
                      Fault{23, "closes_protocol_fd", "crashed", "descriptor 3 was closed"},
                      Fault{24, "sigstop", "timed_out", "no answer within"}),
    [](const auto& info) { return std::string(info.param.name); });

// Printing megabytes is not a fault of the result: the kernel is correct and must stay valid,
// and the flood must neither block the worker nor fill ktune's memory.
TEST(Faults, PrintingMegabytesStaysValid) {
  ScratchDir dir("fault-print");
  const std::string spec = write_fault_spec(dir, {0, 22});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 candidates (2 valid, 0 failed)"));
  EXPECT_LT(r.output.size(), 64u << 10);  // the kernel's output is not ktune's
}

}  // namespace
}  // namespace ktune::test
