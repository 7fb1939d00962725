// The problems: and args: sections: size bindings, and each kernel argument with its role, dtype
// and the expressions that give its shape, strides, offset or value.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "spec/spec_expr.h"
#include "spec/spec_sections.h"

namespace ktune::spec_detail {
namespace {

std::vector<std::string> names_of(const ProblemDecl& decl) {
  std::vector<std::string> names;
  for (const auto& [name, value] : decl.sizes) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Status parse_problem(const Reader& r, const YAML::Node& node, const std::string& path,
                     ProblemDecl& out) {
  if (auto ok = r.expect_map(node, path); !ok) return ok;
  out.line = node.Mark().line + 1;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    auto key = r.string(kv.first, path);
    if (!key) return std::unexpected(key.error());
    if (!seen.insert(*key).second) return r.fail(kv.first, field(path, *key), "duplicate key");
    if (*key == "name") {
      auto name = r.string(kv.second, field(path, "name"));
      if (!name) return std::unexpected(name.error());
      out.name = *name;
      continue;
    }
    if (!is_identifier(*key)) {
      return r.fail(kv.first, field(path, *key),
                    "not a size name; expected 'name' or an identifier bound to an integer");
    }
    auto value = r.integer(kv.second, field(path, *key));
    if (!value) return std::unexpected(value.error());
    out.sizes.emplace_back(*key, *value);
  }
  if (out.name.empty()) out.name = default_problem_name(out);
  return {};
}

}  // namespace

Status check_expr(const Reader& r, const YAML::Node& node, const std::string& path,
                  const std::set<std::string>& sizes, std::string& out) {
  auto text = r.string(node, path);
  if (!text) return std::unexpected(text.error());
  auto names = expr_names(*text);
  if (!names) {
    return r.fail(node, path, fmt::format("bad expression '{}': {}", *text, names.error()));
  }
  for (const std::string& name : *names) {
    if (!sizes.contains(name)) {
      std::vector<std::string> known(sizes.begin(), sizes.end());
      return r.fail(
          node, path,
          fmt::format("'{}' in '{}' is not a problem size; expected one of {}", name, *text,
                      known.empty() ? "none (problems bind no sizes)" : join(known)));
    }
  }
  out = *text;
  return {};
}

namespace {

Status check_exprs(const Reader& r, const YAML::Node& node, const std::string& path,
                   const std::set<std::string>& sizes, std::vector<std::string>& out) {
  if (auto ok = r.expect_list(node, path); !ok) return ok;
  out.resize(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (auto ok = check_expr(r, node[i], item(path, i), sizes, out[i]); !ok) return ok;
  }
  return {};
}

Status parse_arg(const Reader& r, const YAML::Node& node, const std::string& path,
                 const std::set<std::string>& sizes, ArgDecl& out) {
  if (auto ok = r.check_keys(node, path,
                             {"name", "role", "dtype", "shape", "strides", "offset", "value",
                              "init", "tolerance", "nan_ok"});
      !ok) {
    return ok;
  }
  out.line = node.Mark().line + 1;
  auto name = r.require(node, path, "name");
  if (!name) return std::unexpected(name.error());
  auto name_text = r.identifier(*name, field(path, "name"));
  if (!name_text) return std::unexpected(name_text.error());
  out.name = *name_text;

  auto dtype_node = r.require(node, path, "dtype");
  if (!dtype_node) return std::unexpected(dtype_node.error());
  auto dtype_text = r.string(*dtype_node, field(path, "dtype"));
  if (!dtype_text) return std::unexpected(dtype_text.error());
  auto dtype = parse_dtype(*dtype_text);
  if (!dtype) {
    std::vector<std::string> names;
    for (DType d : kAllDTypes) names.emplace_back(dtype_name(d));
    return r.fail(*dtype_node, field(path, "dtype"),
                  fmt::format("unknown dtype '{}'; expected one of {}", *dtype_text, join(names)));
  }
  out.dtype = *dtype;

  std::string role;
  YAML::Node role_node = node["role"];
  if (role_node.IsDefined()) {
    auto text = r.string(role_node, field(path, "role"));
    if (!text) return std::unexpected(text.error());
    role = *text;
  }
  if (YAML::Node value = node["value"]; value.IsDefined()) {
    if (!role.empty() && role != "scalar") {
      return r.fail(role_node, field(path, "role"),
                    fmt::format("'{}' with a value; a scalar (an arg with value) has role scalar "
                                "or none, a buffer has shape and no value",
                                role));
    }
    for (const char* key : {"shape", "strides", "offset", "init", "tolerance", "nan_ok"}) {
      if (node[key].IsDefined()) {
        return r.fail(node[key], field(path, key),
                      fmt::format("scalar '{}' has a value and cannot have {}", out.name, key));
      }
    }
    out.role = ArgRole::kScalar;
    return check_expr(r, value, field(path, "value"), sizes, out.value);
  }

  if (role.empty()) {
    return r.fail(node, field(path, "role"),
                  "missing required field; expected one of in, out, inout, scratch (or value: for "
                  "a scalar)");
  }
  if (role == "in") {
    out.role = ArgRole::kIn;
  } else if (role == "out") {
    out.role = ArgRole::kOut;
  } else if (role == "inout") {
    out.role = ArgRole::kInOut;
  } else if (role == "scratch") {
    out.role = ArgRole::kScratch;
  } else if (role == "scalar") {
    return r.fail(
        node, field(path, "value"),
        fmt::format("missing required field for scalar '{}'; expected an expression", out.name));
  } else {
    return r.fail(
        role_node, field(path, "role"),
        fmt::format("unknown role '{}'; expected one of in, out, inout, scratch, scalar", role));
  }
  if (YAML::Node init = node["init"]; init.IsDefined()) {
    // An output's (or scratch buffer's) data is what the kernel writes: it starts poisoned,
    // whatever the spec says.
    if (out.role == ArgRole::kOut || out.role == ArgRole::kScratch) {
      return r.fail(init, field(path, "init"),
                    fmt::format("'{}' has role {}, whose contents the kernel writes; expected "
                                "init only on an in or inout buffer",
                                out.name, arg_role_name(out.role)));
    }
    if (auto ok = parse_init(r, init, field(path, "init"), sizes, out); !ok) return ok;
  }
  if (auto ok = parse_output_check(r, node, path, out); !ok) return ok;
  YAML::Node shape = node["shape"];
  if (!shape.IsDefined()) {
    return r.fail(node, field(path, "shape"),
                  fmt::format("missing required field for buffer '{}'; expected a list of size "
                              "expressions (or value: for a scalar)",
                              out.name));
  }
  if (auto ok = check_exprs(r, shape, field(path, "shape"), sizes, out.shape); !ok) return ok;
  if (YAML::Node strides = node["strides"]; strides.IsDefined()) {
    if (auto ok = check_exprs(r, strides, field(path, "strides"), sizes, out.strides); !ok) {
      return ok;
    }
    if (out.strides.size() != out.shape.size()) {
      return r.fail(strides, field(path, "strides"),
                    fmt::format("expected {} strides (one per dimension); got {}", out.shape.size(),
                                out.strides.size()));
    }
  }
  if (YAML::Node offset = node["offset"]; offset.IsDefined()) {
    return check_expr(r, offset, field(path, "offset"), sizes, out.offset);
  }
  return {};
}

}  // namespace

std::string default_problem_name(const ProblemDecl& decl) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : decl.sizes) parts.push_back(fmt::format("{}={}", name, value));
  return join(parts, ",");
}

