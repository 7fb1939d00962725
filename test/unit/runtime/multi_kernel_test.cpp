// MultiKernel: the first call's result, stored picks across a restart, forced picks, the switch
// that ignores stored picks, one benchmark for concurrent first calls, independent buckets.
#include "ktune/runtime/multi_kernel.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <atomic>
#include <bit>
#include <latch>
#include <numeric>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace ktune {
namespace {

// out[0] = sum(in[0, n)). Two of the variants write their input on the way, as a kernel that
// reuses an input as scratch would; only the last one leaves it alone.
using Toy = MultiKernel<float*, float*, std::int64_t>;

std::array<std::atomic<int>, 3> g_calls;

void prefix_scribbler(float* out, float* in, std::int64_t n) {
  ++g_calls[0];
  for (std::int64_t i = 1; i < n; ++i) in[i] += in[i - 1];
  out[0] = in[n - 1];
}

void doubling_scribbler(float* out, float* in, std::int64_t n) {
  ++g_calls[1];
  float s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += (in[i] *= 2);
  out[0] = s / 2;
}

void plain(float* out, float* in, std::int64_t n) {
  ++g_calls[2];
  out[0] = std::accumulate(in, in + n, 0.0f);
}

const std::vector<Toy::Variant> kVariants = {
    {"prefix_scribbler", &prefix_scribbler},
    {"doubling_scribbler", &doubling_scribbler},
    {"plain", &plain},
};

int total_calls() { return g_calls[0] + g_calls[1] + g_calls[2]; }
void reset_calls() {
  for (auto& c : g_calls) c = 0;
}
int calls_of(const std::string& name) {
  for (std::size_t i = 0; i < kVariants.size(); ++i) {
    if (kVariants[i].name == name) return g_calls[i];
  }
  return -1;
}

ShapeKey toy_bucket(float* const&, float* const&, const std::int64_t& n) {
  return {static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(n))), 0, 0, 0};
}

std::size_t out_bytes(float* const&, float* const&, const std::int64_t&) { return sizeof(float); }
std::size_t in_bytes(float* const&, float* const&, const std::int64_t& n) {
  return static_cast<std::size_t>(n) * sizeof(float);
}

MultiKernelOptions fast_options(TuningCache* cache = nullptr) {
  MultiKernelOptions o;
  o.name = "toy";
  o.cache = cache;
  o.bench = {.warmup_runs = 0, .budget_ms = 1, .min_runs = 1, .max_runs = 1};
  return o;
}

Toy make_toy(MultiKernelOptions options) {
  auto mk = Toy::create(std::move(options), kVariants, &toy_bucket,
                        {{0, &out_bytes, ArgUse::kOut}, {1, &in_bytes, ArgUse::kScratch}});
  EXPECT_TRUE(mk.has_value()) << mk.error().message;
  return std::move(*mk);
}

std::vector<float> ramp(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  return v;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

class MultiKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_calls();
    // A user's own switches must not change what these tests see.
    ::unsetenv("KTUNE_FORCE_PICK");
    ::unsetenv("KTUNE_MULTI_KERNEL_DISABLE_CACHE");
  }
};

TEST_F(MultiKernelTest, FirstCallGivesTheResultOfOneCallOfThePickEvenWhenVariantsWriteInputs) {
  for (std::int64_t n : {1, 37, 1000}) {
    Toy mk = make_toy(fast_options());
    std::vector<float> in = ramp(n);
    float out = -1;
    mk(&out, in.data(), n);
    ASSERT_EQ(mk.benchmarks_run(), 1u);
    const std::optional<std::string> pick = mk.picked(toy_bucket(nullptr, nullptr, n));
    ASSERT_TRUE(pick.has_value());
    // What the pick alone does to fresh copies of the same arguments.
    std::vector<float> want_in = ramp(n);
    float want_out = -1;
    for (const auto& v : kVariants) {
      if (v.name == *pick) v.fn(&want_out, want_in.data(), n);
    }
    EXPECT_EQ(out, want_out) << *pick << " n=" << n;
    EXPECT_EQ(in, want_in) << *pick << " n=" << n;
  }
}

