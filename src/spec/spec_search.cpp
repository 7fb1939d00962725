// search: (spec_sections.h): which candidates a tuning compiles and measures, each field checked
// where it is written, so that a bad budget fails at load time with its position.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "spec/spec_sections.h"

namespace ktune::spec_detail {

Status parse_search(const Reader& r, const YAML::Node& node, SearchOptions& out) {
  if (auto ok = r.expect_map(node, "search"); !ok) return ok;
  if (auto ok = r.check_keys(node, "search", {"strategy", "max_evals", "time_limit_s", "seed"});
      !ok) {
    return ok;
  }
  if (YAML::Node v = node["strategy"]; v.IsDefined()) {
    auto name = r.string(v, "search.strategy");
    if (!name) return std::unexpected(name.error());
    std::string known;
    bool found = false;
    for (std::string_view n : strategy_names()) {
      known += known.empty() ? std::string(n) : fmt::format(", {}", n);
      found = found || n == *name;
    }
    if (!found) {
      return r.fail(v, "search.strategy",
                    fmt::format("unknown strategy '{}'; expected one of {}", *name, known));
    }
    out.strategy = *name;
  }
  if (YAML::Node v = node["max_evals"]; v.IsDefined()) {
    auto n = r.integer(v, "search.max_evals");
    if (!n) return std::unexpected(n.error());
    if (*n < 1) {
      return r.fail(v, "search.max_evals", fmt::format("expected an integer >= 1; got {}", *n));
    }
    out.max_evals = static_cast<std::uint64_t>(*n);
  }
  if (YAML::Node v = node["time_limit_s"]; v.IsDefined()) {
    auto s = r.number(v, "search.time_limit_s");
    if (!s) return std::unexpected(s.error());
    if (!(std::isfinite(*s) && *s > 0)) {
      return r.fail(v, "search.time_limit_s",
                    fmt::format("expected a number of seconds > 0; got {}", *s));
    }
    out.time_limit_s = *s;
  }
  if (YAML::Node v = node["seed"]; v.IsDefined()) {
    auto n = r.integer(v, "search.seed");
    if (!n) return std::unexpected(n.error());
    if (*n < 0) {
      return r.fail(v, "search.seed", fmt::format("expected an integer >= 0; got {}", *n));
    }
    out.seed = static_cast<std::uint64_t>(*n);
  }
  return {};
}

}  // namespace ktune::spec_detail
