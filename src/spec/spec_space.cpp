// The params:, restrictions: and externs: sections. The search space is validated by building it
// (SearchSpace::create) and externs by building their choice (make_extern_choice), so the spec
// accepts exactly what those modules accept; their messages get the file and line added here.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "spec/spec_sections.h"

namespace ktune::spec_detail {
namespace {

Result<ParamValue> param_value(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    return r.fail(node, path,
                  fmt::format("expected an integer or a string; got {}", describe(node)));
  }
  // A quoted scalar ("16" in YAML or JSON) stays a string; a plain one that reads as an integer
  // is an integer.
  std::int64_t value = 0;
  if (node.Tag() != "!" && parse_int(node.Scalar(), value)) return ParamValue(value);
  return ParamValue(node.Scalar());
}

// Finds which entry made SearchSpace::create fail, to give its position.
std::unexpected<Error> locate_space_error(const Reader& r, const Error& error,
                                          const std::vector<Param>& params,
                                          const std::vector<YAML::Node>& param_keys,
                                          const std::vector<std::string>& restrictions,
                                          const std::vector<YAML::Node>& restriction_nodes,
                                          const YAML::Node& fallback,
                                          const SpaceConstants& constants) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto alone = SearchSpace::create({params[i]}, {});
    if (!alone) return r.fail(param_keys[i], field("params", params[i].name), error.message);
  }
  for (std::size_t i = 0; i < restrictions.size(); ++i) {
    auto with_one = SearchSpace::create(params, {restrictions[i]}, constants);
    if (!with_one) return r.fail(restriction_nodes[i], item("restrictions", i), error.message);
  }
  return r.fail(fallback, "params", error.message);
}

Status parse_extern(const Reader& r, const YAML::Node& node, const std::string& path,
                    const std::vector<ArgDecl>& args, std::string_view language, ExternDesc& out) {
  if (auto ok = r.check_keys(node, path, {"name", "kind", "bind"}); !ok) return ok;
  auto kind_node = r.require(node, path, "kind");
  if (!kind_node) return std::unexpected(kind_node.error());
  auto kind = r.string(*kind_node, field(path, "kind"));
  if (!kind) return std::unexpected(kind.error());
  // A kind runs where the kernel does: OpenBLAS beside C++ kernels, cuBLAS beside CUDA ones.
  std::vector<std::string> kinds;
  for (const std::string& k : extern_kinds()) {
    if (extern_kind_language(k) == language) kinds.push_back(k);
  }
  if (std::find(kinds.begin(), kinds.end(), *kind) == kinds.end()) {
    const std::string expected =
        kinds.empty() ? fmt::format("none beside a {} kernel", language)
                      : fmt::format("one of {} beside a {} kernel", join(kinds), language);
    return r.fail(*kind_node, field(path, "kind"),
                  fmt::format("unknown extern kind '{}'; expected {}", *kind, expected));
  }
  out.kind = *kind;
  if (YAML::Node name = node["name"]; name.IsDefined()) {
    auto text = r.identifier(name, field(path, "name"));
    if (!text) return std::unexpected(text.error());
    out.name = *text;
  } else {
    out.name = *kind;
    std::replace(out.name.begin(), out.name.end(), '.', '_');
  }

  auto bind = r.require(node, path, "bind");
  if (!bind) return std::unexpected(bind.error());
  if (auto ok = r.expect_map(*bind, field(path, "bind")); !ok) return ok;
  std::vector<std::string> arg_names;
  arg_names.reserve(args.size());
  for (const ArgDecl& a : args) arg_names.push_back(a.name);
  out.arg_names = arg_names;
  for (const auto& kv : *bind) {
    auto role = r.string(kv.first, field(path, "bind"));
    if (!role) return std::unexpected(role.error());
    std::string role_path = field(field(path, "bind"), *role);
    for (const auto& [seen, unused] : out.bind) {
      if (seen == *role) return r.fail(kv.first, role_path, "duplicate key");
    }
    auto value = r.string(kv.second, role_path);
    if (!value) return std::unexpected(value.error());
    // Identifiers name arguments; anything else is a literal (alpha: 1.0, trans_a: 0).
    if (is_identifier(*value) &&
        std::find(arg_names.begin(), arg_names.end(), *value) == arg_names.end()) {
      return r.fail(
          kv.second, role_path,
          fmt::format("'{}' is not an argument; expected one of {}", *value, join(arg_names)));
    }
    out.bind.emplace_back(*role, *value);
  }
  if (auto choice = make_extern_choice(out); !choice) {
    return r.fail(node, path, choice.error().message);
  }
  return {};
}

}  // namespace

