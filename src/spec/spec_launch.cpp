// kernel.launch and kernel.size_defines: a device kernel's launch steps, checked once the
// problems (size names) and params are known, and the entries of CUDA and OpenCL kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "spec/spec_expr.h"
#include "spec/spec_sections.h"

namespace ktune::spec_detail {
namespace {

constexpr std::size_t kMaxEntryBytes = 1024;

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The {{NAME}} placeholders of an entry, in order; an error text for an unclosed or empty one.
std::expected<std::vector<std::string>, std::string> placeholders(std::string_view entry) {
  std::vector<std::string> out;
  for (std::size_t at = entry.find("{{"); at != std::string_view::npos; at = entry.find("{{", at)) {
    std::size_t end = entry.find("}}", at + 2);
    if (end == std::string_view::npos) return std::unexpected("'{{' without '}}'");
    std::string name(entry.substr(at + 2, end - at - 2));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!is_identifier(name)) {
      return std::unexpected(fmt::format("'{{{{{}}}}}' does not name a parameter", name));
    }
    out.push_back(std::move(name));
    at = end + 2;
  }
  return out;
}

}  // namespace

std::expected<void, std::string> check_cuda_entry(std::string_view entry) {
  if (entry.empty() || entry.size() > kMaxEntryBytes) {
    return std::unexpected(fmt::format("expected 1 to {} characters", kMaxEntryBytes));
  }
  std::size_t i = 0;
  while (i < entry.size() && (is_ident_char(entry[i]) || entry[i] == ':')) ++i;
  const std::string_view name = entry.substr(0, i);
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') || name.back() == ':') {
    return std::unexpected("expected a function name, e.g. reduce or reduce<{{BLOCK}}, 4>");
  }
  std::string_view rest = entry.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return {};
  if (rest.front() != '<' || rest.back() != '>') {
    return std::unexpected("expected template arguments in <...> after the name");
  }
  int depth = 0;
  for (char c : rest) {
    if (c == ';' || c == '"' || c == '\'' || c == '\n' || c == '\\' || c == '#') {
      return std::unexpected(fmt::format("'{}' cannot appear in an entry", c));
    }
    depth += c == '<' ? 1 : c == '>' ? -1 : 0;
    if (depth < 0) return std::unexpected("unbalanced '>'");
  }
  if (depth != 0) return std::unexpected("unbalanced '<'");
  return {};
}

namespace {

std::set<std::string> size_names(const Spec& spec) {
  std::set<std::string> out;
  for (const ProblemDecl& p : spec.problems) {
    for (const auto& [name, value] : p.sizes) out.insert(name);
  }
  return out;
}

// An expression over problem sizes and integer parameters.
// `joined`: the expression's text when it is not the node's own (rejoin).
Status check_launch_expr(const Reader& r, const YAML::Node& node, const std::string& path,
                         const Spec& spec, const std::set<std::string>& sizes, std::string& out,
                         const std::string* joined = nullptr) {
  auto text = joined ? Result<std::string>(*joined) : r.string(node, path);
  if (!text) return std::unexpected(text.error());
  auto names = expr_names(*text);
  if (!names)
    return r.fail(node, path, fmt::format("bad expression '{}': {}", *text, names.error()));
  for (const std::string& name : *names) {
    if (sizes.contains(name)) continue;
    auto param = std::find_if(spec.params.begin(), spec.params.end(),
                              [&](const Param& p) { return p.name == name; });
    if (param != spec.params.end()) {
      bool all_ints = std::all_of(param->values.begin(), param->values.end(), [](const auto& v) {
        return std::holds_alternative<std::int64_t>(v);
      });
      if (all_ints) continue;
      return r.fail(
          node, path,
          fmt::format("'{}' in '{}' is a string parameter; expected integers only", name, *text));
    }
    std::vector<std::string> known(sizes.begin(), sizes.end());
    for (const Param& p : spec.params) known.push_back(p.name);
    return r.fail(node, path,
                  fmt::format("unknown name '{}' in '{}'; expected a problem size or a parameter "
                              "({})",
                              name, *text, known.empty() ? "none" : join(known)));
  }
  // A constant expression is checked now: a grid or block of zero launches nothing.
  if (names->empty()) {
    auto value = eval_expr(*text, {});
    if (!value) return r.fail(node, path, fmt::format("'{}': {}", *text, value.error()));
    const double low = path.ends_with("shared_bytes") ? 0 : 1;
    if (*value < low || *value != std::floor(*value)) {
      return r.fail(node, path,
                    fmt::format("'{}' is {}; expected a whole number >= {}", *text, *value, low));
    }
  }
  out = *text;
  return {};
}

// YAML splits a flow list at every comma, also inside parentheses: `[ceil_div(N, B)]` reads as
// "ceil_div(N" and "B)". Items are joined back until their parentheses balance (an unbalanced
// item is never an expression of its own), each with the node it started at.
std::vector<std::pair<std::string, YAML::Node>> rejoin(const Reader& r, const YAML::Node& node,
                                                       const std::string& path, Status& status) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  int depth = 0;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto text = r.string(node[i], item(path, i));
    if (!text) {
      status = std::unexpected(text.error());
      return {};
    }
    if (depth > 0) {
      out.back().first += ", " + *text;
    } else {
      out.emplace_back(*text, node[i]);
    }
    for (char c : *text) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  }
  return out;
}

