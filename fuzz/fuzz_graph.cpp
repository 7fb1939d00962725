// Fuzz target: the graph reader of `ktune compile` (parse_graph: YAML or JSON, then
// validate_graph), then every tensor's size. A graph it accepts must survive graph_to_json and read
// back: the file the tools write is one they can read.
#include <string>
#include <string_view>

#include "core/checked_size.h"
#include "fuzz_target.h"
#include "ktune/codegen/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ktune;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // examples/mlp_block: the seeds' gemm_spec (../matmul_cpu/matmul.yaml) resolves from there.
  static const std::filesystem::path file =
      std::filesystem::path(KTUNE_FUZZ_SOURCE_DIR) / "examples/mlp_block/fuzz.yaml";
  Result<codegen::Graph> graph = codegen::parse_graph(text, file);
  if (!graph) return 0;
  // What `ktune compile` computes next: every tensor's size, to plan its memory.
  // The reader must have refused sizes whose arithmetic passes int64 (checked here too, for
  // builds without UBSan).
  for (const codegen::GraphInput& in : graph->inputs) {
    if (!checked_storage_bytes(in.spec))
      fuzz::property_failed("an input has a size", in.name.c_str());
    (void)in.spec.storage_bytes();
  }
  for (const codegen::GraphNode& n : graph->nodes) {
    if (!checked_storage_bytes(n.out)) fuzz::property_failed("a node has a size", n.name.c_str());
    (void)n.out.storage_bytes();
  }
  const std::string json = codegen::graph_to_json(*graph);
  Result<codegen::Graph> again = codegen::parse_graph(json, file);
  if (!again)
    fuzz::property_failed("graph_to_json of an accepted graph reads back",
                          again.error().message.c_str());
  return 0;
}