// The runtime links the cache interface only: a restart is the cache's records exported by one
// program and imported by the next (the SQLite store keeps them the same way; its own tests).
TEST_F(MultiKernelTest, PickSurvivesARestartThroughTheCacheRecords) {
  std::string first_pick;
  std::string saved;
  {
    auto cache = make_memory_cache();
    Toy mk = make_toy(fast_options(cache.get()));
    std::vector<float> in = ramp(100);
    float out = 0;
    mk(&out, in.data(), 100);
    ASSERT_EQ(mk.benchmarks_run(), 1u);
    first_pick = *mk.picked(toy_bucket(nullptr, nullptr, 100));
    EXPECT_FALSE(mk.cache_error().has_value());
    // Every variant's statistics are kept, not only the winner's.
    auto records = cache->list();
    ASSERT_TRUE(records.has_value());
    ASSERT_EQ(records->size(), 1u);
    saved = export_json(*records);
    EXPECT_EQ((*records)[0].key.op, "multi_kernel:toy");
    EXPECT_EQ((*records)[0].key.problem, "128x0x0x0");
    EXPECT_EQ((*records)[0].winner, first_pick);
    ASSERT_EQ((*records)[0].candidates.size(), kVariants.size());
    for (const auto& c : (*records)[0].candidates) EXPECT_TRUE(c.stats.has_value()) << c.name;
  }
  reset_calls();
  auto cache = make_memory_cache();  // a new program, as far as the cache knows
  auto records = import_json(saved);
  ASSERT_TRUE(records.has_value()) << records.error().message;
  for (const TuningRecord& r : *records) ASSERT_TRUE(cache->store(r));
  Toy mk = make_toy(fast_options(cache.get()));
  std::vector<float> in = ramp(100);
  float out = 0;
  mk(&out, in.data(), 100);
  EXPECT_EQ(mk.benchmarks_run(), 0u);
  EXPECT_EQ(total_calls(), 1);  // the call itself, nothing measured
  EXPECT_EQ(calls_of(first_pick), 1);
  ASSERT_EQ(mk.picks().size(), 1u);
  EXPECT_EQ(mk.picks()[0].variant, first_pick);
  EXPECT_EQ(mk.picks()[0].source, PickSource::kStored);
}

// A stored record is served only whole and with a valid winner (check_record): one whose winner's
// row says crashed, or with a variant's row missing, is benchmarked again, with a warning.
TEST_F(MultiKernelTest, StoredPickThatIsNotWholeOrValidIsBenchmarkedAgain) {
  std::vector<TuningRecord> stored;
  {
    auto cache = make_memory_cache();
    Toy mk = make_toy(fast_options(cache.get()));
    std::vector<float> in = ramp(100);
    float out = 0;
    mk(&out, in.data(), 100);
    stored = *cache->list();
  }
  ASSERT_EQ(stored.size(), 1u);
  for (int edit = 0; edit < 2; ++edit) {
    TuningRecord r = stored[0];
    if (edit == 0) {
      for (CandidateRecord& c : r.candidates) {
        if (c.name == r.winner) c.outcome = Outcome::kCrashed;
      }
    } else {
      std::erase_if(r.candidates, [&](const CandidateRecord& c) { return c.name != r.winner; });
    }
    auto cache = make_memory_cache();
    std::vector<std::string> warnings;
    cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    ASSERT_TRUE(cache->store(r));
    Toy mk = make_toy(fast_options(cache.get()));
    std::vector<float> in = ramp(100);
    float out = 0;
    mk(&out, in.data(), 100);
    EXPECT_EQ(mk.benchmarks_run(), 1u) << edit;
    ASSERT_EQ(mk.picks().size(), 1u);
    EXPECT_EQ(mk.picks()[0].source, PickSource::kBenchmarked);
    ASSERT_EQ(warnings.size(), 1u) << edit;
    EXPECT_NE(warnings[0].find("not served"), std::string::npos) << warnings[0];
  }
}

TEST_F(MultiKernelTest, ForcedPickInOptionsWinsOverBenchmarkAndCache) {
  auto cache = make_memory_cache();
  for (const char* forced : {"doubling_scribbler", "plain"}) {
    reset_calls();
    MultiKernelOptions o = fast_options(cache.get());
    o.force_pick = forced;
    Toy mk = make_toy(o);
    std::vector<float> in = ramp(10);
    float out = 0;
    mk(&out, in.data(), 10);
    EXPECT_EQ(total_calls(), 1);
    EXPECT_EQ(calls_of(forced), 1);
    EXPECT_EQ(mk.benchmarks_run(), 0u);
    EXPECT_EQ(mk.picks()[0].source, PickSource::kForced);
  }
  auto records = cache->list();
  EXPECT_TRUE(records->empty());  // a forced pick is not a measurement: nothing stored
}

