// Worker: one ktune-worker child and the parent's side of the protocol with it (worker.h); the
// exchange itself and the ending of a worker are Worker::State's (worker_state.cpp).
//
// An answer is believed only when it echoes the request's nonce, comes alone, claims times that
// fit in the parent's own wall time of the exchange, and comes while the worker is alive; the
// worker's tree and threads are then checked for what the candidate left behind
// (worker_checks.h). A forged answer or a leftover costs the candidate that made it (crashed)
// and the worker, never the next candidate.
#include "worker/worker.h"

#include <fmt/format.h>

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "worker/process_tree.h"
#include "worker/worker_checks.h"
#include "worker/worker_state.h"

namespace ktune {

using worker_detail::Clock;
using worker_detail::kMaxReadsPerWakeup;
using worker_detail::Loss;
using worker_detail::LossKind;

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
  } else if (std::string why = message->response->stats ? worker_detail::implausible_stats(
                                                              *message->response->stats, wall)
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
  } else if (std::optional<Loss> left =
                 s.leftovers(request.launch.kind == LaunchKind::kCpuSharedObject, restart)) {
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

void Worker::release() {
  if (state_) state_->release();
}

}  // namespace ktune
