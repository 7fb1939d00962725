// One Selector tunes several problems, each with its own measurement settings
// (Selector::select with options: how `ktune compile` tunes a graph's GEMMs), on one worker that
// keeps what it set up: the records carry each problem's own settings, the workers' timeline
// (KTUNE_TRACE, written by the workers themselves) shows one worker process for all of them,
// and options that would need other workers are refused.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kSpec =
    std::filesystem::path(KTUNE_SOURCE_DIR) / "test" / "data" / "mpi" / "problems.yaml";

// The pids of the worker events ("cat":"worker") in a trace file.
std::set<std::string> worker_pids(const std::filesystem::path& trace) {
  Result<std::string> text = read_file(trace);
  EXPECT_TRUE(text) << trace;
  std::set<std::string> pids;
  if (!text) return pids;
  std::size_t at = 0;
  while ((at = text->find("\"cat\":\"worker\"", at)) != std::string::npos) {
    const std::size_t line = text->rfind('{', at);
    const std::size_t pid = text->find("\"pid\":", line);
    if (pid != std::string::npos) {
      pids.insert(text->substr(pid + 6, text->find_first_of(",}", pid) - pid - 6));
    }
    ++at;
  }
  return pids;
}

// Quiet, and one short measurement per candidate: these tests are about who answers, not speed.
SelectorOptions quick_options() {
  SelectorOptions o;
  o.out = nullptr;
  o.progress = nullptr;
  o.bench.budget_ms = 1;
  o.bench.min_runs = 1;
  o.bench.warmup_runs = 0;
  o.close_call_rounds = 1;
  return o;
}

TEST(SelectorSharedWorker, ProblemsWithTheirOwnSettingsShareOneWorker) {
  TempDir dir("shared-worker");
  const std::filesystem::path trace = dir.path() / "trace.json";
  ASSERT_EQ(::setenv("KTUNE_TRACE", trace.c_str(), 1), 0);  // the workers inherit it
  Result<Spec> spec = load_spec(kSpec);
  ASSERT_TRUE(spec) << spec.error().message;
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_TRUE(choices) << choices.error().message;
  auto backend = CpuBackend::create({}, dir.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  std::unique_ptr<TuningCache> cache = make_memory_cache();
  SelectorOptions base = quick_options();
  ASSERT_TRUE(base.isolate);
  Selector selector(*backend, *cache, base);

  int i = 0;
  for (const ProblemDecl& decl : spec->problems) {
    Result<Problem> problem = make_problem(*spec, decl);
    ASSERT_TRUE(problem) << problem.error().message;
    SelectorOptions own = base;
    own.bench.min_runs = 2 + i;  // each problem's own settings
    auto sel = selector.select(*problem, choices->candidates, choices->reference.get(), own);
    ASSERT_TRUE(sel) << decl.name << ": " << sel.error().message;
    ASSERT_TRUE(sel->record.settings) << decl.name;
    EXPECT_EQ(sel->record.settings->min_runs, 2 + i) << decl.name;
    EXPECT_EQ(sel->record.candidates[sel->winner_index].name, "scale_WORK1_WRONG0") << decl.name;
    ++i;
  }
  ::unsetenv("KTUNE_TRACE");
  EXPECT_EQ(i, 4);
  EXPECT_EQ(worker_pids(trace).size(), 1u) << "one worker for every problem";

  // Options that would need other workers (in-process here) are refused, not half-applied.
  SelectorOptions in_process = base;
  in_process.isolate = false;
  Result<Problem> problem = make_problem(*spec, spec->problems.front());
  ASSERT_TRUE(problem);
  auto refused =
      selector.select(*problem, choices->candidates, choices->reference.get(), in_process);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message, HasSubstr("another Selector"));
}

// Selector::cached answers what select() would serve from the tuning cache, and nothing else,
// starting no worker (`ktune gemm` asks it before the CUDA driver is up).
TEST(SelectorCached, AnswersOnlyWhatSelectWouldServe) {
  TempDir dir("selector-cached");
  const std::filesystem::path trace = dir.path() / "trace.json";
  Result<Spec> spec = load_spec(kSpec);
  ASSERT_TRUE(spec) << spec.error().message;
  Result<SpecChoices> choices = make_spec_choices(*spec);
  ASSERT_TRUE(choices) << choices.error().message;
  Result<Problem> problem = make_problem(*spec, spec->problems.front());
  ASSERT_TRUE(problem) << problem.error().message;
  auto backend = CpuBackend::create({}, dir.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  std::unique_ptr<TuningCache> cache = make_memory_cache();
  const SelectorOptions o = quick_options();

  ASSERT_EQ(::setenv("KTUNE_TRACE", trace.c_str(), 1), 0);  // a worker would write there
  {
    Selector asking(*backend, *cache, o);
    auto none = asking.cached(*problem, choices->candidates, choices->reference.get());
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_FALSE(*none) << "an answer from an empty cache";
  }
  ::unsetenv("KTUNE_TRACE");
  EXPECT_TRUE(!std::filesystem::exists(trace) || worker_pids(trace).empty())
      << "a lookup started a worker";

  Selector tuner(*backend, *cache, o);
  auto tuned = tuner.select(*problem, choices->candidates, choices->reference.get());
  ASSERT_TRUE(tuned) << tuned.error().message;
  ASSERT_FALSE(tuned->from_cache);

  Selector asking(*backend, *cache, o);
  auto hit = asking.cached(*problem, choices->candidates, choices->reference.get());
  ASSERT_TRUE(hit) << hit.error().message;
  ASSERT_TRUE(*hit);
  EXPECT_TRUE((*hit)->from_cache);
  EXPECT_EQ((*hit)->record.winner, tuned->record.winner);
  EXPECT_EQ((*hit)->winner_index, tuned->winner_index);
  EXPECT_EQ(asking.worker_restarts(), 0);

  // Another tolerance is another key; a selector that does not read the cache answers nothing.
  SelectorOptions looser = o;
  looser.tolerance = Tolerance{.rtol = 0.5};
  Selector other_key(*backend, *cache, looser);
  auto miss = other_key.cached(*problem, choices->candidates, choices->reference.get());
  ASSERT_TRUE(miss);
  EXPECT_FALSE(*miss);
  SelectorOptions no_read = o;
  no_read.read_cache = false;
  Selector not_reading(*backend, *cache, no_read);
  auto off = not_reading.cached(*problem, choices->candidates, choices->reference.get());
  ASSERT_TRUE(off);
  EXPECT_FALSE(*off);
}

}  // namespace
}  // namespace ktune::test