TEST_F(MultiKernelTest, ForcedPickFromTheEnvironment) {
  struct Case {
    const char* env;
    const char* want;
  };
  for (const Case& c :
       {Case{"plain", "plain"}, Case{"toy=doubling_scribbler", "doubling_scribbler"},
        Case{"other=x, toy = plain", "plain"}, Case{"prefix_scribbler,toy=plain", "plain"}}) {
    reset_calls();
    ScopedEnv env("KTUNE_FORCE_PICK", c.env);
    Toy mk = make_toy(fast_options());
    std::vector<float> in = ramp(10);
    float out = 0;
    mk(&out, in.data(), 10);
    EXPECT_EQ(calls_of(c.want), 1) << c.env;
    EXPECT_EQ(total_calls(), 1) << c.env;
  }
  {  // a bare name this operation lacks belongs to another one: benchmark as usual
    ScopedEnv env("KTUNE_FORCE_PICK", "row_softmax_looped_r64");
    Toy mk = make_toy(fast_options());
    std::vector<float> in = ramp(10);
    float out = 0;
    mk(&out, in.data(), 10);
    EXPECT_EQ(mk.benchmarks_run(), 1u);
  }
  {  // the options win over the environment
    ScopedEnv env("KTUNE_FORCE_PICK", "toy=plain");
    MultiKernelOptions o = fast_options();
    o.force_pick = "prefix_scribbler";
    Toy mk = make_toy(o);
    EXPECT_EQ(mk.picks().size(), 0u);
    std::vector<float> in = ramp(10);
    float out = 0;
    mk(&out, in.data(), 10);
    EXPECT_EQ(*mk.picked({16, 0, 0, 0}), "prefix_scribbler");
  }
}

