// SequenceChoice: one candidate made of two that run one after the other on the same arguments,
// e.g. a library GEMM followed by a generated epilogue kernel (the unfused pair that a fused
// template competes with). Its LaunchSpec is the first's with the second's appended to `then`;
// in ktune's own process it loads both and calls them in order.
#pragma once

#include <string>

#include "ktune/choice/choice.h"

namespace ktune {

// `name` and `info` for the table; kind, support and identity combine both parts.
[[nodiscard]] ChoicePtr make_sequence_choice(std::string name, ChoicePtr first, ChoicePtr then);

}  // namespace ktune
