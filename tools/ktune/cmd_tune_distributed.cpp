// `ktune tune SPEC --distributed`: this process is one rank of an MPI job (tune_distributed.h
// shards the problems or candidates); here each rank's backend, its cores or GPU, and the caches.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/build_support.h"
#include "gemm_run.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/devices.h"
#include "ktune/tuning/tune_spec.h"
#include "mpi_comm.h"
#include "options.h"
#include "tune_distributed.h"
#include "tune_flags.h"
#if KTUNE_HAVE_CUDA
#include "core/cuda_driver.h"
#endif

namespace ktune::cli {
namespace {

// The cores this rank measures on, in words ("0-3", "1").
std::string core_list(const cpu_set_t& set) {
  std::vector<std::string> parts;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
    parts.push_back(e == c ? std::to_string(c) : fmt::format("{}-{}", c, e));
    c = e;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace

// c++ kernel specs on the CPU (the host's cores split between its ranks) and cuda kernel specs
// (one GPU per rank: the local rank's).
int run_distributed(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                    SelectorOptions sopts) {
  const bool op_spec = !spec.op.name.empty();
  const std::string& language = spec.kernel.language;
  if (op_spec || (language != "c++" && language != "cuda") || f.gemm.compile_only) {
    fmt::print(stderr, "error: {}: --distributed tunes c++ and cuda kernel specs (not {}{})\n",
               f.spec,
               op_spec ? fmt::format("op: {} specs", spec.op.name) : language + " kernel specs",
               f.gemm.compile_only ? ", nor --compile-only" : "");
    return kExitUsage;
  }
  if (!kBuiltWithMpi) {
    fmt::print(stderr, "error: --distributed: no MPI support; rebuild with libopenmpi-dev\n");
    return kExitUsage;
  }
  auto comm = MpiComm::start();
  if (!comm) {
    fmt::print(stderr, "error: --distributed: {}\n", comm.error().message);
    return kExitError;
  }
  const int rank = (*comm)->rank();
  std::shared_ptr<const Backend> backend;
  std::shared_ptr<const Backend> host;
  if (language == "c++") {
    // The host's cores split between its ranks, unless mpirun bound each to cores of its own:
    // every thread and worker this rank starts from here inherits the mask.
    if (const auto& share = (*comm)->core_share()) {
      if (::sched_setaffinity(0, sizeof *share, &*share) != 0) {
        fmt::print(stderr, "ktune: warning: rank {}: sched_setaffinity failed\n", rank);
      }
    }
    cpu_set_t now;
    CPU_ZERO(&now);
    if (::sched_getaffinity(0, sizeof now, &now) == 0 && sopts.progress) {
      fmt::print(sopts.progress, "ktune: rank {} of {}: measuring on core(s) {}{}\n", rank,
                 (*comm)->size(), core_list(now),
                 (*comm)->cores_oversubscribed()
                     ? " (more ranks than cores on this host: ranks share cores, and their "
                       "measurements disturb each other)"
                     : "");
    }
    auto cpu = CpuBackend::create(cpu_options(f), ctx.cache_dir);
    if (!cpu) {
      fmt::print(stderr, "error: {}\n", cpu.error().message);
      return kExitError;
    }
    backend = std::make_shared<CpuBackend>(std::move(*cpu));
  } else {
#if KTUNE_HAVE_CUDA
    // One GPU per rank: the rank's index among the ranks of its host, modulo the host's GPUs
    // (more ranks than GPUs share them, and their measurements disturb each other: said).
    GemmOptions target = f.gemm;
    target.selector = f.selector;
    int gpus = 1;
    if (auto cu = cuda_driver(); cu) {
      int n = 0;
      if ((*cu)->DeviceGetCount(&n) == CUDA_SUCCESS && n > 0) gpus = n;
    }
    target.device = (*comm)->local_rank() % gpus;
    if ((*comm)->local_size() > gpus && (*comm)->local_rank() == 0) {
      fmt::print(stderr,
                 "ktune: warning: {} ranks on this host share its {} GPU(s): their measurements "
                 "disturb each other\n",
                 (*comm)->local_size(), gpus);
    }
    auto gpu = open_gemm_backend(target, ctx);
    if (!gpu) return kExitError;
    backend = std::make_shared<CudaBackend>(std::move(*gpu));
    sopts.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", cuda_visible_device(target.device));
    auto h = host_backend(f, ctx, spec);
    if (!h) {
      fmt::print(stderr, "error: {}\n", h.error().message);
      return kExitError;
    }
    host = *h;
#else
    fmt::print(stderr, "error: {}: kernel.language cuda: {}\n", f.spec,
               not_built(BuildFeature::kCuda).message);
    return kExitError;
#endif
  }
  // Rank 0 alone opens the tuning cache; every rank uses the code cache.
  std::unique_ptr<TuningCache> cache;
  if (rank == 0) {
    cache = open_tuning_cache(f.selector.no_cache, ctx);
    if (!cache) return kExitError;
  } else if (!prepare_cache_dir(ctx)) {
    return kExitError;
  }
  const bool per_problem = spec_choices_per_problem(spec);
  const std::vector<std::string> flags =
      language == "c++" ? cpu_options(f).flags : std::vector<std::string>{};
  std::map<std::size_t, SpecChoices> built;
  auto choices = [&](std::size_t p) -> Result<SpecChoices*> {
    const std::size_t slot = per_problem ? p : 0;
    if (auto it = built.find(slot); it != built.end()) return &it->second;
    auto c = per_problem
                 ? make_spec_choices(spec, flags,
                                     SpecTarget{backend->device_limits(), &spec.problems[p], host})
                 : make_spec_choices(spec, flags);
    if (!c) return std::unexpected(c.error());
    return &built.emplace(slot, std::move(*c)).first->second;
  };
  DistributedTune job{spec,
                      {},
                      *backend,
                      sopts,
                      choices,
                      cache.get(),
                      f.selector.no_cache ? "off" : cache_location(ctx),
                      {}};
  for (std::size_t i = 0; i < spec.problems.size(); ++i) {
    if (wanted(f, spec.problems[i], i, spec.problems[i].name)) job.problems.push_back(i);
  }
  if (!f.dispatch_table.empty() && rank == 0) {
    job.after = [&] {
      auto c = choices(0);
      return c &&
             write_table(f, spec, **c, dynamic_cast<const CpuBackend&>(*backend), *cache, sopts);
    };
  }
  const int code = tune_distributed(**comm, job);
  if (!(*comm)->finish()) {
    // Everything is stored and said; only MPI's own ending is stuck.
    fmt::print(stderr,
               "warning: rank {}: MPI did not finish within 20 s (MPI_Finalize can wait "
               "for a rank that died); ktune exits without it\n",
               rank);
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace ktune::cli
