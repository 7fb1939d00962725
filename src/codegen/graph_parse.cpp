// The graph file reader (YAML or JSON through yaml-cpp, for line and column numbers in errors)
// and writer (JSON through nlohmann). Reuses the spec module's positioned Reader, so that graph
// and spec files report errors the same way. The one catch of yaml-cpp's exceptions in this
// module is in parse_graph.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/checked_size.h"
#include "core/file_util.h"
#include "ktune/codegen/graph.h"
#include "spec/spec_reader.h"

namespace ktune::codegen {
namespace {

using spec_detail::field;
using spec_detail::item;
using spec_detail::Reader;

Status parse_input(const Reader& r, const YAML::Node& node, std::size_t index, GraphInput& out) {
  const std::string path = item("inputs", index);
  if (auto ok = r.check_keys(node, path, {"name", "dtype", "shape", "strides"}); !ok) return ok;
  out.where = r.where(node);
  auto name = r.require(node, path, "name");
  if (!name) return std::unexpected(name.error());
  auto text = r.identifier(*name, field(path, "name"));
  if (!text) return std::unexpected(text.error());
  out.name = *text;

  DType dtype = DType::kF32;
  if (YAML::Node d = node["dtype"]; d.IsDefined()) {
    auto s = r.string(d, field(path, "dtype"));
    if (!s) return std::unexpected(s.error());
    auto parsed = parse_dtype(*s);
    if (!parsed) return r.fail(d, field(path, "dtype"), parsed.error().message);
    dtype = *parsed;
  }
  auto shape_node = r.require(node, path, "shape");
  if (!shape_node) return std::unexpected(shape_node.error());
  if (auto ok = r.expect_list(*shape_node, field(path, "shape")); !ok) return ok;
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 0; i < shape_node->size(); ++i) {
    auto v = r.integer((*shape_node)[i], item(field(path, "shape"), i));
    if (!v) return std::unexpected(v.error());
    sizes.push_back(*v);
  }
  // TensorSpec::contiguous multiplies the sizes unchecked (one <= 0 counts as 1 there and is
  // reported by validate_graph); a product past int64 is refused here.
  std::vector<std::int64_t> counted;
  for (std::int64_t s : sizes) counted.push_back(std::max<std::int64_t>(s, 1));
  if (!checked_numel(counted)) {
    return r.fail(*shape_node, field(path, "shape"),
                  fmt::format("[{}] has too many elements; expected at most 2^63 - 1",
                              fmt::join(sizes, ", ")));
  }
  out.spec = TensorSpec::contiguous(dtype, sizes);
  if (YAML::Node st = node["strides"]; st.IsDefined()) {
    if (auto ok = r.expect_list(st, field(path, "strides")); !ok) return ok;
    if (st.size() != sizes.size()) {
      return r.fail(
          st, field(path, "strides"),
          fmt::format("expected {} strides (one per dimension); got {}", sizes.size(), st.size()));
    }
    for (std::size_t i = 0; i < st.size(); ++i) {
      auto v = r.integer(st[i], item(field(path, "strides"), i));
      if (!v) return std::unexpected(v.error());
      out.spec.strides[i] = *v;
    }
  }
  return {};
}

Status parse_node(const Reader& r, const YAML::Node& node, std::size_t index, GraphNode& out) {
  const std::string path = item("nodes", index);
  if (auto ok = r.check_keys(node, path, {"name", "op", "inputs", "alpha", "eps"}); !ok) return ok;
  out.where = r.where(node);
  auto name = r.require(node, path, "name");
  if (!name) return std::unexpected(name.error());
  auto text = r.identifier(*name, field(path, "name"));
  if (!text) return std::unexpected(text.error());
  out.name = *text;

  auto op_node = r.require(node, path, "op");
  if (!op_node) return std::unexpected(op_node.error());
  auto op_text = r.string(*op_node, field(path, "op"));
  if (!op_text) return std::unexpected(op_text.error());
  auto op = parse_op(*op_text);
  if (!op) {
    return r.fail(
        *op_node, field(path, "op"),
        fmt::format("unknown op '{}'; expected one of gemm, bias_add, row_bias_add, relu, "
                    "gelu, silu, add, scale, transpose, row_softmax, row_sum, "
                    "layer_norm",
                    *op_text));
  }
  out.op = *op;
  auto inputs = r.require(node, path, "inputs");
  if (!inputs) return std::unexpected(inputs.error());
  auto names = r.strings(*inputs, field(path, "inputs"));
  if (!names) return std::unexpected(names.error());
  out.inputs = std::move(*names);
  if (YAML::Node a = node["alpha"]; a.IsDefined()) {
    if (out.op != OpKind::kScale) return r.fail(a, field(path, "alpha"), "only scale takes alpha");
    auto v = r.number(a, field(path, "alpha"));
    if (!v) return std::unexpected(v.error());
    out.alpha = *v;
  } else if (out.op == OpKind::kScale) {
    return r.fail(node, field(path, "alpha"), "missing required field (scale needs alpha)");
  }
  if (YAML::Node e = node["eps"]; e.IsDefined()) {
    if (out.op != OpKind::kLayerNorm) {
      return r.fail(e, field(path, "eps"), "only layer_norm takes eps");
    }
    auto v = r.number(e, field(path, "eps"));
    if (!v) return std::unexpected(v.error());
    if (!(*v > 0) || !std::isfinite(*v)) {
      return r.fail(e, field(path, "eps"), fmt::format("expected a positive number; got {}", *v));
    }
    out.eps = *v;
  }
  return {};
}

Status parse_top(const Reader& r, const YAML::Node& root, const std::filesystem::path& dir,
                 Graph& g) {
  if (auto ok = r.check_keys(root, "", {"name", "gemm_spec", "inputs", "nodes", "outputs"}); !ok) {
    return ok;
  }
  auto name = r.require(root, "", "name");
  if (!name) return std::unexpected(name.error());
  auto text = r.identifier(*name, "name");
  if (!text) return std::unexpected(text.error());
  g.name = *text;
  if (YAML::Node s = root["gemm_spec"]; s.IsDefined()) {
    auto spec = r.string(s, "gemm_spec");
    if (!spec) return std::unexpected(spec.error());
    g.gemm_spec = dir / *spec;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(g.gemm_spec, ec)) {
      return r.fail(s, "gemm_spec", fmt::format("file not found: {}", g.gemm_spec.string()),
                    ErrorCode::kNotFound);
    }
  }
  auto inputs = r.require(root, "", "inputs");
  if (!inputs) return std::unexpected(inputs.error());
  if (auto ok = r.expect_list(*inputs, "inputs"); !ok) return ok;
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    g.inputs.emplace_back();
    if (auto ok = parse_input(r, (*inputs)[i], i, g.inputs.back()); !ok) return ok;
  }
  auto nodes = r.require(root, "", "nodes");
  if (!nodes) return std::unexpected(nodes.error());
  if (auto ok = r.expect_list(*nodes, "nodes"); !ok) return ok;
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    g.nodes.emplace_back();
    if (auto ok = parse_node(r, (*nodes)[i], i, g.nodes.back()); !ok) return ok;
  }
  auto outputs = r.require(root, "", "outputs");
  if (!outputs) return std::unexpected(outputs.error());
  g.outputs_where = r.where(*outputs);
  auto names = r.strings(*outputs, "outputs");
  if (!names) return std::unexpected(names.error());
  g.outputs = std::move(*names);
  return {};
}

}  // namespace

