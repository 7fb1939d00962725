// The T4 results export and import: a round trip keeps configurations, times and validity, and
// a document that is not T4 is refused naming where.
#include "ktune/cache/t4.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cache_fixtures.h"

namespace ktune {
namespace {

using testing_cache::sample_record;

TuningRecord t4_record() {
  TuningRecord r = sample_record(1);
  r.candidates[0].params = {
      {"BLOCK_M", "64"}, {"BLOCK_N", "64"}, {"LAYOUT", "row"}, {"ALPHA", "0.5"}};
  r.candidates[1].params = {
      {"BLOCK_M", "256"}, {"BLOCK_N", "256"}, {"LAYOUT", "col"}, {"ALPHA", "1.5"}};
  CandidateRecord lib;  // a library call: no parameters
  lib.name = "openblas_sgemm";
  lib.outcome = Outcome::kOk;
  lib.stats = BenchStats{9000, 8900, 9100, 10, 30};
  CandidateRecord skipped;
  skipped.name = "gemm_never";
  skipped.outcome = Outcome::kNotEvaluated;
  CandidateRecord slow;  // stopped after its first runs: partial statistics
  slow.name = "gemm_slow";
  slow.params = {{"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"LAYOUT", "row"}, {"ALPHA", "2"}};
  slow.outcome = Outcome::kAbandoned;
  slow.stats = BenchStats{50000, 49000, 51000, 100, 3};
  r.candidates.push_back(lib);
  r.candidates.push_back(skipped);
  r.candidates.push_back(slow);
  return r;
}

TEST(T4, RoundTripKeepsConfigurationsTimesAndValidity) {
  const TuningRecord r = t4_record();
  auto back = import_t4(export_t4(r));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), r.candidates.size());
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateRecord& a = r.candidates[i];
    const CandidateRecord& b = (*back)[i];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.params, a.params) << i;
    EXPECT_EQ(b.outcome, a.outcome) << i;
    EXPECT_NEAR(b.compile_s, a.compile_s, 1e-12);
    EXPECT_TRUE(testing_cache::same_stats(a.stats, b.stats)) << i;
  }
}

TEST(T4, ExportFollowsTheSchemasRequiredFieldsAndTypes) {
  const nlohmann::json doc = nlohmann::json::parse(export_t4(t4_record()));
  EXPECT_EQ(doc["schema_version"], "1.0.0");
  const auto& first = doc["results"][0];
  for (const char* key : {"configuration", "times", "invalidity", "correctness"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
  EXPECT_EQ(first["configuration"]["BLOCK_M"], 64);  // numbers stay numbers
  EXPECT_EQ(first["configuration"]["ALPHA"], 0.5);
  EXPECT_EQ(first["configuration"]["LAYOUT"], "row");
  EXPECT_NEAR(first["times"]["runtimes"][0].get<double>(), 12345.678 / 1e6, 1e-12);
  EXPECT_EQ(first["invalidity"], "correct");
  EXPECT_EQ(doc["results"][1]["invalidity"], "compile");
  EXPECT_EQ(doc["results"][2]["configuration"], nlohmann::json::object());
}

TEST(T4, AbandonedAndUnevaluatedCandidatesAreNotCorrectResults) {
  // Another tuner reading the file (Kernel Tuner's simulation mode) must not rank a partial
  // median or a missing time as a measured config.
  const nlohmann::json doc = nlohmann::json::parse(export_t4(t4_record()));
  ASSERT_EQ(doc["results"].size(), 5u);
  EXPECT_EQ(doc["results"][3]["invalidity"], "runtime");  // not evaluated
  EXPECT_EQ(doc["results"][4]["invalidity"], "runtime");  // abandoned
  EXPECT_EQ(doc["results"][0]["invalidity"], "correct");
  auto outcome = [&](std::size_t i) {
    for (const auto& m : doc["results"][i]["measurements"]) {
      if (m["name"] == "ktune_outcome") return m["value"].get<std::string>();
    }
    return std::string("none");
  };
  EXPECT_EQ(outcome(3), "not_evaluated");
  EXPECT_EQ(outcome(4), "abandoned");
}

TEST(T4, KernelTunersOwnOutputIsRead) {
  // As Kernel Tuner's store_output_file writes it: "compilation", several runtimes, no ktune
  // measurements.
  const std::string kt = R"({"results": [
    {"configuration": {"block_size_x": 128, "tile": 2}, "times": {"compilation": 250.0,
     "runtimes": [1.5, 1.0, 2.0]}, "invalidity": "correct", "correctness": 1},
    {"configuration": {"block_size_x": 1024, "tile": 8}, "times": {"runtimes": []},
     "invalidity": "runtime", "correctness": 1}], "schema_version": "1.0.0"})";
  auto back = import_t4(kt);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].name, "block_size_x=128 tile=2");
  ASSERT_TRUE((*back)[0].stats);
  EXPECT_DOUBLE_EQ((*back)[0].stats->median_ns, 1.5e6);
  EXPECT_EQ((*back)[0].stats->runs, 3);
  EXPECT_DOUBLE_EQ((*back)[0].compile_s, 0.25);
  EXPECT_EQ((*back)[1].outcome, Outcome::kLaunchError);
  EXPECT_FALSE((*back)[1].stats);
}

TEST(T4, WhatIsNotT4IsRefusedNamingWhere) {
  auto e = import_t4("{\"results\": [{\"configuration\": {}, \"times\": {}}]}");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("$.results[0]"), std::string::npos);
  EXPECT_NE(e.error().message.find("invalidity"), std::string::npos);
  EXPECT_FALSE(import_t4("not json"));
  EXPECT_FALSE(import_t4("{\"results\": 3}"));
}

}  // namespace
}  // namespace ktune