Status parse_problems(const Reader& r, const YAML::Node& node, std::vector<ProblemDecl>& out,
                      std::set<std::string>& sizes) {
  if (auto ok = r.expect_list(node, "problems"); !ok) return ok;
  if (node.size() == 0) return r.fail(node, "problems", "expected at least one problem; got none");
  std::map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string path = item("problems", i);
    ProblemDecl decl;
    if (auto ok = parse_problem(r, node[i], path, decl); !ok) return ok;
    if (i > 0 && names_of(decl) != names_of(out[0])) {
      return r.fail(node[i], path,
                    fmt::format("binds sizes {}; expected the same sizes as problems[0]: {}",
                                join(names_of(decl)), join(names_of(out[0]))));
    }
    if (auto [it, fresh] = names.emplace(decl.name, i); !fresh) {
      return r.fail(node[i], field(path, "name"),
                    fmt::format("duplicate problem name '{}'; problems[{}] has it too", decl.name,
                                it->second));
    }
    out.push_back(std::move(decl));
  }
  for (const auto& [name, value] : out[0].sizes) sizes.insert(name);
  return {};
}

Status parse_args(const Reader& r, const YAML::Node& node, const std::set<std::string>& sizes,
                  std::vector<ArgDecl>& out) {
  if (auto ok = r.expect_list(node, "args"); !ok) return ok;
  std::map<std::string, std::size_t> names;
  bool has_output = false;
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string path = item("args", i);
    ArgDecl arg;
    if (auto ok = parse_arg(r, node[i], path, sizes, arg); !ok) return ok;
    if (auto [it, fresh] = names.emplace(arg.name, i); !fresh) {
      return r.fail(
          node[i]["name"], field(path, "name"),
          fmt::format("duplicate argument '{}'; args[{}] has it too", arg.name, it->second));
    }
    has_output = has_output || arg.role == ArgRole::kOut || arg.role == ArgRole::kInOut;
    out.push_back(std::move(arg));
  }
  if (!has_output) {
    return r.fail(node, "args", "no output; expected at least one buffer with role out or inout");
  }
  return {};
}

}  // namespace ktune::spec_detail
