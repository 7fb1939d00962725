// Shared helpers for the cache tests: a temporary folder, sample records, field-wise comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ktune/cache/tuning_cache.h"
#include "support/temp_dir.h"

namespace ktune::testing_cache {

using TempDir = ktune::test::TempDir;

inline TuningKey sample_key(int i) {
  const std::string n = std::to_string(i);
  return TuningKey{"mm",           "mm/f32[128,256]x[256," + n + "]",
                   "cset-" + n,    "cpu:Xeon x16",
                   "g++ 12.2 -O3", "0.1.0"};
}

// Every field set, one candidate with statistics and one without (a compile error whose message
// has several lines and non-ASCII text).
inline TuningRecord sample_record(int i, std::int64_t created_unix = 1'700'000'000) {
  TuningRecord r;
  r.key = sample_key(i);
  r.winner = "gemm_t64x64_" + std::to_string(i);
  r.created_unix = created_unix;
  r.compile_s = 1.25 + i;
  r.bench_s = 0.1 * (i + 1);
  CandidateRecord ok;
  ok.choice_key = "ck-ok-" + std::to_string(i);
  ok.name = r.winner;
  ok.info = "BLOCK_M=64 BLOCK_N=64";
  ok.outcome = Outcome::kOk;
  ok.stats = BenchStats{12345.678, 12000.5, 13999.25, 101.125, 57};
  ok.compile_s = 0.333333333333333314829616256247;
  ok.artifact = "0123456789abcdef0123456789abcde" + std::to_string(i % 10);
  CandidateRecord bad;
  bad.choice_key = "ck-bad-" + std::to_string(i);
  bad.name = "gemm_t256x256";
  bad.info = "";
  bad.outcome = Outcome::kCompileError;
  bad.message = "error: too many registers\n  at line 3 \xc2\xb5s \"quoted\"";
  bad.compile_s = 2.5;
  r.candidates = {ok, bad};
  r.spec = "mm_spec";
  r.problem_name = "p" + std::to_string(i);
  return r;
}

inline ::testing::AssertionResult same_stats(const std::optional<BenchStats>& a,
                                             const std::optional<BenchStats>& b) {
  if (a.has_value() != b.has_value()) {
    return ::testing::AssertionFailure()
           << "stats present " << a.has_value() << " vs " << b.has_value();
  }
  if (a && (a->median_ns != b->median_ns || a->min_ns != b->min_ns || a->max_ns != b->max_ns ||
            a->mad_ns != b->mad_ns || a->runs != b->runs)) {
    return ::testing::AssertionFailure() << "stats differ";
  }
  return ::testing::AssertionSuccess();
}

// Exact equality of every field (doubles included: storage must not round).
inline ::testing::AssertionResult same_record(const TuningRecord& a, const TuningRecord& b) {
  const TuningKey& x = a.key;
  const TuningKey& y = b.key;
  if (x.op != y.op || x.problem != y.problem || x.candidate_set != y.candidate_set ||
      x.device != y.device || x.toolchain != y.toolchain || x.version != y.version) {
    return ::testing::AssertionFailure() << "keys differ: " << x.problem << " vs " << y.problem;
  }
  if (a.winner != b.winner || a.created_unix != b.created_unix || a.compile_s != b.compile_s ||
      a.bench_s != b.bench_s) {
    return ::testing::AssertionFailure() << "record fields differ for " << x.problem;
  }
  if (a.settings != b.settings) {
    return ::testing::AssertionFailure() << "measure settings differ for " << x.problem;
  }
  if (a.spec != b.spec || a.problem_name != b.problem_name) {
    return ::testing::AssertionFailure()
           << "labels differ for " << x.problem << ": " << a.spec << "/" << a.problem_name << " vs "
           << b.spec << "/" << b.problem_name;
  }
  if (a.stand_in != b.stand_in) {
    return ::testing::AssertionFailure() << "stand-ins differ for " << x.problem;
  }
  if (a.candidates.size() != b.candidates.size()) {
    return ::testing::AssertionFailure()
           << "candidate count " << a.candidates.size() << " vs " << b.candidates.size();
  }
  for (std::size_t i = 0; i < a.candidates.size(); ++i) {
    const CandidateRecord& c = a.candidates[i];
    const CandidateRecord& d = b.candidates[i];
    if (c.choice_key != d.choice_key || c.name != d.name || c.info != d.info ||
        c.outcome != d.outcome || c.message != d.message || c.compile_s != d.compile_s ||
        c.metrics != d.metrics || c.params != d.params || c.artifact != d.artifact) {
      return ::testing::AssertionFailure()
             << "candidate " << i << " differs: " << c.name << " vs " << d.name << ", '"
             << c.message << "' vs '" << d.message << "'";
    }
    if (auto s = same_stats(c.stats, d.stats); !s) return s << " (candidate " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ktune::testing_cache
