// Worker::State: one ktune-worker child as the parent holds it (its pipes, output tail, the
// descendants and threads it watches) and the parent's side of one exchange with it. Private to
// worker.cpp and worker_state.cpp.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/unique_fd.h"
#include "ktune/core/outcome.h"
#include "worker/process_tree.h"
#include "worker/worker.h"
#include "worker/worker_checks.h"
#include "worker/worker_process.h"

namespace ktune {
namespace worker_detail {

inline constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
inline constexpr int kMaxReadsPerWakeup = 64;  // 4 MiB of output, then the other pipes get a look

// How an exchange ended without a frame, or why its frame is not believed.
enum class LossKind { kDeadline, kClosed, kProtocol, kMemory, kForged, kLeftover };
struct Loss {
  LossKind kind;
  std::string detail;
};

}  // namespace worker_detail

struct Worker::State {
  using Clock = worker_detail::Clock;
  using Loss = worker_detail::Loss;

  WorkerOptions options;
  std::filesystem::path executable;
  pid_t pid = -1;
  bool alive = false;  // started, and every exchange so far ended with a frame
  UniqueFd request, response, output;
  worker_detail::OutputTail tail;
  std::string inbox;                           // response bytes read so far
  std::vector<worker_detail::ProcessId> seen;  // descendants seen since the last request
  bool had_descendants = false;                // at the last walk
  int looks = 0;
  worker_detail::ThreadWatch thread_watch;

  explicit State(const WorkerOptions& o) : options(o), tail(o.output_tail_bytes) {}
  ~State() { stop(); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  std::string who() const { return fmt::format("ktune-worker (pid {})", pid); }

  // Reads what the worker printed without blocking; closes the pipe at its end.
  void drain_output(int max_reads);
  // Notes the descendants, and checks the tree's memory when there is a limit.
  std::optional<Loss> watch_tree();
  // Sends `payload` as one frame and returns the next frame's payload.
  std::expected<std::string, Loss> exchange(std::string_view payload, Clock::time_point deadline);
  // How the worker ended, from its wait status.
  std::pair<Outcome, std::string> describe_exit(int status, std::string_view phase) const;
  // Ends the worker after a lost exchange, reaps it and says what happened.
  std::pair<Outcome, std::string> bury(const Loss& loss, std::chrono::milliseconds deadline,
                                       std::string_view phase);
  // Bytes the worker wrote after its answer (read now, without waiting).
  bool has_unasked_bytes();
  // After a believed answer: what the candidate left behind, as the loss it makes, if any.
  // `restart` is set when the worker should be replaced without blaming the candidate.
  std::optional<Loss> leftovers(bool host_code, bool& restart);
  void stop();
  void release();
  // True when the process has ended, without reaping it (bury or stop do that).
  bool exited() const;
};

}  // namespace ktune
