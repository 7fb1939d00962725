// open_dispatcher: a Dispatcher over a spec's choices. Its loader compiles and loads any choice
// (library calls bind each shape's sizes) and tunes unseen shapes in the background: one thread
// per shape runs a Selector over a fresh copy of the spec's choices (candidates in a
// ktune-worker), which stores the outcome in the tuning cache; the pick then goes to
// Dispatcher::add_tuned.
#include "ktune/tuning/spec_dispatcher.h"

#include <fmt/format.h>

#include <mutex>
#include <thread>
#include <utility>

#include "core/build_support.h"
#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#if KTUNE_HAVE_CUDA
#include "ktune/backend/cuda_backend.h"
#include "tuning/cuda_launch_fns.h"
#endif

namespace ktune {
namespace {

// A choice's KernelFn for one problem: Choice::load on the CPU; on a device, its launch spec
// made runnable on the caller's stream (cuda_launch_fns.h).
using MakeFn = std::function<Result<KernelFn>(Choice&, const Backend&, const Problem&)>;
// The spec's choices for one of its problems (device kernels are built per problem, for the
// device's limits).
using ChoicesFor = std::function<Result<SpecChoices>(const ProblemDecl&)>;

class SpecLoader final : public KernelLoader {
 public:
  // `per_problem`: every choice's KernelFn is made per problem (a device launch's grid follows
  // the sizes); otherwise only library calls are.
  SpecLoader(Spec spec, SpecChoices choices, std::unique_ptr<Backend> backend, MakeFn make_fn,
             ChoicesFor choices_for, bool per_problem, DispatcherOptions options)
      : spec_(std::move(spec)),
        choices_(std::move(choices)),
        backend_(std::move(backend)),
        make_fn_(std::move(make_fn)),
        choices_for_(std::move(choices_for)),
        per_problem_(per_problem),
        options_(std::move(options)),
        template_fns_(choices_.candidates.size()) {}
  ~SpecLoader() override { (void)wait(); }

  Status check(std::span<const std::int64_t> sizes) const override {
    Result<Problem> p = problem_for(sizes);
    if (!p) return std::unexpected(p.error());
    return {};
  }

  Result<KernelFn> load(std::size_t choice, std::span<const std::int64_t> sizes) override {
    Result<Problem> problem = problem_for(sizes);
    if (!problem) return std::unexpected(problem.error());
    if (per_problem_) return load_per_problem(choice, sizes, *problem);
    Choice& c = *choices_.candidates[choice];
    // Library calls bind the problem's sizes when loaded; generated code does not.
    const bool per_problem = c.kind() != Choice::Kind::kTemplate;
    if (!per_problem && template_fns_[choice]) {
      if (Status s = c.supports(*problem); !s) return std::unexpected(s.error());
      return *template_fns_[choice];
    }
    if (c.artifact() == nullptr) {
      if (Status s = c.compile(*backend_); !s) return std::unexpected(s.error());
    }
    Result<KernelFn> fn = make_fn_(c, *backend_, *problem);
    if (fn && !per_problem) template_fns_[choice] = *fn;
    return fn;
  }

