// Private to the spec module: size expressions (shapes, strides, offsets, scalar values) over the
// size names a spec's problems bind, evaluated with muparser. The one catch of muparser's
// exceptions in this module is in spec_expr.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/core/status.h"

namespace ktune::spec_detail {

using Bindings = std::vector<std::pair<std::string, std::int64_t>>;

// The variable names `expr` uses, in order of first use; the error text (no position) when the
// expression does not parse.
[[nodiscard]] std::expected<std::vector<std::string>, std::string> expr_names(
    std::string_view expr);
// The value of `expr` with the bindings as variables; the error text when it fails to parse or
// evaluate or gives a NaN or infinity.
[[nodiscard]] std::expected<double, std::string> eval_expr(std::string_view expr,
                                                           const Bindings& bindings);

// eval_expr with real-valued bindings: a metric's time_s next to the problem's sizes.
[[nodiscard]] std::expected<double, std::string> eval_real_expr(
    std::string_view expr, const std::vector<std::pair<std::string, double>>& bindings);

}  // namespace ktune::spec_detail
