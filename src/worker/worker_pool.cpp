// WorkerPool: a worker per device slot, started on first use and replaced after each loss, so
// that a candidate that crashed or hung its worker costs only itself. One request at a time:
// run() is not thread-safe (the selector measures candidates one after another).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/trace.h"
#include "ktune/core/outcome.h"
#include "worker/worker.h"

namespace ktune {

WorkerPool::WorkerPool(WorkerOptions options, int slots)
    : options_(std::move(options)), workers_(static_cast<std::size_t>(std::max(slots, 1))) {}

WorkerPool::~WorkerPool() { shutdown(); }

Result<BenchmarkResponse> WorkerPool::run(const BenchmarkRequest& request,
                                          std::chrono::milliseconds deadline) {
  std::unique_ptr<Worker>* slot = nullptr;
  for (std::unique_ptr<Worker>& w : workers_) {
    // A worker that an earlier candidate left unfit (a thread woke, a process appeared) is
    // replaced now, so that the next candidate does not pay for it.
    std::string why;
    if (w && w->fit_for_next(&why)) {
      slot = &w;
      break;
    }
    if (w && w->alive()) {
      notify(fmt::format("worker: replacing the worker before {}: {}", request.candidate, why));
      w->stop();
    }
  }
  if (slot == nullptr) {
    slot = &workers_.front();
    Result<Worker> started = Worker::start(options_);
    if (!started) {
      return make_error(ErrorCode::kUnavailable,
                        fmt::format("WorkerPool: cannot run {}; no worker could be started: {}",
                                    request.candidate, started.error().message));
    }
    if (*slot) ++restarts_;  // it held a worker that was lost (reaped as it is replaced)
    *slot = std::make_unique<Worker>(std::move(*started));
  }
  BenchmarkResponse response = (*slot)->run(request, deadline);
  // A worker whose device context is lost says so and exits; reap it now, so that the next
  // request starts a fresh one (and counts it as a restart).
  if (response.restart) (*slot)->stop();
  if (!(*slot)->alive()) {
    const std::string_view message = response.message;
    notify(fmt::format("worker: lost running {} ({}{}{}); the next candidate gets a fresh worker",
                       request.candidate, outcome_name(response.outcome),
                       message.empty() ? "" : ": ", message.substr(0, message.find('\n'))));
  }
  return response;
}

void WorkerPool::shutdown() {
  trace::Span span("shutdown", "select");
  for (std::unique_ptr<Worker>& w : workers_) {
    if (!w) continue;
    // Released only when idle and clean: anything it left over is killed and waited for.
    if (!options_.wait_at_shutdown && w->fit_for_next()) {
      w->release();
    } else {
      w->stop();
    }
  }
}

}  // namespace ktune