  void unseen(Dispatcher& d, std::span<const std::int64_t> shape) override {
    if (!options_.tune_unseen) return;
    Result<Problem> problem = problem_for(shape);
    if (!problem) return;  // check() passed before: cannot happen
    std::vector<std::int64_t> sizes(shape.begin(), shape.end());
    std::lock_guard lock(mu_);
    ++started_;
    threads_.emplace_back([this, &d, sizes = std::move(sizes),
                           problem = std::move(*problem)]() mutable {
      Result<std::string> winner = tune_winner(problem, decl_for(sizes));
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
  // Device kernels are built per problem (their launch geometry is the problem's): the choice of
  // the same name among the choices for these sizes, compiled (a code-cache hit: the source and
  // flags do not depend on the sizes) and made runnable.
  Result<KernelFn> load_per_problem(std::size_t choice, std::span<const std::int64_t> sizes,
                                    const Problem& problem) {
    Result<SpecChoices> mine = choices_for_(decl_for(sizes));
    if (!mine) return std::unexpected(mine.error());
    const std::string name = choices_.candidates[choice]->name();
    for (ChoicePtr& c : mine->candidates) {
      if (c->name() != name) continue;
      if (Status s = c->supports(problem); !s) return std::unexpected(s.error());
      if (Status s = c->compile(*backend_); !s) return std::unexpected(s.error());
      return make_fn_(*c, *backend_, problem);
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
  Result<Problem> problem_for(std::span<const std::int64_t> sizes) const {
    return make_problem(spec_, decl_for(sizes));
  }

  // The winner's name. Choices of its own, since Selector::select compiles the candidates it is
  // given while the Dispatcher loads its own; its own cache connection too (SQLite, WAL).
  Result<std::string> tune_winner(const Problem& problem, const ProblemDecl& decl) const {
    Result<SpecChoices> choices = choices_for_(decl);
    if (!choices) return std::unexpected(choices.error());
    Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(options_.cache_dir);
    if (!cache) return std::unexpected(cache.error());
    Selector selector(*backend_, **cache, options_.selector);
    Result<Selection> selection =
        selector.select(problem, choices->candidates, choices->reference.get());
    if (!selection) return std::unexpected(selection.error());
    return choices->candidates[selection->winner_index]->name();
  }

  const Spec spec_;
  SpecChoices choices_;  // compile() and load() change them; called under the build lock
  std::unique_ptr<Backend> backend_;
  const MakeFn make_fn_;
  const ChoicesFor choices_for_;
  const bool per_problem_;
  const DispatcherOptions options_;
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
  if (options.cache_dir.empty()) options.cache_dir = default_cache_dir();
  options.selector.seed = spec->seed;
  options.selector.tolerance = spec->tolerance;

  // The CLI's default compile options, so that the toolchain fingerprint in the keys matches.
  std::unique_ptr<Backend> owned;
  MakeFn make_fn;
  ChoicesFor choices_for;
  const bool cuda = spec->kernel.language == "cuda";
  if (!spec->op.name.empty() || spec->kernel.language == "opencl") {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: open_dispatcher serves c++ and cuda kernel specs; this is "
                    "{}",
                    spec_file.string(),
                    spec->op.name.empty() ? "an opencl kernel spec"
                                          : "an op spec (op: " + spec->op.name + ")"));
  }
  if (cuda) {
#if KTUNE_HAVE_CUDA
    auto fns = CudaLaunchFns::create(options.cuda_stream);
    if (!fns) return std::unexpected(fns.error());
    Result<CudaBackend> backend = CudaBackend::create(CudaCompileOptions{}, options.cache_dir);
    if (!backend) return std::unexpected(backend.error());
    owned = std::make_unique<CudaBackend>(std::move(*backend));
    std::shared_ptr<CudaLaunchFns> shared(std::move(*fns));
    make_fn = [shared](Choice& c, const Backend&, const Problem& p) -> Result<KernelFn> {
      Result<LaunchSpec> launch = c.launch_spec(p);
      if (!launch) return std::unexpected(launch.error());
      return shared->make(*launch, p);
    };
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
    choices_for = [spec = *spec, limits = owned->device_limits(), host](const ProblemDecl& decl) {
      return make_spec_choices(spec, {}, SpecTarget{limits, &decl, host});
    };
#else
    return std::unexpected(not_built(BuildFeature::kCuda));
#endif
  } else {
    Result<CpuBackend> backend = CpuBackend::create(CpuCompileOptions{}, options.cache_dir);
    if (!backend) return std::unexpected(backend.error());
    owned = std::make_unique<CpuBackend>(std::move(*backend));
    make_fn = [](Choice& c, const Backend& b, const Problem& p) { return c.load(b, p); };
    choices_for = [spec = *spec](const ProblemDecl&) { return make_spec_choices(spec); };
  }
  // The candidates of the spec's first problem serve every size.
  Result<SpecChoices> choices = choices_for(spec->problems.front());
  if (!choices) return std::unexpected(choices.error());
  Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(options.cache_dir);
  if (!cache) return std::unexpected(cache.error());
  Result<DispatchTableBuild> built =
      make_dispatch_table(*spec, *choices, *owned, **cache, options.selector,
                          options.default_choice, /*generated_only=*/false);
  if (!built) return std::unexpected(built.error());
  auto loader = std::make_unique<SpecLoader>(std::move(*spec), std::move(*choices),
                                             std::move(owned), std::move(make_fn),
                                             std::move(choices_for), cuda, std::move(options));
  return Dispatcher::create(std::move(built->table), std::move(loader));
}

}  // namespace ktune
