// The candidates of one selection as a CandidateSpace (ktune/search/strategy.h), so that a
// strategy can tell neighbours apart: each candidate's parameters as name=value pairs in, one
// coordinate per parameter out.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/search/strategy.h"

namespace ktune {

using CandidateParams = std::vector<std::pair<std::string, std::string>>;

// One coordinate per parameter name, in first-appearance order over all candidates; a
// parameter's values in first-appearance order, or sorted numerically when all of them are
// integers (so that neighbouring indices are neighbouring values). A candidate with parameters
// that lacks one of them takes an extra value "absent" at the end of that parameter's list;
// one with no parameters (a library call) gets empty coordinates.
[[nodiscard]] CandidateSpace make_candidate_space(const std::vector<CandidateParams>& params);

// A candidate's parameters: a template's Choice::params(); empty for a library choice.
[[nodiscard]] CandidateParams candidate_params(const Choice& choice);

// make_candidate_space over candidate_params of each candidate.
[[nodiscard]] CandidateSpace candidate_space_of(const std::vector<ChoicePtr>& candidates);

}  // namespace ktune
