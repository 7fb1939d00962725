// Graph validation and shape inference, op names, and GraphBuilder. The file reader is in
// graph_parse.cpp.
#include "ktune/codegen/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <map>
#include <utility>

#include "core/checked_size.h"

namespace ktune::codegen {
namespace {

struct OpInfo {
  OpKind op;
  std::string_view name;
  int arity;
};

constexpr OpInfo kOps[] = {
    {OpKind::kGemm, "gemm", 2},
    {OpKind::kBiasAdd, "bias_add", 2},
    {OpKind::kRowBiasAdd, "row_bias_add", 2},
    {OpKind::kRelu, "relu", 1},
    {OpKind::kGelu, "gelu", 1},
    {OpKind::kSilu, "silu", 1},
    {OpKind::kAdd, "add", 2},
    {OpKind::kScale, "scale", 1},
    {OpKind::kTranspose, "transpose", 1},
    {OpKind::kRowSoftmax, "row_softmax", 1},
    {OpKind::kRowSum, "row_sum", 1},
    {OpKind::kLayerNorm, "layer_norm", 3},
};

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string shape_str(const TensorSpec& t) { return fmt::format("[{}]", fmt::join(t.sizes, ", ")); }

std::unexpected<Error> fail(const std::string& where, const std::string& path,
                            const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}: {}", where, path, what));
}

// Where a value comes from: an input, or the node with this index.
struct Definition {
  bool is_input = true;
  std::size_t index = 0;
  TensorSpec spec;
};

// The output spec of `n` from its inputs' specs, or what is wrong with them.
std::expected<TensorSpec, std::string> infer(const GraphNode& n,
                                             const std::vector<const TensorSpec*>& in) {
  const TensorSpec& x = *in[0];
  auto need_rank = [&](const TensorSpec& t, std::size_t rank,
                       const char* what) -> std::expected<void, std::string> {
    if (t.sizes.size() == rank) return {};
    return std::unexpected(fmt::format("{} must have rank {}; got {}", what, rank, shape_str(t)));
  };
  switch (n.op) {
    case OpKind::kGemm: {
      const TensorSpec& b = *in[1];
      if (auto ok = need_rank(x, 2, "A of gemm"); !ok) return std::unexpected(ok.error());
      if (auto ok = need_rank(b, 2, "B of gemm"); !ok) return std::unexpected(ok.error());
      if (x.sizes[1] != b.sizes[0]) {
        return std::unexpected(
            fmt::format("shape mismatch: gemm needs A[M, K] and B[K, N]; got A{} and B{}",
                        shape_str(x), shape_str(b)));
      }
      return TensorSpec::contiguous(x.dtype, {x.sizes[0], b.sizes[1]});
    }
    case OpKind::kBiasAdd: {
      const TensorSpec& b = *in[1];
      if (auto ok = need_rank(x, 2, "X of bias_add"); !ok) return std::unexpected(ok.error());
      if (b.sizes.size() != 1 || b.sizes[0] != x.sizes[1]) {
        return std::unexpected(
            fmt::format("shape mismatch: bias_add needs X[M, N] and b[N]; got X{} and b{}",
                        shape_str(x), shape_str(b)));
      }
      return TensorSpec::contiguous(x.dtype, x.sizes);
    }
    case OpKind::kRowBiasAdd: {
      const TensorSpec& b = *in[1];
      if (auto ok = need_rank(x, 2, "X of row_bias_add"); !ok) return std::unexpected(ok.error());
      if (b.sizes.size() != 1 || b.sizes[0] != x.sizes[0]) {
        return std::unexpected(
            fmt::format("shape mismatch: row_bias_add needs X[M, N] and b[M]; got X{} and b{}",
                        shape_str(x), shape_str(b)));
      }
      return TensorSpec::contiguous(x.dtype, x.sizes);
    }
    case OpKind::kAdd:
      if (in[1]->sizes != x.sizes) {
        return std::unexpected(fmt::format("shape mismatch: add needs equal shapes; got {} and {}",
                                           shape_str(x), shape_str(*in[1])));
      }
      return TensorSpec::contiguous(x.dtype, x.sizes);
    case OpKind::kRelu:
    case OpKind::kGelu:
    case OpKind::kSilu:
    case OpKind::kScale:
      return TensorSpec::contiguous(x.dtype, x.sizes);
    case OpKind::kTranspose:
      if (auto ok = need_rank(x, 2, "X of transpose"); !ok) return std::unexpected(ok.error());
      return TensorSpec::contiguous(x.dtype, {x.sizes[1], x.sizes[0]});
    case OpKind::kRowSoftmax:
      if (auto ok = need_rank(x, 2, "X of row_softmax"); !ok) return std::unexpected(ok.error());
      return TensorSpec::contiguous(x.dtype, x.sizes);
    case OpKind::kRowSum:
      if (auto ok = need_rank(x, 2, "X of row_sum"); !ok) return std::unexpected(ok.error());
      return TensorSpec::contiguous(x.dtype, {x.sizes[0]});
    case OpKind::kLayerNorm: {
      if (auto ok = need_rank(x, 2, "X of layer_norm"); !ok) return std::unexpected(ok.error());
      const TensorSpec& gamma = *in[1];
      const TensorSpec& beta = *in[2];
      const auto is_row = [&](const TensorSpec& t) {
        return t.sizes.size() == 1 && t.sizes[0] == x.sizes[1];
      };
      if (!is_row(gamma) || !is_row(beta)) {
        return std::unexpected(fmt::format(
            "shape mismatch: layer_norm needs X[M, N], gamma[N] and beta[N]; got X{}, gamma{} "
            "and beta{}",
            shape_str(x), shape_str(gamma), shape_str(beta)));
      }
      return TensorSpec::contiguous(x.dtype, x.sizes);
    }
  }
  return std::unexpected(std::string("unknown op"));
}

Status check_input(const GraphInput& in, std::size_t i) {
  const std::string path = fmt::format("inputs[{}]", i);
  const TensorSpec& t = in.spec;
  if (t.dtype != DType::kF32 && t.dtype != DType::kF16 && t.dtype != DType::kBF16) {
    return fail(
        in.where, path + ".dtype",
        fmt::format("unsupported dtype '{}'; expected f32, f16 or bf16", dtype_name(t.dtype)));
  }
  if (t.sizes.empty() || t.sizes.size() > 8) {
    return fail(in.where, path + ".shape",
                fmt::format("expected 1 to 8 dimensions; got {}", t.sizes.size()));
  }
  for (std::int64_t s : t.sizes) {
    if (s <= 0)
      return fail(in.where, path + ".shape",
                  fmt::format("sizes must be positive; got {}", shape_str(t)));
  }
  if (!checked_numel(t.sizes)) {
    return fail(in.where, path + ".shape",
                fmt::format("{} has too many elements; expected at most 2^63 - 1", shape_str(t)));
  }
  const TensorSpec row_major = TensorSpec::contiguous(t.dtype, t.sizes);
  if (t.strides != row_major.strides || t.offset != 0) {
    return fail(in.where, path + ".strides",
                fmt::format("the codegens need row-major inputs; expected strides [{}], got [{}]",
                            fmt::join(row_major.strides, ", "), fmt::join(t.strides, ", ")));
  }
  return {};
}

}  // namespace

