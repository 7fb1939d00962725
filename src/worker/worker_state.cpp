// Worker::State (worker_state.h): the parent's side of the protocol with one ktune-worker child.
//
// Every exchange (the ping at start, each request) is one poll() loop over the response pipe, the
// worker's output and, until the frame is written, the request pipe; it ends at a complete frame
// or at the deadline. The output is drained all along into a fixed-size tail, so that a kernel
// printing megabytes never blocks the worker nor grows memory here. The loop also wakes every
// 10 ms to note the worker's descendants (so that they can be killed even after the worker dies
// and they are re-parented away) and, with a memory limit, to add up the resident memory of the
// worker's whole tree.
//
// A forged answer or a leftover (Worker::run, worker.cpp) ends the worker with its whole tree:
// descendants are killed first, and those seen while it ran even once re-parented away.
//
// SIGPIPE: the request pipe is written with SIGPIPE blocked in the calling thread only, and a
// SIGPIPE that the write raised is consumed (sigtimedwait), so a dead worker shows as EPIPE while
// ktune's own signal dispositions stay untouched.
#include "worker/worker_state.h"

#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <expected>
#include <optional>
#include <system_error>

#include "core/proc_files.h"
#include "worker/process_tree.h"
#include "worker/worker_checks.h"
#include "worker/worker_process.h"

namespace ktune {
namespace {

using worker_detail::Clock;
using worker_detail::kMaxReadsPerWakeup;
using worker_detail::kReadChunk;
using worker_detail::Loss;
using worker_detail::LossKind;

constexpr std::chrono::milliseconds kWatchInterval{10};
// While the worker has no descendants, its tree is walked only every 5th look (about 60 us a
// walk on a loaded 2-core machine); with descendants, at every look.
constexpr int kTreeWalkEvery = 5;

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

std::unexpected<Loss> lost(LossKind kind, std::string detail = {}) {
  return std::unexpected(Loss{kind, std::move(detail)});
}

ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ::sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const ssize_t n = ::write(fd, data, size);
  const int e = errno;
  if (n < 0 && e == EPIPE && !was_pending) {
    const timespec zero{};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = e;
  return n;
}

int ms_until(Clock::time_point t) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, 1 << 30));
}

}  // namespace

void Worker::State::drain_output(int max_reads) {
  char buf[kReadChunk];
  for (int i = 0; output && i < max_reads; ++i) {
    const ssize_t n = ::read(output.get(), buf, sizeof buf);
    if (n > 0) {
      tail.append({buf, static_cast<std::size_t>(n)});
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      output.reset();
    } else if (errno == EAGAIN) {
      return;
    }
  }
}

std::optional<Loss> Worker::State::watch_tree() {
  std::vector<worker_detail::ProcessId> now;
  std::optional<worker_detail::TreeMemory> use;
  const bool walk = had_descendants || ++looks % kTreeWalkEvery == 0;
  if (options.memory_limit_bytes > 0 && walk) {
    use = worker_detail::tree_memory(pid, &now);
  } else if (options.memory_limit_bytes > 0) {
    if (const std::optional<ProcMemory> own = read_proc_memory(pid)) {
      use = worker_detail::TreeMemory{own->resident_bytes, own->virtual_bytes, 1};
    }
  } else if (walk) {
    now = worker_detail::descendants(pid);
  }
  if (walk) had_descendants = !now.empty();
  for (const worker_detail::ProcessId& p : now) {
    if (std::find(seen.begin(), seen.end(), p) == seen.end()) seen.push_back(p);
  }
  if (options.memory_limit_bytes == 0) return std::nullopt;
  // Resident memory is what hurts the machine; address space alone does not (glibc arenas and
  // GPU runtimes reserve gigabytes untouched), so it is only reported. A candidate's child
  // processes count: a limit on the worker alone would be escaped by forking.
  if (!use || use->resident_bytes <= options.memory_limit_bytes) return std::nullopt;
  return Loss{LossKind::kMemory,
              fmt::format("used {} MiB, limit {} MiB (resident, {} process(es) of its tree; "
                          "{} MiB of address space)",
                          use->resident_bytes >> 20, options.memory_limit_bytes >> 20,
                          use->processes, use->virtual_bytes >> 20)};
}

