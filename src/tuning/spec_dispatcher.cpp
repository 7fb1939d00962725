// open_dispatcher: a Dispatcher over a spec's choices. Its loader compiles and loads any choice
// (library calls bind each shape's sizes) and tunes unseen shapes in the background: one thread
// per shape runs a Selector over a fresh copy of the spec's choices (candidates in a
// ktune-worker), which stores the outcome in the tuning cache; the pick then goes to
// Dispatcher::add_tuned. op: cuda.gemm specs: cuda_op_dispatch.cpp, with the same loader.
#include "ktune/tuning/spec_dispatcher.h"

#include <fmt/format.h>

#include <mutex>
#include <thread>
#include <utility>

#include "core/build_support.h"
#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/tuning/open_cache.h"
#include "tuning/spec_loader.h"
#if KTUNE_HAVE_CUDA
#include "ktune/backend/cuda_backend.h"
#include "tuning/cuda_launch_fns.h"
#include "tuning/cuda_op_dispatch.h"
#endif

namespace ktune {
namespace {

class SpecLoader final : public KernelLoader {
 public:
  SpecLoader(Spec spec, SpecChoices choices, std::unique_ptr<Backend> backend,
             SpecLoaderHooks hooks, bool tune_unseen)
      : spec_(std::move(spec)),
        choices_(std::move(choices)),
        backend_(std::move(backend)),
        hooks_(std::move(hooks)),
        tune_unseen_(tune_unseen && hooks_.tune),
        template_fns_(choices_.candidates.size()) {}
  ~SpecLoader() override { (void)wait(); }

  Status check(std::span<const std::int64_t> sizes) const override {
    Result<Problem> p = hooks_.problem(decl_for(sizes));
    if (!p) return std::unexpected(p.error());
    return {};
  }

  Result<KernelFn> load(std::size_t choice, std::span<const std::int64_t> sizes) override {
    Result<Problem> problem = hooks_.problem(decl_for(sizes));
    if (!problem) return std::unexpected(problem.error());
    if (hooks_.choices_for) return load_per_problem(choice, sizes, *problem);
    Choice& c = *choices_.candidates[choice];
    // Library calls bind the problem's sizes when loaded; generated code does not, unless its
    // launch geometry follows them.
    const bool per_problem = hooks_.launch_per_problem || c.kind() != Choice::Kind::kTemplate;
    if (!per_problem && template_fns_[choice]) {
      if (Status s = c.supports(*problem); !s) return std::unexpected(s.error());
      return *template_fns_[choice];
    }
    if (c.artifact() == nullptr) {
      if (Status s = c.compile(*backend_); !s) return std::unexpected(s.error());
    }
    Result<KernelFn> fn = hooks_.make_fn(c, *backend_, *problem);
    if (fn && !per_problem) template_fns_[choice] = *fn;
    return fn;
  }

  void unseen(Dispatcher& d, std::span<const std::int64_t> shape) override {
    if (!tune_unseen_) return;
    ProblemDecl decl = decl_for(shape);
    Result<Problem> problem = hooks_.problem(decl);
    if (!problem) return;  // check() passed before: cannot happen
    std::vector<std::int64_t> sizes(shape.begin(), shape.end());
    std::lock_guard lock(mu_);
    ++started_;
    threads_.emplace_back([this, &d, sizes = std::move(sizes), decl = std::move(decl),
                           problem = std::move(*problem)]() mutable {
      // The hook builds choices of its own, since Selector::select compiles the candidates it
      // is given while the Dispatcher loads its own; and its own cache connection (SQLite, WAL).
      Result<std::string> winner = hooks_.tune(*backend_, problem, decl);
      Status added =
          winner ? d.add_tuned(std::move(sizes), *winner) : Status(std::unexpected(winner.error()));
      std::lock_guard lock(mu_);
      if (!added && !error_) {
        error_ =
            Error{added.error().code, fmt::format("dispatcher {}: background tuning of {}: {}",
                                                  spec_.name, problem.name, added.error().message)};
      }
    });
  }

