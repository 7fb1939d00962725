// run_process: runs a trusted program (a compiler) with a deadline, capturing its output.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

struct ProcessOptions {
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_output_bytes = 1 << 20;  // stdout+stderr kept (the tail), the rest dropped
  std::string working_dir;                 // empty: inherit
};

struct ProcessResult {
  int exit_code = -1;   // valid when exited normally
  int term_signal = 0;  // non-zero when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr interleaved (tail)
  double wall_s = 0;
  [[nodiscard]] bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// Starts argv[0] (searched in PATH) in its own process group; past the timeout the group gets
// SIGTERM, then SIGKILL after a grace period. Fails only if the program could not be started.
[[nodiscard]] Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                                const ProcessOptions& options = {});

}  // namespace ktune
