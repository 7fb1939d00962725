// Worker: one ktune-worker child and the parent's side of the protocol with it (worker.h).
//
// Every exchange (the ping at start, each request) is one poll() loop over the response pipe, the
// worker's output and, until the frame is written, the request pipe; it ends at a complete frame
// or at the deadline. The output is drained all along into a fixed-size tail, so that a kernel
// printing megabytes never blocks the worker nor grows memory here. The loop also wakes every
// 10 ms to note the worker's descendants (so that they can be killed even after the worker dies
// and they are re-parented away) and, with a memory limit, to add up the resident memory of the
// worker's whole tree.
//
// An answer is believed only when it echoes the request's nonce, comes alone, and claims times
// that fit in the parent's own wall time of the exchange; the worker's tree and threads are then
// checked for what the candidate left behind (worker_checks.h). A forged answer or a leftover
// costs the candidate that made it (crashed) and the worker, never the next candidate.
//
// SIGPIPE: the request pipe is written with SIGPIPE blocked in the calling thread only, and a
// SIGPIPE that the write raised is consumed (sigtimedwait), so a dead worker shows as EPIPE while
// ktune's own signal dispositions stay untouched.
#include "worker/worker.h"

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

#include "worker/process_tree.h"
#include "worker/worker_checks.h"
#include "worker/worker_process.h"

