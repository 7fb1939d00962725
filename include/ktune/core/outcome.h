// Outcome: what happened to one candidate. A failing candidate is data, not an error.
#pragma once

#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

enum class Outcome {
  kOk,
  kCompileError,
  kLoadError,
  kLaunchError,
  kCrashed,
  kTimedOut,
  kWrongResult,
  kNanOutput,
  kUnwrittenOutput,
  kRedzoneViolation,
  kInputModified,
  kResourceExhausted,
  kUnsupported,
  // Search at scale (issue 19): measuring stopped early because its first timed runs were
  // clearly slower than the best so far (partial statistics kept; never the pick)...
  kAbandoned,
  // ...or never compiled nor measured: the search's budget ended before the strategy proposed it.
  kNotEvaluated,
};

// The stored and printed name: "ok", "compile_error", "wrong_result", ...
[[nodiscard]] std::string_view outcome_name(Outcome outcome);
[[nodiscard]] Result<Outcome> parse_outcome(std::string_view name);

}  // namespace ktune
