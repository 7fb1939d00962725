// The budgeted strategies' factories (strategy.cpp's registry names them); one file per family.
#pragma once

#include <cstdint>
#include <memory>

#include "ktune/search/strategy.h"

namespace ktune::search_detail {

std::unique_ptr<Strategy> make_random(const CandidateSpace& space, std::uint64_t seed);
std::unique_ptr<Strategy> make_hill_climbing(const CandidateSpace& space, std::uint64_t seed);
std::unique_ptr<Strategy> make_annealing(const CandidateSpace& space, std::uint64_t seed);
std::unique_ptr<Strategy> make_genetic(const CandidateSpace& space, std::uint64_t seed);
std::unique_ptr<Strategy> make_model(const CandidateSpace& space, std::uint64_t seed);

}  // namespace ktune::search_detail
