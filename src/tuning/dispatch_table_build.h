// The dispatch-table build that kernel specs (make_dispatch_table) and op: cuda.gemm specs
// (cuda_op_dispatch.h) share: only how a problem's stored pick is found differs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ktune/tuning/spec_dispatcher.h"

namespace ktune {

// One problem of the spec as its tuning stored it: the problem's name (for notes) and the record,
// already checked against the candidates it was keyed with (lookup_checked); none: untuned.
struct StoredPick {
  std::string problem;
  std::optional<TuningRecord> record;
};
using PickLookup = std::function<Result<StoredPick>(const ProblemDecl&)>;

// The table over `candidates` (the spec's, in order; compiled on `backend` when they are the
// default or a pick): each problem's pick from `lookup`, a winner that is not among the candidates
// left out as stale. default_choice and generated_only as make_dispatch_table takes them.
[[nodiscard]] Result<DispatchTableBuild> build_dispatch_table(
    const Spec& spec, std::vector<ChoicePtr>& candidates, const Backend& backend,
    const PickLookup& lookup, const std::optional<std::string>& default_choice,
    bool generated_only);

}  // namespace ktune
