// The op: form of a spec: a built-in operator named instead of a kernel template. The spec module
// only validates it (ops live above it in DESIGN.md's layering); the CLI maps each op onto its
// candidate set (`ktune tune`: cuda.gemm onto ktune/cuda_gemm.h, as `ktune gemm` does).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "spec/spec_sections.h"

namespace ktune {
namespace {

struct OpInfo {
  std::string_view name;
  std::vector<DType> dtypes;
  std::vector<std::string> sizes;  // every problem binds exactly these, sorted
};

const std::vector<OpInfo>& ops() {
  static const std::vector<OpInfo> kOps = {
      {"cuda.gemm", {DType::kF32, DType::kF16, DType::kBF16}, {"K", "M", "N"}},
  };
  return kOps;
}

const OpInfo* find_op(std::string_view name) {
  for (const OpInfo& op : ops()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::vector<std::string> names;
  names.reserve(dtypes.size());
  for (DType d : dtypes) names.emplace_back(dtype_name(d));
  return spec_detail::join(names);
}

}  // namespace

std::vector<std::string> spec_ops() {
  std::vector<std::string> names;
  for (const OpInfo& op : ops()) names.emplace_back(op.name);
  return names;
}

std::vector<DType> spec_op_dtypes(std::string_view op) {
  const OpInfo* info = find_op(op);
  return info ? info->dtypes : std::vector<DType>{};
}

std::optional<std::int64_t> problem_size(const ProblemDecl& decl, std::string_view name) {
  for (const auto& [size, value] : decl.sizes) {
    if (size == name) return value;
  }
  return std::nullopt;
}

namespace spec_detail {
namespace {

// The kernel form's keys that the op replaces, each said plainly rather than "unknown key".
constexpr std::array<std::string_view, 6> kKernelKeys = {"kernel",       "args",    "params",
                                                         "restrictions", "externs", "reference"};

Status reject_kernel_keys(const Reader& r, const YAML::Node& root, std::string_view op) {
  for (const auto& kv : root) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) continue;  // check_keys reports it
    const std::string& name = key.Scalar();
    if (std::find(kKernelKeys.begin(), kKernelKeys.end(), name) == kKernelKeys.end()) continue;
    return r.fail(key, name,
                  fmt::format("not allowed with op: {} (the op brings its own kernels, "
                              "arguments, search space and reference); expected only name, op, "
                              "dtype, epilogue, problems, seed, search",
                              op));
  }
  return {};
}

Status check_problem_sizes(const Reader& r, const YAML::Node& node, const OpInfo& op,
                           const std::vector<ProblemDecl>& problems) {
  std::vector<std::string> bound;
  for (const auto& [name, value] : problems[0].sizes) bound.push_back(name);
  std::sort(bound.begin(), bound.end());
  if (bound != op.sizes) {
    return r.fail(node[0], item("problems", 0),
                  fmt::format("binds sizes {}; expected {} (the sizes of op {})", join(bound),
                              join(op.sizes), op.name));
  }
  for (std::size_t i = 0; i < problems.size(); ++i) {
    for (const auto& [name, value] : problems[i].sizes) {
      if (value >= 1) continue;
      return r.fail(node[i][name], field(item("problems", i), name),
                    fmt::format("expected an integer >= 1; got {}", value));
    }
  }
  return {};
}

}  // namespace

Status parse_op_spec(const Reader& r, const YAML::Node& root, Spec& spec) {
  const YAML::Node op_node = root["op"];
  auto op_name = r.string(op_node, "op");
  if (!op_name) return std::unexpected(op_name.error());
  if (auto ok = reject_kernel_keys(r, root, *op_name); !ok) return ok;
  if (auto ok =
          r.check_keys(root, "", {"name", "op", "dtype", "epilogue", "problems", "seed", "search"});
      !ok) {
    return ok;
  }
  const OpInfo* op = find_op(*op_name);
  if (!op) {
    return r.fail(op_node, "op",
                  fmt::format("unknown op '{}'; expected one of {}", *op_name, join(spec_ops())));
  }
  spec.op.name = *op_name;
  spec.op.line = op_node.Mark().line + 1;

  auto name = r.require(root, "", "name");
  if (!name) return std::unexpected(name.error());
  auto name_text = r.identifier(*name, "name");
  if (!name_text) return std::unexpected(name_text.error());
  spec.name = *name_text;

  if (YAML::Node dtype = root["dtype"]; dtype.IsDefined()) {
    auto text = r.string(dtype, "dtype");
    if (!text) return std::unexpected(text.error());
    auto parsed = parse_dtype(*text);
    if (!parsed || std::find(op->dtypes.begin(), op->dtypes.end(), *parsed) == op->dtypes.end()) {
      return r.fail(dtype, "dtype",
                    fmt::format("unsupported dtype '{}' for op {}; expected one of {}", *text,
                                op->name, dtype_list(op->dtypes)));
    }
    spec.op.dtype = *parsed;
  }
  if (YAML::Node epilogue = root["epilogue"]; epilogue.IsDefined()) {
    auto parsed = read_epilogue(r, epilogue);
    if (!parsed) return std::unexpected(parsed.error());
    spec.epilogue = std::move(*parsed);
  }
  auto problems = r.require(root, "", "problems");
  if (!problems) return std::unexpected(problems.error());
  std::set<std::string> sizes;
  if (auto ok = parse_problems(r, *problems, spec.problems, sizes); !ok) return ok;
  if (auto ok = check_problem_sizes(r, *problems, *op, spec.problems); !ok) return ok;

  if (YAML::Node search = root["search"]; search.IsDefined()) {
    if (auto ok = parse_search(r, search, spec.search); !ok) return ok;
  }
  if (YAML::Node seed = root["seed"]; seed.IsDefined()) return parse_seed(r, seed, spec);
  return {};
}

}  // namespace spec_detail
}  // namespace ktune
