// make_candidate_space and the parameters of a choice (candidate_space.h).
#include "select/candidate_space.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>

namespace ktune {
namespace {

std::optional<std::int64_t> as_int(const std::string& s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The values of one parameter in their coordinate order: numeric when all are integers (and
// there is more than one spelling of a number only where the spec wrote it so: "08" and "8"
// stay two values, each at its number's place), else first appearance.
std::vector<std::string> ordered_values(std::vector<std::string> seen) {
  if (std::all_of(seen.begin(), seen.end(), [](const std::string& v) { return as_int(v); })) {
    std::stable_sort(seen.begin(), seen.end(), [](const std::string& a, const std::string& b) {
      return *as_int(a) < *as_int(b);
    });
  }
  return seen;
}

}  // namespace

CandidateSpace make_candidate_space(const std::vector<CandidateParams>& params) {
  CandidateSpace space;
  std::map<std::string, std::size_t> dim_of;
  std::vector<std::vector<std::string>> values;  // per parameter, first appearance
  for (const CandidateParams& p : params) {
    for (const auto& [name, value] : p) {
      auto [it, added] = dim_of.emplace(name, space.names.size());
      if (added) {
        space.names.push_back(name);
        values.emplace_back();
      }
      std::vector<std::string>& v = values[it->second];
      if (std::find(v.begin(), v.end(), value) == v.end()) v.push_back(value);
    }
  }
  // "absent" sorts after every present value, so it is appended after ordering.
  std::vector<bool> has_absent(space.names.size(), false);
  for (const CandidateParams& p : params) {
    if (p.empty()) continue;
    for (std::size_t d = 0; d < space.names.size(); ++d) {
      const bool has = std::any_of(p.begin(), p.end(),
                                   [&](const auto& nv) { return nv.first == space.names[d]; });
      if (!has) has_absent[d] = true;
    }
  }
  std::vector<std::map<std::string, std::uint32_t>> index(space.names.size());
  for (std::size_t d = 0; d < space.names.size(); ++d) {
    const std::vector<std::string> ordered = ordered_values(values[d]);
    for (std::size_t k = 0; k < ordered.size(); ++k) {
      index[d][ordered[k]] = static_cast<std::uint32_t>(k);
    }
    space.dims.push_back(ordered.size() + (has_absent[d] ? 1 : 0));
  }
  for (const CandidateParams& p : params) {
    std::vector<std::uint32_t>& c = space.coords.emplace_back();
    if (p.empty()) continue;
    c.resize(space.names.size());
    for (std::size_t d = 0; d < space.names.size(); ++d) {
      c[d] = static_cast<std::uint32_t>(space.dims[d] - 1);  // absent unless named below
    }
    for (const auto& [name, value] : p) {
      const std::size_t d = dim_of.at(name);
      c[d] = index[d].at(value);
    }
  }
  return space;
}

CandidateParams candidate_params(const Choice& choice) {
  if (choice.kind() != Choice::Kind::kTemplate) return {};
  return choice.params();
}

CandidateSpace candidate_space_of(const std::vector<ChoicePtr>& candidates) {
  std::vector<CandidateParams> params;
  params.reserve(candidates.size());
  for (const ChoicePtr& c : candidates) params.push_back(candidate_params(*c));
  return make_candidate_space(params);
}

}  // namespace ktune