namespace ktune {
namespace {

using worker_detail::Clock;

constexpr std::chrono::milliseconds kWatchInterval{10};
// While the worker has no descendants, its tree is walked only every 5th look (about 60 us a
// walk on a loaded 2-core machine); with descendants, at every look.
constexpr int kTreeWalkEvery = 5;
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
constexpr int kMaxReadsPerWakeup = 64;  // 4 MiB of output, then the other pipes get a look

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// How an exchange ended without a frame.
enum class LossKind { kDeadline, kClosed, kProtocol, kMemory, kForged, kLeftover };
struct Loss {
  LossKind kind;
  std::string detail;
};

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

struct Worker::State {
  WorkerOptions options;
  std::filesystem::path executable;
  pid_t pid = -1;
  bool alive = false;  // started, and every exchange so far ended with a frame
  UniqueFd request, response, output;
  worker_detail::OutputTail tail;
  std::string inbox;  // response bytes read so far
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
  void drain_output(int max_reads) {
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

  // Notes the descendants, and checks the tree's memory when there is a limit.
  std::optional<Loss> watch_tree() {
    std::vector<worker_detail::ProcessId> now;
    std::optional<worker_detail::TreeMemory> use;
    const bool walk = had_descendants || ++looks % kTreeWalkEvery == 0;
    if (options.memory_limit_bytes > 0 && walk) {
      use = worker_detail::tree_memory(pid, &now);
    } else if (options.memory_limit_bytes > 0) {
      if (std::optional<worker_detail::MemoryUse> own = worker_detail::read_memory_use(pid)) {
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

  // Sends `payload` as one frame and returns the next frame's payload.
  std::expected<std::string, Loss> exchange(std::string_view payload, Clock::time_point deadline) {
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

  // How the worker ended, from its wait status.
  std::pair<Outcome, std::string> describe_exit(int status, std::string_view phase) const {
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

  // Ends the worker after a lost exchange, reaps it and says what happened.
  std::pair<Outcome, std::string> bury(const Loss& loss, std::chrono::milliseconds deadline,
                                       std::string_view phase) {
    int status = 0;
    std::pair<Outcome, std::string> result;
    switch (loss.kind) {
      case LossKind::kDeadline:
        worker_detail::terminate_group(pid, options.term_grace, status, seen);
        result = {Outcome::kTimedOut, fmt::format("{} gave no answer within {} ms; terminated",
                                                  who(), deadline.count())};
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
        result = {Outcome::kCrashed, fmt::format("{} {}; killed it and its tree", who(),
                                                 loss.detail)};
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

  // Bytes the worker wrote after its answer (read now, without waiting).
  bool has_unasked_bytes() {
    char buf[kReadChunk];
    ssize_t n;
    while (response && (n = ::read(response.get(), buf, sizeof buf)) > 0) {
      inbox.append(buf, static_cast<std::size_t>(n));
    }
    return !inbox.empty();
  }

  // After a believed answer: what the candidate left behind, as the loss it makes, if any.
  // `restart` is set when the worker should be replaced without blaming the candidate.
  std::optional<Loss> leftovers(bool host_code, bool& restart) {
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

  void stop() {
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

  // True when the process has ended, without reaping it (bury or stop do that).
  bool exited() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
           info.si_pid != 0;
  }
};

Result<Worker> Worker::start(const WorkerOptions& options) {
  auto state = std::make_unique<State>(options);
  state->executable = options.executable;
  if (state->executable.empty()) {
    Result<std::filesystem::path> found = find_worker_executable();
    if (!found) return std::unexpected(found.error());
    state->executable = *found;
  }
  Result<worker_detail::SpawnedWorker> spawned =
      worker_detail::spawn_worker(state->executable, options);
  if (!spawned) return std::unexpected(spawned.error());
  state->pid = spawned->pid;
  state->request = std::move(spawned->request);
  state->response = std::move(spawned->response);
  state->output = std::move(spawned->output);
  state->alive = true;

  std::expected<std::string, Loss> reply =
      state->exchange(encode_ping(), Clock::now() + options.start_timeout);
  std::optional<Loss> loss;
  if (!reply) {
    loss = reply.error();
  } else if (Result<WorkerMessage> message = decode_message(*reply); !message) {
    loss = Loss{LossKind::kProtocol, "an undecodable pong: " + message.error().message};
  } else if (!message->pong_pid) {
    loss = Loss{LossKind::kProtocol, "answered the ping with another message than pong"};
  } else if (message->pong_protocol != kWorkerProtocolVersion) {
    // Another build's worker: its requests and responses may differ field by field, so none is
    // sent. Stopped like any idle worker (it exits at end of stream).
    state->stop();
    return make_error(
        ErrorCode::kUnavailable,
        fmt::format("Worker::start: {} speaks worker protocol {} (ktune {}), this ktune speaks "
                    "protocol {} (ktune {}); use the ktune-worker of this build (KTUNE_WORKER "
                    "names it)",
                    state->executable.string(), message->pong_protocol,
                    message->pong_version.empty() ? "unknown" : message->pong_version,
                    kWorkerProtocolVersion, KTUNE_VERSION));
  }
  if (!loss) {
    state->thread_watch.start(state->pid);
    return Worker(std::move(state));
  }
  const auto [outcome, what] = state->bury(*loss, options.start_timeout, " before the pong");
  const std::string output = state->tail.str();
  return make_error(
      ErrorCode::kUnavailable,
      fmt::format("Worker::start: {} did not start; {}{}", state->executable.string(), what,
                  output.empty() ? "; it printed nothing" : "; its output:\n" + output));
}

Worker::Worker(std::unique_ptr<State> state) : state_(std::move(state)) {}
Worker::Worker(Worker&&) noexcept = default;
Worker& Worker::operator=(Worker&&) noexcept = default;
Worker::~Worker() = default;  // ~State stops and reaps

BenchmarkResponse Worker::run(const BenchmarkRequest& request, std::chrono::milliseconds deadline) {
  BenchmarkResponse response;
  response.id = request.id;
  const std::string where = request.candidate.empty() ? "Worker::run" : request.candidate;
  if (!alive()) {
    response.outcome = Outcome::kCrashed;
    response.message = where + ": no ktune-worker to run it; the worker was lost before";
    return response;
  }
  State& s = *state_;
  s.drain_output(kMaxReadsPerWakeup);  // left from an earlier request: not this one's
  s.tail.clear();
  Result<std::string> nonce = make_nonce();
  if (!nonce) {
    response.outcome = Outcome::kCrashed;
    response.message = where + ": " + nonce.error().message;
    return response;
  }

  const Clock::time_point sent = Clock::now();
  std::expected<std::string, Loss> reply =
      s.exchange(encode_request(request, *nonce), sent + deadline);
  const auto wall = Clock::now() - sent;
  std::optional<Loss> loss;
  bool restart = false;
  if (!reply) {
    loss = reply.error();
  } else if (Result<WorkerMessage> message = decode_message(*reply); !message) {
    loss = Loss{LossKind::kProtocol, "an undecodable response: " + message.error().message};
  } else if (!message->response) {
    loss = Loss{LossKind::kProtocol, "answered a request with another message than response"};
  } else if (message->nonce != *nonce) {
    // Checked before anything else in the answer: none of it is the worker's.
    loss = Loss{LossKind::kForged, "answered without this request's nonce"};
  } else if (message->response->id != request.id) {
    loss = Loss{LossKind::kProtocol, fmt::format("answered request {} with response {}", request.id,
                                                 message->response->id)};
  } else if (std::string why = message->response->stats
                                   ? worker_detail::implausible_stats(*message->response->stats,
                                                                      wall)
                                   : std::string();
             !why.empty()) {
    loss = Loss{LossKind::kForged, why};
  } else if (!message->response->restart && s.exited()) {
    // The worker exits after an answer only when it says so (restart): this one came from a
    // copy of it (a candidate that forked, then ended the worker).
    loss = Loss{LossKind::kForged, "answered, but had exited: a forked copy of it answered"};
  } else if (s.has_unasked_bytes()) {
    loss = Loss{LossKind::kForged, fmt::format("wrote {} more bytes after its answer to one "
                                               "request",
                                               s.inbox.size())};
  } else if (std::optional<Loss> left = s.leftovers(
                 request.launch.kind == LaunchKind::kCpuSharedObject, restart)) {
    loss = std::move(left);
  } else {
    response = std::move(*message->response);
    response.restart = response.restart || restart;
    s.drain_output(kMaxReadsPerWakeup);
    response.output_tail = s.tail.str();
    if (response.restart) s.stop();  // the next request gets a fresh worker
    return response;
  }
  auto [outcome, what] = s.bury(*loss, deadline, " during the run");
  response.outcome = outcome;
  response.message = where + ": " + what;
  response.output_tail = s.tail.str();
  return response;
}

bool Worker::fit_for_next(std::string* why) {
  if (!alive()) return false;
  State& s = *state_;
  std::string problem;
  if (s.has_unasked_bytes()) {
    problem = fmt::format("it wrote {} bytes between requests", s.inbox.size());
  } else if (std::vector<worker_detail::ProcessId> left = worker_detail::descendants(s.pid);
             !left.empty()) {
    problem = fmt::format("{} process(es) of its tree appeared between requests", left.size());
  } else {
    problem = s.thread_watch.woken_since();
  }
  if (problem.empty()) return true;
  if (why != nullptr) *why = problem;
  return false;
}

bool Worker::alive() const { return state_ && state_->alive && !state_->exited(); }

pid_t Worker::pid() const { return state_ ? state_->pid : -1; }

void Worker::stop() {
  if (state_) state_->stop();
}

}  // namespace ktune