  Status wait() override {
    for (;;) {
      std::vector<std::thread> batch;
      {
        std::lock_guard lock(mu_);
        batch.swap(threads_);
      }
      if (batch.empty()) break;
      for (std::thread& t : batch) t.join();
    }
    std::lock_guard lock(mu_);
    std::optional<Error> error = std::exchange(error_, std::nullopt);
    if (error) return std::unexpected(std::move(*error));
    return {};
  }

  int started() const override {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  // The choice of the same name among the choices for these sizes, compiled (a code-cache hit:
  // the source and flags do not depend on the sizes) and made runnable.
  Result<KernelFn> load_per_problem(std::size_t choice, std::span<const std::int64_t> sizes,
                                    const Problem& problem) {
    Result<SpecChoices> mine = hooks_.choices_for(decl_for(sizes));
    if (!mine) return std::unexpected(mine.error());
    const std::string name = choices_.candidates[choice]->name();
    for (ChoicePtr& c : mine->candidates) {
      if (c->name() != name) continue;
      if (Status s = c->supports(problem); !s) return std::unexpected(s.error());
      if (Status s = c->compile(*backend_); !s) return std::unexpected(s.error());
      return hooks_.make_fn(*c, *backend_, problem);
    }
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{} is not a candidate at {} (the device's limits leave it out)",
                                  name, problem.name));
  }
  ProblemDecl decl_for(std::span<const std::int64_t> sizes) const {
    ProblemDecl decl;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      decl.sizes.emplace_back(spec_.problems.front().sizes[i].first, sizes[i]);
    }
    return decl;
  }

  const Spec spec_;
  SpecChoices choices_;  // compile() and load() change them; called under the build lock
  std::unique_ptr<Backend> backend_;
  const SpecLoaderHooks hooks_;
  const bool tune_unseen_;
  std::vector<std::optional<KernelFn>> template_fns_;  // template choices, loaded once
  mutable std::mutex mu_;                              // guards the three below
  std::vector<std::thread> threads_;                   // background tunings not joined yet
  std::optional<Error> error_;                         // the first, until wait()
  int started_ = 0;
};

}  // namespace

Result<std::unique_ptr<Dispatcher>> open_dispatcher(const std::filesystem::path& spec_file,
                                                    DispatcherOptions options) {
  Result<Spec> spec = load_spec(spec_file);
  if (!spec) return std::unexpected(spec.error());
  return open_dispatcher(std::move(*spec), std::move(options));
}