std::string_view op_name(OpKind op) {
  for (const OpInfo& o : kOps) {
    if (o.op == op) return o.name;
  }
  return "?";
}

std::optional<OpKind> parse_op(std::string_view name) {
  for (const OpInfo& o : kOps) {
    if (o.name == name) return o.op;
  }
  return std::nullopt;
}

int op_arity(OpKind op) {
  for (const OpInfo& o : kOps) {
    if (o.op == op) return o.arity;
  }
  return 0;
}

Status validate_graph(Graph& g) {
  const std::string graph_where =
      g.file.empty() ? fmt::format("graph '{}'", g.name) : g.file.string();
  if (!is_identifier(g.name)) {
    return fail(
        graph_where, "name",
        fmt::format("'{}' is not an identifier; it prefixes the generated functions", g.name));
  }
  std::map<std::string, Definition> defs;
  // Names of nodes, to tell "used before it is defined" from "unknown".
  std::map<std::string, std::size_t> node_index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) node_index.emplace(g.nodes[i].name, i);

  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    GraphInput& in = g.inputs[i];
    const std::string path = fmt::format("inputs[{}]", i);
    if (!is_identifier(in.name)) {
      return fail(in.where, path + ".name", fmt::format("'{}' is not an identifier", in.name));
    }
    if (defs.contains(in.name)) {
      return fail(in.where, path + ".name", fmt::format("duplicate name '{}'", in.name));
    }
    if (auto ok = check_input(in, i); !ok) return ok;
    defs.emplace(in.name, Definition{true, i, in.spec});
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    GraphNode& n = g.nodes[i];
    const std::string path = fmt::format("nodes[{}]", i);
    if (!is_identifier(n.name)) {
      return fail(n.where, path + ".name", fmt::format("'{}' is not an identifier", n.name));
    }
    if (defs.contains(n.name)) {
      return fail(n.where, path + ".name", fmt::format("duplicate name '{}'", n.name));
    }
    const int arity = op_arity(n.op);
    if (static_cast<int>(n.inputs.size()) != arity) {
      return fail(
          n.where, path + ".inputs",
          fmt::format("{} takes {} input(s); got {}", op_name(n.op), arity, n.inputs.size()));
    }
    std::vector<const TensorSpec*> in;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string& name = n.inputs[k];
      auto it = defs.find(name);
      if (it == defs.end()) {
        const std::string ipath = fmt::format("{}.inputs[{}]", path, k);
        auto later = node_index.find(name);
        if (later != node_index.end()) {
          return fail(n.where, ipath,
                      later->second == i
                          ? fmt::format("'{}' reads its own output (a cycle)", name)
                          : fmt::format("'{}' is used before it is defined (by nodes[{}]); nodes "
                                        "run in file order, so this is a cycle or a wrong order",
                                        name, later->second));
        }
        return fail(n.where, ipath,
                    fmt::format("unknown input '{}'; not a graph input or an earlier node", name));
      }
      in.push_back(&it->second.spec);
      // One dtype per node: the generated kernels do not convert their inputs.
      if (in.back()->dtype != in.front()->dtype) {
        return fail(n.where, fmt::format("{}.inputs[{}]", path, k),
                    fmt::format("dtype mismatch: '{}' is {} but '{}' is {}; every input of {} "
                                "must have one dtype",
                                name, dtype_name(in.back()->dtype), n.inputs[0],
                                dtype_name(in.front()->dtype), op_name(n.op)));
      }
    }
    auto out = infer(n, in);
    if (!out) return fail(n.where, path, out.error());
    // A gemm of two tensors that fit can still make one that does not ([M, 1] x [1, N]).
    if (!checked_storage_bytes(*out)) {
      return fail(n.where, path,
                  fmt::format("the output {} has too many bytes; expected at most 2^63 - 1",
                              shape_str(*out)));
    }
    n.out = std::move(*out);
    defs.emplace(n.name, Definition{false, i, n.out});
  }
  if (g.outputs.empty()) {
    return fail(g.outputs_where.empty() ? graph_where : g.outputs_where, "outputs",
                "a graph needs at least one output");
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string where = g.outputs_where.empty() ? graph_where : g.outputs_where;
    const std::string path = fmt::format("outputs[{}]", i);
    auto it = defs.find(g.outputs[i]);
    if (it == defs.end()) {
      return fail(where, path,
                  fmt::format("unknown output '{}'; expected a node's name", g.outputs[i]));
    }
    if (it->second.is_input) {
      return fail(
          where, path,
          fmt::format("'{}' is a graph input; outputs must be computed by a node", g.outputs[i]));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (g.outputs[j] == g.outputs[i]) {
        return fail(where, path, fmt::format("duplicate output '{}'", g.outputs[i]));
      }
    }
  }
  return {};
}

