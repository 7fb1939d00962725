// Outcome names as stored in the tuning cache and printed in tables.
#include "ktune/core/outcome.h"

#include <string>

namespace ktune {
namespace {

constexpr Outcome kAll[] = {
    Outcome::kOk,
    Outcome::kCompileError,
    Outcome::kLoadError,
    Outcome::kLaunchError,
    Outcome::kCrashed,
    Outcome::kTimedOut,
    Outcome::kWrongResult,
    Outcome::kNanOutput,
    Outcome::kUnwrittenOutput,
    Outcome::kRedzoneViolation,
    Outcome::kInputModified,
    Outcome::kResourceExhausted,
    Outcome::kUnsupported,
    Outcome::kAbandoned,
    Outcome::kNotEvaluated,
};

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kCompileError:
      return "compile_error";
    case Outcome::kLoadError:
      return "load_error";
    case Outcome::kLaunchError:
      return "launch_error";
    case Outcome::kCrashed:
      return "crashed";
    case Outcome::kTimedOut:
      return "timed_out";
    case Outcome::kWrongResult:
      return "wrong_result";
    case Outcome::kNanOutput:
      return "nan_output";
    case Outcome::kUnwrittenOutput:
      return "unwritten_output";
    case Outcome::kRedzoneViolation:
      return "redzone_violation";
    case Outcome::kInputModified:
      return "input_modified";
    case Outcome::kResourceExhausted:
      return "resource_exhausted";
    case Outcome::kUnsupported:
      return "unsupported";
    case Outcome::kAbandoned:
      return "abandoned";
    case Outcome::kNotEvaluated:
      return "not_evaluated";
  }
  return "unknown";
}

Result<Outcome> parse_outcome(std::string_view name) {
  for (Outcome o : kAll) {
    if (outcome_name(o) == name) return o;
  }
  return make_error(ErrorCode::kInvalidArgument, "unknown outcome '" + std::string(name) + "'");
}

}  // namespace ktune
