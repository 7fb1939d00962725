// EpiloguePass: an epilogue (ktune/core/epilogue.h) applied in place to a GEMM's output C as a pass
// of its own, after the GEMM has run: the second half of an unfused "library GEMM + separate
// epilogue" pair (make_sequence_choice), which fused templates are measured against and verified
// against. CPU only; runs in ktune's own process, like the library calls it follows.
#pragma once

#include <string>

#include "ktune/choice/choice.h"
#include "ktune/core/epilogue.h"

namespace ktune {

enum class EpiloguePassKind {
  // Generated C++ compiled by the backend with its flags and -fopenmp: rows split across
  // threads, each row read and written once with the whole epilogue per element (the hook's
  // own body, vectorised by the compiler). The honest baseline.
  kCompiled,
  // Epilogue::apply on the host: independent of the rendered hook; the reference.
  kHost,
};

// `output` names C in the problem (f32, 2-D [M, N], contiguous); the operands are found by the
// names Epilogue::operands() gives them.
[[nodiscard]] ChoicePtr make_epilogue_pass(Epilogue epilogue, std::string output,
                                           EpiloguePassKind kind);

// The source of the compiled pass: entry `ktune_epilogue_pass(float* C, long long M,
// long long N, <operands>)`.
[[nodiscard]] std::string epilogue_pass_source(const Epilogue& epilogue);

}  // namespace ktune
