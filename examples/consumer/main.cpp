// Embedding ktune: tune a small scaled-copy kernel from C++ with no spec file and no CLI; the
// candidates run in the installed ktune-worker.
// Two unroll factors compete; the pick is verified against the unrolled-by-1 reference.
#include <cstdio>
#include <filesystem>
#include <utility>

#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/kernel_template.h"
#include "ktune/select/selector.h"

int main() {
  using namespace ktune;
  const char* source = R"(
    void scale(float* y, const float* x, long n, float a) {
      long i = 0;
      for (; i + UNROLL <= n; i += UNROLL)
        for (int u = 0; u < UNROLL; ++u) y[i + u] = a * x[i + u];
      for (; i < n; ++i) y[i] = a * x[i];
    })";
  Signature sig = {{"y", ArgRole::kOut, DType::kF32},
                   {"x", ArgRole::kIn, DType::kF32},
                   {"n", ArgRole::kScalar, DType::kI64},
                   {"a", ArgRole::kScalar, DType::kF32}};
  auto space =
      SearchSpace::create({{"UNROLL", {std::int64_t{1}, std::int64_t{4}, std::int64_t{8}}}}, {});
  if (!space) return 1;
  auto tmpl = KernelTemplate::create({"scale", source, "scale", sig, false, {}}, std::move(*space));

  const auto dir = std::filesystem::temp_directory_path() / "ktune-consumer-example";
  auto backend = CpuBackend::create({.flags = {"-O2", "-shared", "-fPIC"}}, dir);
  if (!backend) {
    std::fprintf(stderr, "error: %s\n", backend.error().message.c_str());
    return 1;
  }
  Problem problem{"scale", "n=100000", {}};
  const std::int64_t n = 100000;
  problem.args = {{sig[0], TensorSpec::contiguous(DType::kF32, {n}), {}},
                  {sig[1], TensorSpec::contiguous(DType::kF32, {n}), {}},
                  {sig[2], {}, n},
                  {sig[3], {}, 0.5}};
  auto cache = make_memory_cache();
  auto choices = tmpl->choices();  // fails for a space too large to tune every config of
  if (!choices) {
    std::fprintf(stderr, "error: %s\n", choices.error().message.c_str());
    return 1;
  }
  std::vector<ChoicePtr> candidates = std::move(*choices);
  ChoicePtr reference = tmpl->choice(tmpl->space().enumerate()->front());
  SelectorOptions options;
  options.bench.budget_ms = 5;
  options.worker.executable = KTUNE_WORKER_EXECUTABLE;  // generated code runs in this process
  Selector selector(*backend, *cache, options);
  auto selection = selector.select(problem, candidates, reference.get());
  if (!selection) {
    std::fprintf(stderr, "error: %s\n", selection.error().message.c_str());
    return 1;
  }
  std::printf("consumer: picked %s\n", candidates[selection->winner_index]->name().c_str());
  return 0;
}
