// Helpers of the fault-injection suite: a spec over faults.cpp with chosen FAULT values, tuned
// through the real CLI with isolation on (the default).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <utility>
#include <vector>

#include "support/cli_run.h"

namespace ktune::test {

using FaultParams = std::vector<std::pair<std::string, std::vector<int>>>;

// Writes spec.yaml (with `source`, a file of test/data/faults/, and faults_ref.cpp beside it):
// the add kernel of `source` on n floats, tuning `params` (name, values) in their order.
inline std::string write_fault_spec_params(const ScratchDir& dir, const std::string& source,
                                           const FaultParams& params, int n = 4096) {
  for (const std::string& f : {source, std::string("faults_ref.cpp")}) {
    std::filesystem::copy_file(data_path("faults/" + f), dir.path() / f,
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::string lines;
  for (const auto& [name, values] : params) {
    lines += fmt::format("  {}: [{}]\n", name, fmt::join(values, ", "));
  }
  return write_text(dir.path(), "spec.yaml",
                    fmt::format(R"(name: add
kernel: {{source: {}, entry: add}}
args:
  - {{name: C, role: out, dtype: f32, shape: [n]}}
  - {{name: A, role: in, dtype: f32, shape: [n]}}
  - {{name: B, role: in, dtype: f32, shape: [n]}}
  - {{name: n, dtype: i32, value: n}}
problems:
  - {{n: {}}}
params:
{}reference:
  kernel: {{source: faults_ref.cpp, entry: add_ref}}
)",
                                source, n, lines));
}

// The same, tuning one parameter, `param`, over `faults`.
inline std::string write_fault_spec_from(const ScratchDir& dir, const std::string& source,
                                         const std::vector<int>& faults,
                                         const std::string& param = "FAULT", int n = 4096) {
  return write_fault_spec_params(dir, source, {{param, faults}}, n);
}

// Writes spec.yaml (with faults.cpp and faults_ref.cpp beside it) tuning FAULT over `faults`.
inline std::string write_fault_spec(const ScratchDir& dir, const std::vector<int>& faults) {
  return write_fault_spec_from(dir, "faults.cpp", faults);
}

// Tuning flags that keep the suite quick: a 3 s deadline per candidate, a 256 MiB memory limit
// (small enough that the unbounded allocator reaches it well within the deadline on a loaded
// 2-core machine; with 1 GiB it sometimes timed out first).
inline std::vector<std::string> fault_tune_args(const std::string& spec) {
  return {"tune", spec, "--budget-ms", "5", "--run-timeout-ms", "3000", "--memory-limit-mb", "256"};
}

}  // namespace ktune::test
