// CudaCompileAhead (cuda_compile_ahead.h): a planning thread, then a pool of compiles.
#include "tuning/cuda_compile_ahead.h"

#include <fmt/format.h>

#include <mutex>

#include "core/cuda_predict.h"
#include "core/thread_pool.h"
#include "core/trace.h"

namespace ktune {

struct CudaCompileAhead::State {
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::optional<ThreadPool> pool;  // made by the planner once it has something to compile
  std::thread planner;
};

CudaCompileAhead::CudaCompileAhead(std::optional<CudaDeviceInfo> device, CudaCompileOptions options,
                                   std::filesystem::path cache_dir, unsigned jobs, Plan plan)
    : device_(plan ? device : std::nullopt), state_(std::make_unique<State>()) {
  if (!device || !plan) return;
  State* st = state_.get();
  st->planner = std::thread([st, device = std::move(*device), options = std::move(options),
                             cache_dir = std::move(cache_dir), jobs, plan = std::move(plan)] {
    trace::Span span("plan compiles", "compile");
    Result<CudaBackend> backend = CudaBackend::for_device(options, cache_dir, device);
    if (!backend) return;
    std::vector<ChoicePtr> choices;
    {
      const ScopedCudaDeviceHint hint(device);
      choices = plan(*backend);
    }
    span.end();
    if (choices.empty() || st->cancel) return;
    auto shared = std::make_shared<std::vector<ChoicePtr>>(std::move(choices));
    auto compiler = std::make_shared<CudaBackend>(std::move(*backend));
    const std::lock_guard lock(st->mu);
    st->pool.emplace(jobs);
    for (std::size_t i = 0; i < shared->size(); ++i) {
      st->pool->submit([st, shared, compiler, i] {
        if (st->cancel) return;
        const trace::Span compile("compile ahead", "compile", (*shared)[i]->name());
        (void)(*shared)[i]->compile(*compiler);  // a failure is the tuning's to report
      });
    }
  });
}

std::string CudaCompileAhead::mismatch(const CudaDeviceInfo& opened) const {
  if (!device_ || (device_->arch() == opened.arch() && device_->sm_count == opened.sm_count)) {
    return {};
  }
  return fmt::format(
      "compiled ahead for {}, but the driver opened {} ({}, {} SMs): those compiles were for "
      "another device",
      prediction_text(*device_), opened.name, opened.arch(), opened.sm_count);
}

void CudaCompileAhead::wait() {
  if (!state_) return;
  if (state_->planner.joinable()) state_->planner.join();
  const std::lock_guard lock(state_->mu);
  if (state_->pool) state_->pool->wait_idle();
}

CudaCompileAhead::~CudaCompileAhead() {
  if (!state_) return;
  state_->cancel = true;
  if (state_->planner.joinable()) state_->planner.join();
  state_->pool.reset();  // the jobs not started return at once
}

}  // namespace ktune
