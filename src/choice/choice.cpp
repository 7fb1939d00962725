// Choice: the defaults every kind of candidate shares.
#include "ktune/choice/choice.h"

#include <fmt/format.h>

namespace ktune {

Result<LaunchSpec> Choice::launch_spec(const Problem& problem) const {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: runs only in ktune's own process, not in a worker ({})",
                                name(), problem.name));
}

}  // namespace ktune