Status parse_space(const Reader& r, const YAML::Node& params, const YAML::Node& restrictions,
                   Spec& spec) {
  std::vector<YAML::Node> param_keys;
  if (params.IsDefined()) {
    if (auto ok = r.expect_map(params, "params"); !ok) return ok;
    for (const auto& kv : params) {
      auto name = r.string(kv.first, "params");
      if (!name) return std::unexpected(name.error());
      std::string path = field("params", *name);
      for (const Param& p : spec.params) {
        if (p.name == *name) return r.fail(kv.first, path, "duplicate key");
      }
      if (auto ok = r.expect_list(kv.second, path); !ok) return ok;
      Param param{*name, {}};
      for (std::size_t i = 0; i < kv.second.size(); ++i) {
        auto value = param_value(r, kv.second[i], item(path, i));
        if (!value) return std::unexpected(value.error());
        param.values.push_back(std::move(*value));
      }
      spec.params.push_back(std::move(param));
      param_keys.push_back(kv.first);
    }
  }
  std::vector<YAML::Node> restriction_nodes;
  if (restrictions.IsDefined()) {
    auto list = r.strings(restrictions, "restrictions");
    if (!list) return std::unexpected(list.error());
    spec.restrictions = std::move(*list);
    for (std::size_t i = 0; i < restrictions.size(); ++i) {
      restriction_nodes.push_back(restrictions[i]);
      const YAML::Mark mark = restrictions[i].Mark();
      spec.restriction_lines.push_back(mark.is_null() ? 0 : mark.line + 1);
    }
  }
  // Names are checked against the first problem's sizes and, for a device kernel, the device
  // limits with stand-in values: the real ones come with each problem and backend.
  SpaceConstants constants;
  if (!spec.problems.empty()) {
    for (const auto& [name, value] : spec.problems.front().sizes) {
      bool param = std::any_of(spec.params.begin(), spec.params.end(),
                               [&](const Param& p) { return p.name == name; });
      if (!param) constants.emplace_back(name, static_cast<double>(value));
    }
  }
  for (const std::string& name : device_limit_names(spec.kernel.language)) {
    if (std::none_of(constants.begin(), constants.end(),
                     [&](const auto& c) { return c.first == name; })) {
      constants.emplace_back(name, 1024);
    }
  }
  auto space = SearchSpace::create(spec.params, spec.restrictions, constants);
  if (!space) {
    return locate_space_error(r, space.error(), spec.params, param_keys, spec.restrictions,
                              restriction_nodes, params.IsDefined() ? params : restrictions,
                              constants);
  }
  return {};
}

Status parse_externs(const Reader& r, const YAML::Node& node, const std::vector<ArgDecl>& args,
                     std::string_view language, std::vector<ExternDesc>& out) {
  if (auto ok = r.expect_list(node, "externs"); !ok) return ok;
  for (std::size_t i = 0; i < node.size(); ++i) {
    std::string path = item("externs", i);
    ExternDesc desc;
    if (auto ok = parse_extern(r, node[i], path, args, language, desc); !ok) return ok;
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].name == desc.name) {
        return r.fail(
            node[i], field(path, "name"),
            fmt::format("duplicate extern name '{}'; externs[{}] has it too", desc.name, j));
      }
    }
    out.push_back(std::move(desc));
  }
  return {};
}

}  // namespace ktune::spec_detail

namespace ktune {

std::vector<std::string> device_limit_names(std::string_view language) {
  if (language == "cuda") {
    return {"max_threads_per_block",
            "max_shared_bytes_per_block",
            "warp_size",
            "sm_count",
            "cc_major",
            "cc_minor"};
  }
  if (language == "opencl") {
    return {"max_work_group_size", "local_mem_bytes", "max_threads_per_block",
            "max_shared_bytes_per_block"};
  }
  return {};
}

SpaceConstants spec_space_constants(const Spec& spec, const SpecTarget& target) {
  SpaceConstants out;
  // A size with a parameter's name stays unseen: the parameter is what restrictions mean.
  auto is_param = [&](const std::string& name) {
    return std::any_of(spec.params.begin(), spec.params.end(),
                       [&](const Param& p) { return p.name == name; });
  };
  if (target.problem != nullptr) {
    for (const auto& [name, value] : target.problem->sizes) {
      if (!is_param(name)) out.emplace_back(name, static_cast<double>(value));
    }
  }
  for (const auto& [name, value] : target.limits) {
    const std::vector<std::string> known = device_limit_names(spec.kernel.language);
    if (std::find(known.begin(), known.end(), name) != known.end()) out.emplace_back(name, value);
  }
  return out;
}

Result<SearchSpace> spec_search_space(const Spec& spec, const SpecTarget& target) {
  auto space =
      SearchSpace::create(spec.params, spec.restrictions, spec_space_constants(spec, target));
  if (!space) {
    return make_error(space.error().code,
                      fmt::format("{}: {}", spec.file.string(), space.error().message));
  }
  return space;
}

Status check_space_not_empty(const Spec& spec, const SpecTarget& target) {
  auto space =
      SearchSpace::create(spec.params, spec.restrictions, spec_space_constants(spec, target));
  if (!space) return std::unexpected(space.error());
  auto cause = space->empty_cause();
  if (!cause) return std::unexpected(cause.error());
  if (!*cause) return {};
  const std::size_t i = (*cause)->restriction;
  const int line = i < spec.restriction_lines.size() ? spec.restriction_lines[i] : 0;
  const std::string where =
      line > 0 ? fmt::format("{}:{}", spec.file.string(), line) : spec.file.string();
  const std::uint64_t n = (*cause)->removed;
  return make_error(
      ErrorCode::kInvalidArgument,
      fmt::format("{}: restrictions[{}] (`{}`) removed the last {} config{}: no config is left "
                  "to tune; relax it or the restrictions before it (`ktune space` shows what "
                  "each one removes)",
                  where, i, spec.restrictions[i], n, n == 1 ? "" : "s"));
}

}  // namespace ktune
