// args[i].tolerance: and args[i].nan_ok: how one output is checked against the reference, when
// the spec-level tolerance (or the dtype's default) is wrong for it: a softmax's probabilities
// beside its log-sum-exp, log(x) on a domain where NaN is the right answer.
#include <fmt/format.h>

#include "spec/spec_sections.h"

namespace ktune::spec_detail {
namespace {

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// A check on anything but an output would be silently unused: refused where it stands.
Status refuse_on_non_output(const Reader& r, const YAML::Node& at, const std::string& path,
                            const ArgDecl& out, std::string_view key) {
  return r.fail(at, field(path, key),
                fmt::format("'{}' has role {}, which is never compared; expected {} only on an "
                            "out or inout buffer",
                            out.name, arg_role_name(out.role), key));
}

}  // namespace

Status parse_tolerance_fields(const Reader& r, const YAML::Node& node, const std::string& path,
                              Tolerance& t) {
  if (auto ok = r.check_keys(node, path, {"rtol", "atol", "max_rel_l2", "rms_atol"}); !ok) {
    return ok;
  }
  std::pair<const char*, double*> fields[] = {{"rtol", &t.rtol},
                                              {"atol", &t.atol},
                                              {"max_rel_l2", &t.max_rel_l2},
                                              {"rms_atol", &t.rms_atol}};
  for (auto [key, dest] : fields) {
    YAML::Node value = node[key];
    if (!value.IsDefined()) continue;
    auto number = r.number(value, field(path, key));
    if (!number) return std::unexpected(number.error());
    if (!(*number >= 0)) {
      return r.fail(value, field(path, key),
                    fmt::format("expected a number >= 0; got {}", *number));
    }
    *dest = *number;
  }
  return {};
}

Status parse_output_check(const Reader& r, const YAML::Node& node, const std::string& path,
                          ArgDecl& out) {
  if (YAML::Node tol = node["tolerance"]; tol.IsDefined()) {
    if (!is_output(out.role)) return refuse_on_non_output(r, tol, path, out, "tolerance");
    Tolerance t = default_tolerance(out.dtype);
    if (auto ok = parse_tolerance_fields(r, tol, field(path, "tolerance"), t); !ok) return ok;
    out.tolerance = t;
  }
  if (YAML::Node nan_ok = node["nan_ok"]; nan_ok.IsDefined()) {
    if (!is_output(out.role)) return refuse_on_non_output(r, nan_ok, path, out, "nan_ok");
    const std::string at = field(path, "nan_ok");
    const std::string text = nan_ok.IsScalar() ? nan_ok.Scalar() : "";
    if (text != "true" && text != "false") {
      return r.fail(nan_ok, at, fmt::format("got {}; expected true or false", describe(nan_ok)));
    }
    if (text == "true" && !is_floating(out.dtype)) {
      return r.fail(nan_ok, at,
                    fmt::format("'{}' is {}, which has no NaN; expected nan_ok only on a "
                                "floating-point output",
                                out.name, dtype_name(out.dtype)));
    }
    out.nan_ok = text == "true";
  }
  return {};
}

}  // namespace ktune::spec_detail
