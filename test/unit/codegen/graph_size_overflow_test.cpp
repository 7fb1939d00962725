// Graph sizes whose products pass int64 are refused with the file, line and field, for inputs
// and for a node's inferred output (fuzz/fuzz_graph.cpp checks the same for every input).
#include <gtest/gtest.h>

#include <string>

#include "ktune/codegen/graph.h"

namespace ktune::codegen {
namespace {

std::string error_of(const std::string& text) {
  Result<Graph> g = parse_graph(text, "g.yaml");
  return g ? std::string("parsed") : g.error().message;
}

TEST(GraphSizeOverflow, InputShape) {
  EXPECT_EQ(error_of("name: g\ninputs:\n  - {name: x, dtype: f32, shape: [2, 4611686018427387904, "
                     "4611686018427387904]}\nnodes:\n  - {name: y, op: relu, inputs: [x]}\n"
                     "outputs: [y]\n"),
            "g.yaml:3:34: inputs[0].shape: [2, 4611686018427387904, 4611686018427387904] has too "
            "many elements; expected at most 2^63 - 1");
}

TEST(GraphSizeOverflow, GemmOutput) {
  EXPECT_EQ(error_of("name: g\ninputs:\n  - {name: x, dtype: f32, shape: [4294967296, 1]}\n"
                     "  - {name: w, dtype: f32, shape: [1, 4294967296]}\nnodes:\n"
                     "  - {name: y, op: gemm, inputs: [x, w]}\noutputs: [y]\n"),
            "g.yaml:6:5: nodes[0]: the output [4294967296, 4294967296] has too many bytes; "
            "expected at most 2^63 - 1");
}

}  // namespace
}  // namespace ktune::codegen
