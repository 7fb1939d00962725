// check_candidate: runs a candidate once on reset buffers and checks everything ktune promises
// about a result: no write outside its buffers, inputs unchanged, every output element written,
// no NaN, and agreement with the reference within tolerance.
#pragma once

#include <string>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/tensor/compare.h"
#include "ktune/tensor/host_buffer.h"
#include "ktune/core/outcome.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {

struct CheckResult {
  Outcome outcome = Outcome::kOk;
  std::string message;
};

// The reference's outputs: one buffer per argument (empty for in and scalar arguments).
struct ReferenceOutputs {
  std::vector<HostBuffer> outputs;
  std::vector<Tolerance> tolerances;  // by argument index
};

// Runs the reference on reset buffers; its outputs must pass the same integrity checks.
[[nodiscard]] Result<ReferenceOutputs> run_reference(const KernelFn& reference,
                                                     ProblemBuffers& buffers,
                                                     const Tolerance* tolerance);

// `reference` null: outputs are checked only for poison, NaN, redzones and modified inputs.
[[nodiscard]] CheckResult check_candidate(const KernelFn& fn, ProblemBuffers& buffers,
                                          const ReferenceOutputs* reference);

}  // namespace ktune
