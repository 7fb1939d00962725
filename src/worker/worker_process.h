// The process side of Worker (worker.h), private to the worker module: starting a ktune-worker
// child with its descriptors, environment and limits; ending and reaping it; naming how it ended;
// reading its memory use; and the bounded tail of what it printed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/unique_fd.h"
#include "ktune/core/status.h"
#include "worker/process_tree.h"
#include "worker/worker.h"

namespace ktune::worker_detail {

using Clock = std::chrono::steady_clock;

// Descriptors of the worker as the child sees them (passed as --in-fd / --out-fd).
inline constexpr int kChildRequestFd = 3;
inline constexpr int kChildResponseFd = 4;

// The last `capacity` bytes written to it, in constant memory whatever is written.
class OutputTail {
 public:
  explicit OutputTail(std::size_t capacity) : capacity_(capacity) {}
  void append(std::string_view data);
  void clear() {
    ring_.clear();
    head_ = 0;
  }
  [[nodiscard]] std::string str() const;

 private:
  std::size_t capacity_;
  std::string ring_;      // grows to capacity_, then wraps
  std::size_t head_ = 0;  // the oldest byte once the ring is full
};

// A started child: the parent's ends of its pipes, all CLOEXEC and non-blocking.
struct SpawnedWorker {
  pid_t pid = -1;
  UniqueFd request;   // parent writes requests here
  UniqueFd response;  // parent reads responses here
  UniqueFd output;    // parent reads the child's stdout and stderr here
};

// fork + execve of `executable` --in-fd 3 --out-fd 4 --parent-pid <ours> in its own process
// group, with SIGTERM as its parent-death signal, stdin from
// /dev/null, stdout and stderr on one pipe, every other descriptor closed, RLIMIT_CPU when asked,
// and the environment of worker.h. kNotFound or kIo when the executable cannot be run (reported
// by the child through a CLOEXEC pipe, so no pong timeout is needed to notice).
[[nodiscard]] Result<SpawnedWorker> spawn_worker(const std::filesystem::path& executable,
                                                 const WorkerOptions& options);

// Non-blocking reap; true when `pid` was reaped into `status`.
[[nodiscard]] bool try_reap(pid_t pid, int& status);
// Waits for `pid` to exit until `deadline`; true when reaped.
[[nodiscard]] bool reap_until(pid_t pid, int& status, Clock::time_point deadline);
// Kills the worker's descendants (kill_tree: in any group or session, and `known` ones seen
// earlier), then SIGTERM and SIGCONT to the group (a stopped worker acts on SIGTERM only once
// continued), `grace`, then SIGKILL; always reaps the leader and SIGKILLs what is left of the
// group.
void terminate_group(pid_t pid, std::chrono::milliseconds grace, int& status,
                     const std::vector<ProcessId>& known = {});
// SIGKILL to the whole tree and the group at once, then reap.
void kill_group(pid_t pid, int& status, const std::vector<ProcessId>& known = {});

// "SIGSEGV (Segmentation fault)".
[[nodiscard]] std::string signal_text(int signal);

}  // namespace ktune::worker_detail