Status check_dims(const Reader& r, const YAML::Node& node, const std::string& path,
                  const Spec& spec, const std::set<std::string>& sizes,
                  std::vector<std::string>& out) {
  if (node.IsScalar()) {  // grid: N / 256 is [N / 256]
    out.resize(1);
    return check_launch_expr(r, node, path, spec, sizes, out[0]);
  }
  if (auto ok = r.expect_list(node, path); !ok) return ok;
  Status status;
  const std::vector<std::pair<std::string, YAML::Node>> items = rejoin(r, node, path, status);
  if (!status) return status;
  if (items.size() < 1 || items.size() > 3) {
    return r.fail(node, path, fmt::format("expected 1 to 3 expressions; got {}", items.size()));
  }
  out.resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (auto ok = check_launch_expr(r, items[i].second, item(path, i), spec, sizes, out[i],
                                    &items[i].first);
        !ok) {
      return ok;
    }
  }
  return {};
}

Status check_entry(const Reader& r, const YAML::Node& node, const std::string& path,
                   const Spec& spec, const std::string& language, std::string_view entry) {
  if (language == "cuda") {
    if (auto ok = check_cuda_entry(entry); !ok) {
      return r.fail(node, path, fmt::format("'{}': {}", entry, ok.error()));
    }
  } else if (!is_identifier(entry)) {
    return r.fail(node, path,
                  fmt::format("'{}' is not an identifier; expected the {} kernel's name "
                              "(template arguments are for cuda only)",
                              entry, language));
  }
  auto names = placeholders(entry);
  if (!names) return r.fail(node, path, fmt::format("'{}': {}", entry, names.error()));
  for (const std::string& name : *names) {
    bool known = std::any_of(spec.params.begin(), spec.params.end(),
                             [&](const Param& p) { return p.name == name; });
    if (!known) {
      std::vector<std::string> params;
      for (const Param& p : spec.params) params.push_back(p.name);
      return r.fail(node, path,
                    fmt::format("'{{{{{}}}}}' in '{}' is not a parameter; expected one of {}", name,
                                entry, params.empty() ? "none (no params)" : join(params)));
    }
  }
  return {};
}

