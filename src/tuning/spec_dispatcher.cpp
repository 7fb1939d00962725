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

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache_sqlite/sqlite_cache.h"

namespace ktune {
namespace {

class SpecLoader final : public KernelLoader {
 public:
  SpecLoader(Spec spec, SpecChoices choices, std::unique_ptr<CpuBackend> backend,
             DispatcherOptions options)
      : spec_(std::move(spec)),
        choices_(std::move(choices)),
        backend_(std::move(backend)),
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
    Result<KernelFn> fn = c.load(*backend_, *problem);
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
      Result<std::string> winner = tune_winner(problem);
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
  Result<Problem> problem_for(std::span<const std::int64_t> sizes) const {
    ProblemDecl decl;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      decl.sizes.emplace_back(spec_.problems.front().sizes[i].first, sizes[i]);
    }
    return make_problem(spec_, decl);
  }

  // The winner's name. Choices of its own, since Selector::select compiles the candidates it is
  // given while the Dispatcher loads its own; its own cache connection too (SQLite, WAL).
  Result<std::string> tune_winner(const Problem& problem) const {
    Result<SpecChoices> choices = make_spec_choices(spec_);
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
  std::unique_ptr<CpuBackend> backend_;
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
  Result<CpuBackend> backend = CpuBackend::create(CpuCompileOptions{}, options.cache_dir);
  if (!backend) return std::unexpected(backend.error());
  auto owned = std::make_unique<CpuBackend>(std::move(*backend));
  Result<SpecChoices> choices = make_spec_choices(*spec);
  if (!choices) return std::unexpected(choices.error());
  Result<std::unique_ptr<TuningCache>> cache = open_sqlite_cache(options.cache_dir);
  if (!cache) return std::unexpected(cache.error());
  Result<DispatchTableBuild> built =
      make_dispatch_table(*spec, *choices, *owned, **cache, options.selector,
                          options.default_choice, /*generated_only=*/false);
  if (!built) return std::unexpected(built.error());
  auto loader = std::make_unique<SpecLoader>(std::move(*spec), std::move(*choices),
                                             std::move(owned), std::move(options));
  return Dispatcher::create(std::move(built->table), std::move(loader));
}

}  // namespace ktune
