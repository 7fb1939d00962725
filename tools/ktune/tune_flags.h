// `ktune tune`'s flags and what its two files share: cmd_tune.cpp (the command, one process)
// and cmd_tune_distributed.cpp (--distributed: one rank of an MPI job).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "gemm_run.h"
#include "json_out.h"
#include "ktune/backend/backend.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/tune_spec.h"
#include "options.h"

namespace ktune::cli {

struct TuneFlags {
  std::string spec;
  std::vector<std::string> problems;  // names or 0-based indices; empty: all
  // Unset: tune_defaults() for a kernel spec, cuda_gemm_selector_defaults() for an op spec; the
  // seed defaults to the spec's.
  SelectorFlags selector;
  std::string cxx;
  std::string cxxflags;                  // added after the defaults
  std::string cxxflags_replace;          // replacing the defaults
  std::optional<int> compile_timeout_s;  // unset: 120
  std::string dispatch_table;            // written after tuning when set (kernel specs)
  // Op specs (cuda.gemm) and cuda kernels: --device, --arch and --compile-only set here (op
  // specs: `ktune gemm`'s defaults).
  GemmOptions gemm;
  std::string opencl_device;  // opencl kernels: [<platform>:]<device>
  bool distributed = false;   // --distributed: one rank of an MPI job (tune_distributed.h)
  // --json: each problem's outcome, printed as one document when tuning ends (json_out.h).
  std::shared_ptr<ResultDocument> json;
};

// Whether the problem (index in the spec, name) is among --problems (all when none is given).
[[nodiscard]] bool wanted(const TuneFlags& f, const ProblemDecl& p, std::size_t index,
                          std::string_view problem_name);

// The CPU compiler of --cxx, --cxxflags, --cxxflags-replace and --compile-timeout-s.
[[nodiscard]] CpuCompileOptions cpu_options(const TuneFlags& f);

// A device kernel's c++ reference is built by a CPU backend of its own (the CPU flags apply);
// null when the spec has none.
[[nodiscard]] Result<std::shared_ptr<const Backend>> host_backend(const TuneFlags& f,
                                                                  const CliContext& ctx,
                                                                  const Spec& spec);

// --dispatch-table: the picks of every problem of the spec that the tuning cache holds, for a
// program that links only ktune::runtime (Dispatcher::open_table); false after saying why.
[[nodiscard]] bool write_table(const TuneFlags& f, const Spec& spec, SpecChoices& choices,
                               const Backend& backend, TuningCache& cache,
                               const SelectorOptions& sopts);

// --distributed: this process is one rank of an MPI job (cmd_tune_distributed.cpp); the exit
// code.
[[nodiscard]] int run_distributed(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                                  SelectorOptions sopts);

}  // namespace ktune::cli
