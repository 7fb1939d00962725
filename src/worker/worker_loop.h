// The body of ktune-worker: answer pings, and for each BenchmarkRequest load the artifact, build
// the inputs, run check_candidate() and, if it passes and measuring is asked, measure; answer
// with the outcome. Returns the process exit code when the parent closes the request pipe (0) or
// the protocol breaks (3).
#pragma once

namespace ktune {

[[nodiscard]] int run_worker_loop(int in_fd, int out_fd);

}  // namespace ktune
