// The measurement types' JSON codec: a lossless round trip, non-finite statistics included
// (the cache export used to write them as null, which its own import refused).
#include "bench/bench_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ktune {
namespace {

template <class T>
T round_trip(const T& v) {
  const Json j = Json::parse(json_dump(encode_json(v)));
  JsonReader r(JsonWording::kDocument);
  T back{};
  decode_json(r, j, "", back);
  EXPECT_TRUE(r.ok()) << r.failure()->path << ": " << r.failure()->what;
  return back;
}

TEST(BenchJson, StatsRoundTripWithNonFiniteValues) {
  const BenchStats s{std::numeric_limits<double>::quiet_NaN(), 1.25,
                     std::numeric_limits<double>::infinity(), 0, 9};
  const BenchStats back = round_trip(s);
  EXPECT_TRUE(std::isnan(back.median_ns));
  EXPECT_EQ(back.min_ns, 1.25);
  EXPECT_EQ(back.max_ns, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.runs, 9);
  // Members in the cache export's order.
  EXPECT_EQ(json_dump(encode_json(BenchStats{1, 2, 3, 4, 5})),
            R"({"median_ns":1.0,"min_ns":2.0,"max_ns":3.0,"mad_ns":4.0,"runs":5})");
}

TEST(BenchJson, OptionsAndToleranceRoundTrip) {
  const BenchOptions b{.warmup_runs = 2,
                       .budget_ms = 7.5,
                       .min_runs = 4,
                       .max_runs = 40,
                       .flush_cache = false,
                       .flush_bytes = std::size_t{5} << 32,
                       .graph_calls = 10};
  const BenchOptions bb = round_trip(b);
  EXPECT_EQ(bb.warmup_runs, 2);
  EXPECT_EQ(bb.budget_ms, 7.5);
  EXPECT_EQ(bb.max_runs, 40);
  EXPECT_FALSE(bb.flush_cache);
  EXPECT_EQ(bb.flush_bytes, std::size_t{5} << 32);
  EXPECT_EQ(bb.graph_calls, 10);
  const Tolerance t = round_trip(Tolerance{1e-3, 0, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(t.rtol, 1e-3);
  EXPECT_EQ(t.atol, 0);
  EXPECT_EQ(t.max_rel_l2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.rms_atol, 0);
  // rms_atol is written where set only, so that documents without it read as before.
  EXPECT_EQ(json_dump(encode_json(Tolerance{})).find("rms_atol"), std::string::npos);
  EXPECT_EQ(round_trip(Tolerance{.rms_atol = 0x1p-5}).rms_atol, 0x1p-5);
}

TEST(BenchJson, NegativeRunsAreRefused) {
  Json j = Json::parse(json_dump(encode_json(BenchStats{})));
  j["runs"] = -1;
  JsonReader r(JsonWording::kDocument);
  BenchStats s;
  decode_json(r, j, "stats", s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure()->path, "stats.runs");
  EXPECT_EQ(r.failure()->what, "-1 out of range; expected 0 to 2147483647");
}

}  // namespace
}  // namespace ktune