std::expected<std::string, Loss> Worker::State::exchange(std::string_view payload,
                                                         Clock::time_point deadline) {
  if (!inbox.empty()) {
    return lost(LossKind::kProtocol, fmt::format("sent {} bytes unasked", inbox.size()));
  }
  const std::string frame = encode_frame(payload);
  std::size_t written = 0;
  Clock::time_point next_watch = Clock::now();
  char buf[kReadChunk];
  for (;;) {
    if (inbox.size() >= 4) {
      const std::uint32_t n = frame_length(inbox);
      if (n > kMaxFrameBytes) {
        return lost(LossKind::kProtocol,
                    fmt::format("a frame of {} bytes; at most {} expected", n, kMaxFrameBytes));
      }
      if (inbox.size() >= 4 + std::size_t{n}) {
        std::string message = inbox.substr(4, n);
        inbox.erase(0, 4 + std::size_t{n});
        return message;
      }
    }
    const Clock::time_point now = Clock::now();
    if (now >= next_watch) {
      if (std::optional<Loss> loss = watch_tree()) return std::unexpected(std::move(*loss));
      next_watch = now + kWatchInterval;
    }
    if (now >= deadline) return lost(LossKind::kDeadline);

    pollfd fds[3];
    nfds_t count = 0;
    fds[count++] = {response.get(), POLLIN, 0};
    const nfds_t out_at = output ? count++ : 3;
    if (out_at < 3) fds[out_at] = {output.get(), POLLIN, 0};
    const nfds_t req_at = written < frame.size() ? count++ : 3;
    if (req_at < 3) fds[req_at] = {request.get(), POLLOUT, 0};
    if (::poll(fds, count, ms_until(std::min(deadline, next_watch))) < 0) {
      if (errno == EINTR) continue;
      return lost(LossKind::kProtocol, "poll failed; " + errno_text(errno));
    }
    if (out_at < 3 && fds[out_at].revents != 0) drain_output(kMaxReadsPerWakeup);
    if (req_at < 3 && fds[req_at].revents != 0) {
      const ssize_t n =
          write_without_sigpipe(request.get(), frame.data() + written, frame.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return lost(LossKind::kClosed, "its request pipe is closed (" + errno_text(errno) + ")");
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(response.get(), buf, sizeof buf);
      if (n > 0) {
        inbox.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0) {
        return lost(LossKind::kClosed, "it closed its response pipe");
      } else if (errno != EAGAIN && errno != EINTR) {
        return lost(LossKind::kClosed, "reading its response failed; " + errno_text(errno));
      }
    }
  }
}

std::pair<Outcome, std::string> Worker::State::describe_exit(int status,
                                                             std::string_view phase) const {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
    return {Outcome::kResourceExhausted,
            fmt::format("{} reached its CPU time limit of {} s (SIGXCPU){}", who(),
                        options.cpu_limit_s, phase)};
  }
  if (WIFSIGNALED(status)) {
    return {Outcome::kCrashed, fmt::format("{} killed by {}{}", who(),
                                           worker_detail::signal_text(WTERMSIG(status)), phase)};
  }
  return {Outcome::kCrashed,
          fmt::format("{} exited with status {}{}", who(), WEXITSTATUS(status), phase)};
}

