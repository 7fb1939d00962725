// metrics: named expressions over the problem's sizes and time_s (a candidate's median in
// seconds), e.g. `GFLOP/s: 2*M*N*K / time_s / 1e9`. Checked when the spec loads; evaluated for
// each measured candidate through the functions spec_metrics() builds, so that the select
// module shows and stores them without knowing the expression code.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "spec/spec_expr.h"
#include "spec/spec_sections.h"

namespace ktune {
namespace spec_detail {

Status parse_metrics(const Reader& r, const YAML::Node& node, const std::set<std::string>& sizes,
                     std::vector<MetricDecl>& out) {
  if (auto ok = r.expect_map(node, "metrics"); !ok) return ok;
  std::set<std::string> seen;
  // yaml-cpp keeps a mapping in the file's order: the table's columns follow it.
  for (const auto& kv : node) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar() || key.Scalar().empty()) {
      return r.fail(key, "metrics", fmt::format("expected a metric's name; got {}", describe(key)));
    }
    const std::string& name = key.Scalar();
    const std::string path = field("metrics", name);
    if (name.find_first_of("\n\r\t") != std::string::npos) {
      return r.fail(key, path, "a metric's name is one line of text; got a control character");
    }
    if (!seen.insert(name).second) return r.fail(key, path, "duplicate key");
    auto text = r.string(kv.second, path);
    if (!text) return std::unexpected(text.error());
    auto names = expr_names(*text);
    if (!names) {
      return r.fail(kv.second, path, fmt::format("bad expression '{}': {}", *text, names.error()));
    }
    for (const std::string& n : *names) {
      if (n == "time_s" || sizes.contains(n)) continue;
      std::vector<std::string> known(sizes.begin(), sizes.end());
      known.push_back("time_s");
      return r.fail(kv.second, path,
                    fmt::format("'{}' in '{}' is neither a problem size nor time_s; expected "
                                "one of {}",
                                n, *text, join(known)));
    }
    out.push_back(MetricDecl{name, *text, kv.second.Mark().line + 1});
  }
  return {};
}

}  // namespace spec_detail

std::vector<SpecMetric> spec_metrics(const Spec& spec, const ProblemDecl& decl) {
  std::vector<std::pair<std::string, double>> sizes;
  for (const auto& [name, value] : decl.sizes) sizes.emplace_back(name, static_cast<double>(value));
  std::vector<SpecMetric> out;
  out.reserve(spec.metrics.size());
  for (const MetricDecl& m : spec.metrics) {
    out.push_back({m.name, [expr = m.expr, sizes](double time_s) {
                     auto bindings = sizes;
                     bindings.emplace_back("time_s", time_s);
                     auto v = spec_detail::eval_real_expr(expr, bindings);
                     return v ? *v : std::numeric_limits<double>::quiet_NaN();
                   }});
  }
  return out;
}

}  // namespace ktune
