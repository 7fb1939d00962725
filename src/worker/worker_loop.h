// The body of ktune-worker: answer pings, and for each BenchmarkRequest load the artifact, build
// the inputs, run check_candidate() and, if it passes and measuring is asked, measure; answer
// with the outcome. Returns the process exit code when the parent closes the request pipe (0) or
// the protocol breaks (3).
// With a guard (ktune-worker's, after harden_worker), each request starts from a reset process
// state and a candidate that wrote to or replaced the decoy descriptors is answered as crashed,
// with restart set; every response echoes its request's nonce. When the parent `parent_pid`
// (> 0) is gone, the loop ends (exit code 3) instead of serving another request.
// With exit_at_end (ktune-worker), the parent's end of the request pipe ends the process at once
// (_exit(0) after flushing stdout and stderr) instead of returning: the devices' own teardown (a
// GPU context, library handles, loaded modules: about a tenth of a second, which the parent
// waits for) is left to the process's exit, which frees all of it. Nothing is pending then:
// every response is written, and trace events are written as they end.
#pragma once

#include <sys/types.h>

namespace ktune {

class CandidateGuard;

[[nodiscard]] int run_worker_loop(int in_fd, int out_fd, CandidateGuard* guard = nullptr,
                                  pid_t parent_pid = 0, bool exit_at_end = false);

}  // namespace ktune
