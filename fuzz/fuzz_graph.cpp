// Fuzz target: the graph reader of `ktune compile` (parse_graph: YAML or JSON, then
// validate_graph). A graph it accepts must survive graph_to_json and read back: the file the
// tools write is one they can read.
#include <string>
#include <string_view>

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
  const std::string json = codegen::graph_to_json(*graph);
  Result<codegen::Graph> again = codegen::parse_graph(json, file);
  if (!again) fuzz::property_failed("graph_to_json of an accepted graph reads back", again.error().message.c_str());
  return 0;
}