TEST_F(MultiKernelTest, UnknownForcedPickIsAnError) {
  MultiKernelOptions o = fast_options();
  o.force_pick = "fastest";
  auto mk = Toy::create(o, kVariants, &toy_bucket);
  ASSERT_FALSE(mk.has_value());
  EXPECT_EQ(mk.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(mk.error().message,
            "MultiKernel 'toy': force_pick 'fastest' is no variant; expected one of: "
            "prefix_scribbler, doubling_scribbler, plain");
  ScopedEnv env("KTUNE_FORCE_PICK", "toy=fastest");
  auto from_env = Toy::create(fast_options(), kVariants, &toy_bucket);
  ASSERT_FALSE(from_env.has_value());
  EXPECT_EQ(from_env.error().message,
            "KTUNE_FORCE_PICK: operation 'toy' has no variant 'fastest'; expected one of: "
            "prefix_scribbler, doubling_scribbler, plain");
}

TEST_F(MultiKernelTest, BadConstructionIsAnError) {
  EXPECT_FALSE(Toy::create(fast_options(), {}, &toy_bucket).has_value());
  EXPECT_FALSE(
      Toy::create(fast_options(), {{"a", &plain}, {"a", &plain}}, &toy_bucket).has_value());
  EXPECT_FALSE(Toy::create(fast_options(), {{"a", nullptr}}, &toy_bucket).has_value());
  EXPECT_FALSE(Toy::create(fast_options(), kVariants, nullptr).has_value());
  MultiKernelOptions unnamed = fast_options();
  unnamed.name.clear();
  EXPECT_FALSE(Toy::create(unnamed, kVariants, &toy_bucket).has_value());
  auto not_a_pointer = Toy::create(fast_options(), kVariants, &toy_bucket, {{2, &in_bytes}});
  ASSERT_FALSE(not_a_pointer.has_value());
  EXPECT_EQ(not_a_pointer.error().message,
            "MultiKernel 'toy': mutated argument 2 is not a data pointer with a size; expected "
            "one of 3 arguments");
}

TEST_F(MultiKernelTest, DisablingTheStoredPickBenchmarksAgainAndStillStores) {
  auto cache = make_memory_cache();
  std::vector<float> in = ramp(50);
  float out = 0;
  {
    Toy mk = make_toy(fast_options(cache.get()));
    mk(&out, in.data(), 50);
    ASSERT_EQ(mk.benchmarks_run(), 1u);
  }
  const std::int64_t first_created = (*cache->list())[0].created_unix;
  {
    MultiKernelOptions o = fast_options(cache.get());
    o.use_stored_pick = false;
    Toy mk = make_toy(o);
    mk(&out, in.data(), 50);
    EXPECT_EQ(mk.benchmarks_run(), 1u);
    EXPECT_EQ(mk.picks()[0].source, PickSource::kBenchmarked);
  }
  {
    ScopedEnv env("KTUNE_MULTI_KERNEL_DISABLE_CACHE", "1");
    Toy mk = make_toy(fast_options(cache.get()));
    mk(&out, in.data(), 50);
    EXPECT_EQ(mk.benchmarks_run(), 1u);
  }
  auto records = cache->list();
  ASSERT_EQ(records->size(), 1u);  // replaced, not added
  EXPECT_GE((*records)[0].created_unix, first_created);
  Toy mk = make_toy(fast_options(cache.get()));  // the switch is off again
  mk(&out, in.data(), 50);
  EXPECT_EQ(mk.benchmarks_run(), 0u);
}

TEST_F(MultiKernelTest, ConcurrentFirstCallsBenchmarkOnce) {
  constexpr int kThreads = 8;
  Toy mk = make_toy(fast_options());
  std::latch start(kThreads);
  std::vector<std::vector<float>> ins(kThreads, ramp(64));
  std::vector<float> outs(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      mk(&outs[t], ins[t].data(), 64);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mk.benchmarks_run(), 1u);
  // One verifying run and one timed run per variant (min_runs = max_runs = 1, no warm-up), then
  // each thread's call.
  EXPECT_EQ(total_calls(), 2 * static_cast<int>(kVariants.size()) + kThreads);
  const std::vector<float> want = ramp(64);
  const float sum = std::accumulate(want.begin(), want.end(), 0.0f);
  for (int t = 0; t < kThreads; ++t) EXPECT_FLOAT_EQ(outs[t], sum);
}

TEST_F(MultiKernelTest, BucketsHaveIndependentPicks) {
  auto cache = make_memory_cache();
  std::vector<float> in = ramp(300);
  float out = 0;
  {
    Toy mk = make_toy(fast_options(cache.get()));
    for (std::int64_t n : {3, 4, 100, 200}) mk(&out, in.data(), n);  // buckets 4, 4, 128, 256
    EXPECT_EQ(mk.benchmarks_run(), 3u);
    const std::vector<MultiKernelPick> picks = mk.picks();
    ASSERT_EQ(picks.size(), 3u);
    EXPECT_EQ(picks[0].bucket, (ShapeKey{4, 0, 0, 0}));
    EXPECT_EQ(picks[1].bucket, (ShapeKey{128, 0, 0, 0}));
    EXPECT_EQ(picks[2].bucket, (ShapeKey{256, 0, 0, 0}));
  }
  // Give the two largest buckets different stored winners, then alternate between them: each
  // call must reach its own bucket's pick, whatever the last call used.
  auto records = *cache->list();
  for (auto& r : records) {
    r.winner = r.key.problem == "128x0x0x0" ? "plain" : "prefix_scribbler";
    ASSERT_TRUE(cache->store(r).has_value());
  }
  reset_calls();
  Toy mk = make_toy(fast_options(cache.get()));
  for (int i = 0; i < 5; ++i) {
    in = ramp(300);
    mk(&out, in.data(), 100);
    mk(&out, in.data(), 200);
  }
  EXPECT_EQ(calls_of("plain"), 5);
  EXPECT_EQ(calls_of("prefix_scribbler"), 5);
  EXPECT_EQ(*mk.picked({128, 0, 0, 0}), "plain");
  EXPECT_EQ(*mk.picked({256, 0, 0, 0}), "prefix_scribbler");
  EXPECT_FALSE(mk.picked({512, 0, 0, 0}).has_value());
  EXPECT_EQ(mk.benchmarks_run(), 0u);
}

TEST(MultiKernelNames, ShapeKeyTextAndPickSource) {
  EXPECT_EQ(shape_key_text({1024, 256, 0, 0}), "1024x256x0x0");
  EXPECT_STREQ(pick_source_name(PickSource::kStored), "stored");
}

}  // namespace
}  // namespace ktune