std::string_view target_name(CodegenTarget target) {
  return target == CodegenTarget::kCuda ? "cuda" : "cpu";
}

Status check_target(const Graph& g, CodegenTarget target) {
  if (target == CodegenTarget::kCuda) return {};  // every op, in f32, f16 and bf16
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const GraphInput& in = g.inputs[i];
    if (in.spec.dtype != DType::kF32) {
      return fail(in.where, fmt::format("inputs[{}].dtype", i),
                  fmt::format("the CPU codegen supports f32; got '{}' (compile with --device "
                              "cuda)",
                              dtype_name(in.spec.dtype)));
    }
  }
  return {};
}

GraphBuilder::GraphBuilder(std::string name) { graph_.name = std::move(name); }

GraphBuilder& GraphBuilder::input(std::string name, TensorSpec spec) {
  std::string where = fmt::format("graph '{}' input '{}'", graph_.name, name);
  graph_.inputs.push_back(GraphInput{std::move(name), std::move(spec), std::move(where)});
  return *this;
}

GraphBuilder& GraphBuilder::node(std::string name, OpKind op, std::vector<std::string> inputs,
                                 double alpha) {
  GraphNode n;
  n.where = fmt::format("graph '{}' node '{}'", graph_.name, name);
  n.name = std::move(name);
  n.op = op;
  n.inputs = std::move(inputs);
  n.alpha = alpha;
  graph_.nodes.push_back(std::move(n));
  return *this;
}

GraphBuilder& GraphBuilder::output(std::string name) {
  graph_.outputs.push_back(std::move(name));
  return *this;
}

GraphBuilder& GraphBuilder::gemm_spec(std::filesystem::path spec) {
  graph_.gemm_spec = std::move(spec);
  return *this;
}

Result<Graph> GraphBuilder::build() const {
  Graph g = graph_;
  if (Status s = validate_graph(g); !s) return std::unexpected(s.error());
  return g;
}

}  // namespace ktune::codegen
