// The epilogue: section: steps fused after a GEMM (ktune/core/epilogue.h), given as a string
// ("bias,relu") or a list ([bias, relu]), and the checks that make the spec a GEMM a hook can
// follow: one 2-D f32 output, operand names free, an extern reference.
#include <fmt/format.h>

#include "spec/spec_sections.h"

namespace ktune::spec_detail {
Result<Epilogue> read_epilogue(const Reader& r, const YAML::Node& node) {
  if (node.IsScalar()) {
    auto text = r.string(node, "epilogue");
    if (!text) return std::unexpected(text.error());
    auto epilogue = Epilogue::parse(*text);
    if (!epilogue) return r.fail(node, "epilogue", epilogue.error().message);
    return epilogue;
  }
  if (!node.IsSequence()) {
    return r.fail(node, "epilogue",
                  fmt::format("expected a string like 'bias,relu' or a list of steps; got {}",
                              describe(node)));
  }
  // Each item alone first, so that an error points at it; then all together (duplicates).
  std::vector<std::string> items;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto text = r.string(node[i], item("epilogue", i));
    if (!text) return std::unexpected(text.error());
    if (auto one = Epilogue::parse(*text); !one || text->find(',') != std::string::npos) {
      return r.fail(node[i], item("epilogue", i),
                    one ? fmt::format("'{}' holds a comma; expected one step per item", *text)
                        : one.error().message);
    }
    items.push_back(*text);
  }
  auto epilogue = Epilogue::parse(join(items, ","));
  if (!epilogue) return r.fail(node, "epilogue", epilogue.error().message);
  return epilogue;
}

Status parse_epilogue(const Reader& r, const YAML::Node& node, Spec& spec) {
  auto epilogue = read_epilogue(r, node);
  if (!epilogue) return std::unexpected(epilogue.error());
  if (epilogue->empty()) return {};  // "none"

  std::vector<std::string> outputs;
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    const ArgDecl& a = spec.args[i];
    if (a.role != ArgRole::kOut && a.role != ArgRole::kInOut) continue;
    outputs.push_back(a.name);
    spec.output = i;
  }
  if (outputs.size() != 1) {
    return r.fail(node, "epilogue",
                  fmt::format("expected a GEMM with exactly one output (role out or inout) to "
                              "apply it to; got {} ({})",
                              outputs.size(), join(outputs)));
  }
  const ArgDecl& c = spec.args[spec.output];
  if (c.shape.size() != 2) {
    return r.fail(node, "epilogue",
                  fmt::format("output '{}' has shape [{}]; expected a 2-D shape [M, N]", c.name,
                              join(c.shape)));
  }
  if (c.dtype != DType::kF32) {
    return r.fail(node, "epilogue",
                  fmt::format("output '{}' is {}; expected f32 (the epilogue computes in f32)",
                              c.name, dtype_name(c.dtype)));
  }
  for (const EpilogueOperand& o : epilogue->operands()) {
    for (std::size_t i = 0; i < spec.args.size(); ++i) {
      if (spec.args[i].name != o.name) continue;
      return r.fail(node, "epilogue",
                    fmt::format("operand '{}' is also the name of args[{}]; expected the "
                                "epilogue's operands (appended after args) to have names of "
                                "their own",
                                o.name, i));
    }
  }
  if (spec.reference.kind == ReferenceDecl::Kind::kKernel) {
    return r.fail(node, "epilogue",
                  "a reference.kernel has no epilogue; expected reference: {extern: <name>} (the "
                  "library call followed by the epilogue) or no reference");
  }
  spec.epilogue = std::move(*epilogue);
  return {};
}

}  // namespace ktune::spec_detail