Status parse_step(const Reader& r, const YAML::Node& node, const std::string& path,
                  const Spec& spec, const std::set<std::string>& sizes, const KernelDecl& kernel,
                  LaunchDecl& out) {
  if (auto ok = r.expect_map(node, path); !ok) return ok;
  if (auto ok = r.check_keys(node, path, {"entry", "grid", "block", "shared_bytes"}); !ok) {
    return ok;
  }
  out.line = node.Mark().line + 1;
  if (YAML::Node entry = node["entry"]; entry.IsDefined()) {
    auto text = r.string(entry, field(path, "entry"));
    if (!text) return std::unexpected(text.error());
    if (auto ok = check_entry(r, entry, field(path, "entry"), spec, kernel.language, *text); !ok) {
      return ok;
    }
    out.entry = *text;
  }
  auto grid = r.require(node, path, "grid");
  if (!grid) return std::unexpected(grid.error());
  if (auto ok = check_dims(r, *grid, field(path, "grid"), spec, sizes, out.grid); !ok) return ok;
  if (YAML::Node block = node["block"]; block.IsDefined()) {
    if (auto ok = check_dims(r, block, field(path, "block"), spec, sizes, out.block); !ok) {
      return ok;
    }
  }
  if (YAML::Node shared = node["shared_bytes"]; shared.IsDefined()) {
    if (kernel.language != "cuda") {
      return r.fail(shared, field(path, "shared_bytes"),
                    "dynamic shared memory is for cuda kernels; an OpenCL kernel declares its "
                    "__local arrays");
    }
    if (auto ok = check_launch_expr(r, shared, field(path, "shared_bytes"), spec, sizes,
                                    out.shared_bytes);
        !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace

Status parse_launch(const Reader& r, const YAML::Node& kernel_node, const std::string& path,
                    const Spec& spec, KernelDecl& kernel) {
  const std::set<std::string> sizes = size_names(spec);
  if (YAML::Node defines = kernel_node["size_defines"]; defines.IsDefined()) {
    auto names = r.strings(defines, field(path, "size_defines"));
    if (!names) return std::unexpected(names.error());
    for (std::size_t i = 0; i < names->size(); ++i) {
      const std::string& name = (*names)[i];
      if (!sizes.contains(name)) {
        std::vector<std::string> known(sizes.begin(), sizes.end());
        return r.fail(defines[i], item(field(path, "size_defines"), i),
                      fmt::format("'{}' is not a problem size; expected one of {}", name,
                                  known.empty() ? "none (problems bind no sizes)" : join(known)));
      }
      bool clash = std::any_of(spec.params.begin(), spec.params.end(),
                               [&](const Param& p) { return p.name == name; });
      if (clash) {
        return r.fail(defines[i], item(field(path, "size_defines"), i),
                      fmt::format("'{}' is both a problem size and a parameter; expected one "
                                  "#define per name",
                                  name));
      }
    }
    kernel.size_defines = std::move(*names);
  }
  YAML::Node entry = kernel_node["entry"];
  if (entry.IsDefined()) {
    if (auto ok = check_entry(r, entry, field(path, "entry"), spec, kernel.language, kernel.entry);
        !ok) {
      return ok;
    }
  }
  YAML::Node launch = kernel_node["launch"];
  const bool device = kernel.language != "c++";
  if (!device) {
    if (launch.IsDefined()) {
      return r.fail(launch, field(path, "launch"),
                    "a c++ kernel is called once on the host; launch is for language cuda or "
                    "opencl");
    }
    return {};
  }
  if (!launch.IsDefined()) {
    return r.fail(kernel_node, path,
                  fmt::format("missing 'launch' (grid and block) for the {} kernel; expected "
                              "e.g. launch: {{grid: [ceil_div(N, B)], block: [B]}}",
                              kernel.language));
  }
  const std::string launch_path = field(path, "launch");
  if (launch.IsSequence()) {
    if (launch.size() < 1 || launch.size() > 16) {
      return r.fail(launch, launch_path,
                    fmt::format("expected 1 to 16 steps; got {}", launch.size()));
    }
    kernel.launch.resize(launch.size());
    for (std::size_t i = 0; i < launch.size(); ++i) {
      if (auto ok =
              parse_step(r, launch[i], item(launch_path, i), spec, sizes, kernel, kernel.launch[i]);
          !ok) {
        return ok;
      }
    }
  } else {
    kernel.launch.resize(1);
    if (auto ok = parse_step(r, launch, launch_path, spec, sizes, kernel, kernel.launch[0]); !ok) {
      return ok;
    }
  }
  for (std::size_t i = 0; i < kernel.launch.size(); ++i) {
    LaunchDecl& step = kernel.launch[i];
    if (step.entry.empty()) step.entry = kernel.entry;
    if (step.entry.empty()) {
      return r.fail(launch[i], item(launch_path, i),
                    "missing 'entry'; expected one per step, or kernel.entry for them all");
    }
  }
  if (kernel.entry.empty()) kernel.entry = kernel.launch.front().entry;
  return {};
}

}  // namespace ktune::spec_detail

namespace ktune::spec_detail {
namespace {

// The bindings of one config on one problem: the problem's sizes, then the integer parameters.
Bindings config_bindings(const Bindings& sizes, const Config& config) {
  Bindings out = sizes;
  for (std::size_t i = 0; i < config.names.size(); ++i) {
    if (const auto* v = std::get_if<std::int64_t>(&config.values[i])) {
      out.emplace_back(config.names[i], *v);
    }
  }
  return out;
}

}  // namespace

std::string render_entry(std::string_view entry, const Config& config) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t open = entry.find("{{"); open != std::string_view::npos;
       open = entry.find("{{", at)) {
    const std::size_t close = entry.find("}}", open + 2);
    if (close == std::string_view::npos) break;  // parse_launch refused it
    std::string name(entry.substr(open + 2, close - open - 2));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    out += entry.substr(at, open - at);
    const ParamValue* v = config.find(name);
    out += v ? param_value_str(*v) : "{{" + name + "}}";
    at = close + 2;
  }
  out += entry.substr(at);
  return out;
}

Result<std::vector<LaunchGeometry>> eval_launch(const Spec& spec, const KernelDecl& kernel,
                                                const ProblemDecl& problem, const Config& config) {
  const Bindings bindings = config_bindings(problem.sizes, config);
  const bool opencl = kernel.language == "opencl";
  std::vector<LaunchGeometry> out;
  for (const LaunchDecl& step : kernel.launch) {
    auto value = [&](const std::string& what, const std::string& expr,
                     std::int64_t low) -> Result<std::uint64_t> {
      auto v = eval_expr(expr, bindings);
      auto fail = [&](const std::string& why) {
        return make_error(
            ErrorCode::kInvalidArgument,
            fmt::format("{}:{}: {} `{}` {} on problem {}{}{}", spec.file.string(), step.line, what,
                        expr, why,
                        problem.name.empty() ? default_problem_name(problem) : problem.name,
                        config.names.empty() ? "" : " with ", config.str()));
      };
      if (!v) return fail(v.error());
      const double rounded = std::round(*v);
      if (std::abs(*v - rounded) > 1e-9 * std::max(1.0, std::abs(*v))) {
        return fail(fmt::format("is {}, not a whole number (ceil_div(a, b) rounds up)", *v));
      }
      if (rounded < static_cast<double>(low) || rounded > 9.0e15) {
        return fail(fmt::format("is {}; expected {} or more", rounded, low));
      }
      return static_cast<std::uint64_t>(rounded);
    };
    LaunchGeometry g;
    for (std::size_t d = 0; d < step.grid.size(); ++d) {
      auto v = value(fmt::format("launch grid[{}]", d), step.grid[d], 1);
      if (!v) return std::unexpected(v.error());
      g.grid[d] = *v;
    }
    for (std::size_t d = 0; d < step.block.size(); ++d) {
      auto v = value(fmt::format("launch block[{}]", d), step.block[d], 1);
      if (!v) return std::unexpected(v.error());
      g.block[d] = *v;
    }
    if (!step.shared_bytes.empty()) {
      auto v = value("launch shared_bytes", step.shared_bytes, 0);
      if (!v) return std::unexpected(v.error());
      if (*v > 0xffffffffULL)
        return make_error(ErrorCode::kInvalidArgument, "shared_bytes > 4 GiB");
      g.shared_bytes = static_cast<std::uint32_t>(*v);
    }
    // OpenCL takes the global size in work-items: the spec's grid counts work-groups, as CUDA's
    // counts blocks, so that one geometry reads the same in both languages.
    if (opencl) {
      for (std::size_t d = 0; d < 3; ++d) g.grid[d] *= g.block[d];
    }
    out.push_back(g);
  }
  return out;
}

std::optional<std::string> over_limits(const std::vector<LaunchGeometry>& steps,
                                       const DeviceLimits& limits, bool opencl) {
  auto limit = [&](std::string_view name) -> std::optional<double> {
    for (const auto& [n, v] : limits) {
      if (n == name) return v;
    }
    return std::nullopt;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const LaunchGeometry& g = steps[i];
    const double threads = double(g.block[0]) * double(g.block[1]) * double(g.block[2]);
    if (auto max = limit("max_threads_per_block"); max && threads > *max) {
      return fmt::format("step {}: {} threads per block > max_threads_per_block {}", i, threads,
                         *max);
    }
    if (auto max = limit("max_shared_bytes_per_block"); max && !opencl && g.shared_bytes > *max) {
      return fmt::format("step {}: {} bytes of shared memory > max_shared_bytes_per_block {}", i,
                         g.shared_bytes, *max);
    }
    if (!opencl && !limits.empty()) {
      // CUDA's fixed bounds on each dimension (every compute capability since 3.0).
      static constexpr std::uint64_t kBlock[3] = {1024, 1024, 64};
      static constexpr std::uint64_t kGrid[3] = {2147483647, 65535, 65535};
      for (std::size_t d = 0; d < 3; ++d) {
        if (g.block[d] > kBlock[d]) {
          return fmt::format("step {}: block[{}] = {} > {}", i, d, g.block[d], kBlock[d]);
        }
        if (g.grid[d] > kGrid[d]) {
          return fmt::format("step {}: grid[{}] = {} > {}", i, d, g.grid[d], kGrid[d]);
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace ktune::spec_detail