Result<std::unique_ptr<Dispatcher>> open_dispatcher(Spec spec_value, DispatcherOptions options) {
  const std::filesystem::path spec_file = spec_value.file;
  std::optional<Spec> spec(std::move(spec_value));
  if (options.cache_dir.empty()) options.cache_dir = default_cache_dir();
  if (!spec->op.name.empty()) {
#if KTUNE_HAVE_CUDA
    return open_cuda_gemm_dispatcher(std::move(*spec), std::move(options));
#else
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("{}: op: {}: {}", spec_file.string(), spec->op.name,
                                  not_built(BuildFeature::kCuda).message));
#endif
  }
  options.selector.seed = spec->seed;
  options.selector.tolerance = spec->tolerance;

  // The CLI's default compile options, so that the toolchain fingerprint in the keys matches.
  std::unique_ptr<Backend> owned;
  SpecLoaderHooks hooks;
  // Fresh choices for each background tuning (and each shape's, for device kernels).
  std::function<Result<SpecChoices>(const ProblemDecl&)> choices_for;
  if (spec->kernel.language == "opencl") {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: open_dispatcher serves c++ and cuda kernel specs and op: "
                                  "cuda.gemm specs; this is an opencl kernel spec",
                                  spec_file.string()));
  }
  if (spec->kernel.language == "cuda") {
#if KTUNE_HAVE_CUDA
    auto fns = CudaLaunchFns::create(options.cuda_stream);
    if (!fns) return std::unexpected(fns.error());
    Result<CudaBackend> backend = CudaBackend::create(CudaCompileOptions{}, options.cache_dir);
    if (!backend) return std::unexpected(backend.error());
    owned = std::make_unique<CudaBackend>(std::move(*backend));
    hooks.make_fn = cuda_launch_make_fn(std::move(*fns));
    // Background tunings: the worker sees the GPU as its device 0, as `ktune tune` gives it.
    options.selector.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", "0");
    if (!spec->kernel.size_defines.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: kernel.size_defines build the candidates per problem; a "
                                    "dispatcher serves candidates that run every size",
                                    spec_file.string()));
    }
    std::shared_ptr<const Backend> host;
    if (spec_has_host_reference(*spec)) {
      Result<CpuBackend> cpu = CpuBackend::create(CpuCompileOptions{}, options.cache_dir);
      if (!cpu) return std::unexpected(cpu.error());
      host = std::make_shared<CpuBackend>(std::move(*cpu));
    }
    // A device kernel's launch is bound to the problem its choices are built for.
    choices_for = [spec = *spec, limits = owned->device_limits(), host](const ProblemDecl& decl) {
      return make_spec_choices(spec, {}, SpecTarget{limits, &decl, host});
    };
    hooks.choices_for = choices_for;
#else
    return std::unexpected(not_built(BuildFeature::kCuda));
#endif
  } else {
    Result<CpuBackend> backend = CpuBackend::create(CpuCompileOptions{}, options.cache_dir);
    if (!backend) return std::unexpected(backend.error());
    owned = std::make_unique<CpuBackend>(std::move(*backend));
    hooks.make_fn = [](Choice& c, const Backend& b, const Problem& p) { return c.load(b, p); };
    choices_for = [spec = *spec](const ProblemDecl&) { return make_spec_choices(spec); };
  }
  hooks.problem = [spec = *spec](const ProblemDecl& decl) { return make_problem(spec, decl); };
  const CacheLocation where{options.cache_dir, options.cache_url};
  hooks.tune = [choices_for, where, selector = options.selector](
                   const Backend& backend, const Problem& problem,
                   const ProblemDecl& decl) -> Result<std::string> {
    Result<SpecChoices> choices = choices_for(decl);
    if (!choices) return std::unexpected(choices.error());
    Result<OpenedCache> cache = open_cache_at(where);
    if (!cache) return std::unexpected(cache.error());
    Selector tuner(backend, *cache->cache, selector);
    Result<Selection> selection =
        tuner.select(problem, choices->candidates, choices->reference.get());
    if (!selection) return std::unexpected(selection.error());
    return choices->candidates[selection->winner_index]->name();
  };
  // The candidates of the spec's first problem serve every size.
  Result<SpecChoices> choices = choices_for(spec->problems.front());
  if (!choices) return std::unexpected(choices.error());
  Result<OpenedCache> cache = open_cache_at(where);
  if (!cache) return std::unexpected(cache.error());
  Result<DispatchTableBuild> built =
      make_dispatch_table(*spec, *choices, *owned, *cache->cache, options.selector,
                          options.default_choice, /*generated_only=*/false);
  if (!built) return std::unexpected(built.error());
  return Dispatcher::create(
      std::move(built->table),
      make_spec_loader(std::move(*spec), std::move(*choices), std::move(owned), std::move(hooks),
                       options.tune_unseen));
}

std::unique_ptr<KernelLoader> make_spec_loader(Spec spec, SpecChoices choices,
                                               std::unique_ptr<Backend> backend,
                                               SpecLoaderHooks hooks, bool tune_unseen) {
  return std::make_unique<SpecLoader>(std::move(spec), std::move(choices), std::move(backend),
                                      std::move(hooks), tune_unseen);
}

}  // namespace ktune
