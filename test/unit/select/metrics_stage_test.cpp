// SelectorOptions::metrics: evaluated at each measured candidate's final median, stored in the
// record, left out where not finite, and recomputed from the stored times on a cache hit.
#include <gtest/gtest.h>

#include <limits>

#include "select/select_stages.h"
#include "unit/select/select_fakes.h"

namespace ktune::test {
namespace {

TEST(MetricsStage, StoredPerMeasuredCandidateAndRecomputedOnAHit) {
  Problem problem;
  problem.op = "fake_op";
  problem.name = "n=1";
  SelectorOptions options;
  options.out = nullptr;
  options.progress = nullptr;
  options.jobs = 2;
  double scale = 1;  // changed before the hit: the hit shows the metric as it is now
  options.metrics = [&](const Problem& p) {
    EXPECT_EQ(p.name, "n=1");
    return std::vector<Metric>{
        {"per_s", [&](double t) { return scale / t; }},
        {"never", [](double) { return std::numeric_limits<double>::infinity(); }}};
  };
  FakeBackend backend;
  std::unique_ptr<TuningCache> cache = make_memory_cache();
  TuningKey key{"fake_op", "n=1", "abc", "", "", ""};
  FakeRunner runner;
  runner.fixed = {
      {"a", {Outcome::kOk, 2e9}}, {"b", {Outcome::kOk, 4e9}}, {"bad", {Outcome::kCrashed, 1}}};
  auto candidates = fake_candidates({{"a"}, {"b"}, {"bad"}});
  const SelectContext ctx{problem, candidates, options, selection_title(problem)};

  auto sel = select_with(ctx, backend, *cache, key, nullptr, runner);
  ASSERT_TRUE(sel) << sel.error().message;
  const auto& rows = sel->record.candidates;
  EXPECT_EQ(rows[0].metrics, (std::vector<MetricValue>{{"per_s", 0.5}}));  // 1 / 2 s
  EXPECT_EQ(rows[1].metrics, (std::vector<MetricValue>{{"per_s", 0.25}}));
  EXPECT_TRUE(rows[2].metrics.empty());  // crashed: not measured
  auto stored = cache->lookup(key);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((**stored).candidates[0].metrics, rows[0].metrics);

  scale = 10;
  auto hit = select_with(ctx, backend, *cache, key, nullptr, runner);
  ASSERT_TRUE(hit) << hit.error().message;
  ASSERT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->record.candidates[0].metrics, (std::vector<MetricValue>{{"per_s", 5.0}}));
}

}  // namespace
}  // namespace ktune::test