std::pair<Outcome, std::string> Worker::State::bury(const Loss& loss,
                                                    std::chrono::milliseconds deadline,
                                                    std::string_view phase) {
  int status = 0;
  std::pair<Outcome, std::string> result;
  switch (loss.kind) {
    case LossKind::kDeadline:
      worker_detail::terminate_group(pid, options.term_grace, status, seen);
      result = {Outcome::kTimedOut,
                fmt::format("{} gave no answer within {} ms; terminated", who(), deadline.count())};
      break;
    case LossKind::kMemory:
      worker_detail::kill_group(pid, status, seen);
      result = {Outcome::kResourceExhausted, fmt::format("{} {}; killed", who(), loss.detail)};
      break;
    case LossKind::kProtocol:
      worker_detail::terminate_group(pid, options.term_grace, status, seen);
      result = {Outcome::kCrashed, fmt::format("{} broke the protocol: {}", who(), loss.detail)};
      break;
    case LossKind::kForged:
      // Whatever wrote it may still be running in the worker: no grace.
      worker_detail::kill_group(pid, status, seen);
      result = {Outcome::kCrashed,
                fmt::format("forged worker answer: {} {}; killed", who(), loss.detail)};
      break;
    case LossKind::kLeftover:
      worker_detail::kill_group(pid, status, seen);
      result = {Outcome::kCrashed,
                fmt::format("{} {}; killed it and its tree", who(), loss.detail)};
      break;
    case LossKind::kClosed:
      // Usually the worker is dying: its exit status says why.
      if (worker_detail::reap_until(pid, status, Clock::now() + options.term_grace)) {
        ::kill(-pid, SIGKILL);  // whatever it started
        // Descendants seen while it ran, re-parented away when it died.
        worker_detail::kill_tree(pid, /*include_root=*/false, seen);
        result = describe_exit(status, phase);
      } else {
        worker_detail::terminate_group(pid, options.term_grace, status, seen);
        result = {Outcome::kCrashed,
                  fmt::format("{} broke the protocol: {} but kept running", who(), loss.detail)};
      }
      break;
  }
  drain_output(kMaxReadsPerWakeup);
  request.reset();
  response.reset();
  output.reset();
  inbox.clear();
  seen.clear();
  pid = -1;
  alive = false;
  return result;
}

bool Worker::State::has_unasked_bytes() {
  char buf[kReadChunk];
  ssize_t n;
  while (response && (n = ::read(response.get(), buf, sizeof buf)) > 0) {
    inbox.append(buf, static_cast<std::size_t>(n));
  }
  return !inbox.empty();
}

std::optional<Loss> Worker::State::leftovers(bool host_code, bool& restart) {
  const std::vector<worker_detail::ProcessId> left = worker_detail::descendants(pid);
  if (!left.empty()) {
    for (const worker_detail::ProcessId& p : left) {
      if (std::find(seen.begin(), seen.end(), p) == seen.end()) seen.push_back(p);
    }
    return Loss{LossKind::kLeftover,
                fmt::format("left {} process(es) running after the call returned (pid {})",
                            left.size(), left.front().pid)};
  }
  worker_detail::ThreadWatch::Verdict v = thread_watch.after_request(host_code);
  restart = v.restart;
  if (!v.fault.empty()) return Loss{LossKind::kLeftover, std::move(v.fault)};
  return std::nullopt;
}

void Worker::State::stop() {
  alive = false;
  if (pid < 0) return;
  request.reset();  // end of stream: the worker exits by itself
  response.reset();
  output.reset();
  int status = 0;
  // Its descendants first: they may be in other groups, and once it exits they are no
  // longer its descendants.
  worker_detail::kill_tree(pid, /*include_root=*/false, seen);
  if (worker_detail::reap_until(pid, status, Clock::now() + options.term_grace)) {
    ::kill(-pid, SIGKILL);  // whatever it started
  } else {
    worker_detail::terminate_group(pid, options.term_grace, status, seen);
  }
  inbox.clear();
  seen.clear();
  pid = -1;
}

void Worker::State::release() {
  alive = false;
  request.reset();  // end of stream: the worker exits by itself
  response.reset();
  output.reset();
  inbox.clear();
  seen.clear();
  pid = -1;  // reaped by whoever outlives it: this process's exit hands it to init
}

bool Worker::State::exited() const {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
         info.si_pid != 0;
}
}  // namespace ktune
