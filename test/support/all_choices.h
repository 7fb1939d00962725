// Test helpers: a template's choices and a space's configs by value, failing the test (and
// returning nothing) when the space cannot be enumerated.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/space/search_space.h"

namespace ktune::test {

template <class TemplatePtr>
std::vector<ChoicePtr> all_choices(const TemplatePtr& t) {
  auto choices = t->choices();
  EXPECT_TRUE(choices.has_value()) << choices.error().message;
  return choices ? std::move(*choices) : std::vector<ChoicePtr>{};
}

inline std::vector<Config> all_configs(const SearchSpace& space) {
  auto configs = space.enumerate();
  EXPECT_TRUE(configs.has_value()) << configs.error().message;
  return configs ? std::move(*configs) : std::vector<Config>{};
}

inline SearchSpace::Stats space_stats(const SearchSpace& space) {
  auto stats = space.stats();
  EXPECT_TRUE(stats.has_value()) << stats.error().message;
  return stats ? *stats : SearchSpace::Stats{};
}

}  // namespace ktune::test
