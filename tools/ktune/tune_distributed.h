// `mpirun -n R ktune tune SPEC --distributed`: the problems of a spec sharded over MPI ranks, or,
// with fewer problems to tune than ranks, each problem's candidates; rank 0 looks the problems up
// in the tuning cache, decides every pick, alone writes the tuning cache, prints the tables and
// sends the final records to every rank. docs/architecture.md, "Tuning over MPI ranks".
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "mpi_comm.h"

namespace ktune::cli {

struct DistributedTune {
  const Spec& spec;
  std::vector<std::size_t> problems;  // the problems asked for (spec order)
  const Backend& backend;
  SelectorOptions options;  // as asked (the caches' flags, out, progress); no device lock is taken
  // The candidates of problem i (spec order), built once per problem or shared by all.
  std::function<Result<SpecChoices*>(std::size_t)> choices;
  // Rank 0: the tuning cache (SQLite, or memory with --no-cache); null on the other ranks.
  TuningCache* cache = nullptr;
  std::string cache_label;  // the summary line's "cache: ..."
  // Rank 0, after every problem: the dispatch table; false counts as a failure. Unset: nothing.
  std::function<bool()> after;
};

// Every rank calls it; returns the process's exit code (the same on every rank that reaches the
// end: rank 0's, sent with the final records).
[[nodiscard]] int tune_distributed(MpiComm& comm, DistributedTune& job);

}  // namespace ktune::cli
