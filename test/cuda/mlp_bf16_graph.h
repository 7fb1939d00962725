// examples/mlp_block in bf16, small, with a SiLU: two gemms whose chains (h+h_bias+a, o+y) fuse.
// Shared by the tests of CUDA graph tuning and of `ktune compile --device cuda`.
#pragma once

namespace ktune::test {

inline constexpr const char* kMlpBf16Graph = R"(name: mlp_block
inputs:
  - {name: x, dtype: bf16, shape: [64, 128]}
  - {name: w1, dtype: bf16, shape: [128, 256]}
  - {name: b1, dtype: bf16, shape: [256]}
  - {name: w2, dtype: bf16, shape: [256, 128]}
  - {name: b2, dtype: bf16, shape: [128]}
nodes:
  - {name: h, op: gemm, inputs: [x, w1]}
  - {name: h_bias, op: bias_add, inputs: [h, b1]}
  - {name: a, op: silu, inputs: [h_bias]}
  - {name: o, op: gemm, inputs: [a, w2]}
  - {name: y, op: bias_add, inputs: [o, b2]}
outputs: [y]
)";

}  // namespace ktune::test