Result<Graph> parse_graph(std::string_view text, const std::filesystem::path& file) {
  Reader reader(file.string());
  Graph g;
  g.file = file;
  // The one adapter for yaml-cpp in this module: Load reports syntax errors, and any accessor
  // that throws on a malformed document ends here too.
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (auto ok = reader.expect_map(root, "top level"); !ok) return std::unexpected(ok.error());
    if (auto ok = parse_top(reader, root, file.parent_path(), g); !ok) {
      return std::unexpected(ok.error());
    }
  } catch (const YAML::ParserException& e) {
    return make_error(ErrorCode::kParse, fmt::format("{}:{}:{}: syntax error: {}", file.string(),
                                                     e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", file.string(), e.msg));
  }
  if (Status s = validate_graph(g); !s) return std::unexpected(s.error());
  return g;
}

Result<Graph> load_graph(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return make_error(
        ErrorCode::kNotFound,
        fmt::format("{}: graph file not found; expected a YAML or JSON file", file.string()));
  }
  auto text = read_file(file);
  if (!text) return std::unexpected(text.error());
  return parse_graph(*text, file);
}

std::string graph_to_json(const Graph& g) {
  nlohmann::ordered_json j;
  j["name"] = g.name;
  if (!g.gemm_spec.empty()) {
    // Relative to the graph's folder, as the file schema says.
    std::filesystem::path spec = g.gemm_spec;
    if (!g.file.empty()) spec = spec.lexically_relative(g.file.parent_path());
    j["gemm_spec"] = spec.string();
  }
  j["inputs"] = nlohmann::ordered_json::array();
  for (const GraphInput& in : g.inputs) {
    j["inputs"].push_back({{"name", in.name},
                           {"dtype", std::string(dtype_name(in.spec.dtype))},
                           {"shape", in.spec.sizes},
                           {"strides", in.spec.strides}});
  }
  j["nodes"] = nlohmann::ordered_json::array();
  for (const GraphNode& n : g.nodes) {
    nlohmann::ordered_json node = {
        {"name", n.name}, {"op", std::string(op_name(n.op))}, {"inputs", n.inputs}};
    if (n.op == OpKind::kScale) node["alpha"] = n.alpha;
    if (n.op == OpKind::kLayerNorm) node["eps"] = n.eps;
    j["nodes"].push_back(std::move(node));
  }
  j["outputs"] = g.outputs;
  return j.dump(2) + "\n";
}

}  // namespace ktune::codegen
