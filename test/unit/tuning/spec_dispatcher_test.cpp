// open_dispatcher: picks tuned ahead by the real CLI served by exact shape, the nearest tuned
// shape by the documented metric, the default; correct results; background tuning of an unseen
// shape, once under concurrent calls, and its pick read back after a restart.
#include "ktune/tuning/spec_dispatcher.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <thread>

#include "ktune/backend/cpu_backend.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/spec/spec.h"
#include "support/cli_run.h"

namespace ktune::test {
namespace {

using Source = Dispatcher::Source;
using Shape = std::array<std::int64_t, 3>;  // M, N, K

constexpr Shape kSmall = {16, 32, 64};
constexpr Shape kWide = {64, 32, 64};

// C[M,N] = A[M,K] * B[K,N] through the dispatcher on seeded data, checked against a naive loop.
testing::AssertionResult call_is_correct(Dispatcher& d, Shape s, unsigned seed = 1) {
  const auto [m, n, k] = s;
  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  std::int32_t mi = m, ni = n, ki = k;
  void* args[] = {c.data(), a.data(), b.data(), &mi, &ni, &ki};
  if (Status st = d.call(s, args); !st) return testing::AssertionFailure() << st.error().message;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::int64_t p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      if (std::fabs(c[i * n + j] - want) > 1e-4 * (1 + std::fabs(want))) {
        return testing::AssertionFailure()
               << "C[" << i << "," << j << "] = " << c[i * n + j] << "; expected " << want;
      }
    }
  }
  return testing::AssertionSuccess();
}

DispatcherOptions tuning_unseen() {
  DispatcherOptions o;
  o.tune_unseen = true;
  return o;
}

class DispatcherTest : public testing::Test {
 protected:
  // A spec over test/data/cli/mm.cpp (candidates mm_BLOCK4, 8, 16, then openblas) with these
  // problems, e.g. "{name: small, M: 16, N: 32, K: 64}".
  std::filesystem::path write_spec(const std::vector<std::string>& problems) {
    std::filesystem::copy_file(data_path("cli/mm.cpp"), dir_.path() / "mm.cpp",
                               std::filesystem::copy_options::overwrite_existing);
    std::string text = R"(name: mm
kernel: {source: mm.cpp, entry: mm}
args:
  - {name: C, role: out, dtype: f32, shape: [M, N]}
  - {name: A, role: in, dtype: f32, shape: [M, K]}
  - {name: B, role: in, dtype: f32, shape: [K, N]}
  - {name: M, dtype: i32, value: M}
  - {name: N, dtype: i32, value: N}
  - {name: K, dtype: i32, value: K}
params:
  BLOCK: [4, 8, 16, 32]
restrictions:
  - BLOCK != 32
externs:
  - {name: openblas, kind: openblas.gemm, bind: {c: C, a: A, b: B, m: M, n: N, k: K}}
reference:
  extern: openblas
seed: 3
problems:
)";
    for (const std::string& p : problems) text += "  - " + p + "\n";
    return write_text(dir_.path(), "mm.yaml", text);
  }

  // Stores a record saying `winner` won problem `index`, under the key the CLI would use.
  void store_pick(const std::filesystem::path& spec_file, std::size_t index,
                  const std::string& winner) {
    auto spec = load_spec(spec_file);
    ASSERT_TRUE(spec) << spec.error().message;
    auto choices = make_spec_choices(*spec);
    ASSERT_TRUE(choices) << choices.error().message;
    auto backend = CpuBackend::create({}, cache_dir());
    ASSERT_TRUE(backend) << backend.error().message;
    auto cache = open_sqlite_cache(cache_dir());
    ASSERT_TRUE(cache) << cache.error().message;
    SelectorOptions options;
    options.seed = spec->seed;
    options.tolerance = spec->tolerance;
    Selector selector(*backend, **cache, options);
    auto problem = make_problem(*spec, spec->problems[index]);
    ASSERT_TRUE(problem) << problem.error().message;
    TuningRecord record;
    record.key = selector.key_for(*problem, choices->candidates, choices->reference.get());
    record.winner = winner;
    // Whole, as a tuning stores it (a record with rows missing is not served): one row per
    // candidate, the winner measured fastest.
    for (const auto& c : choices->candidates) {
      CandidateRecord row;
      row.choice_key = c->hash_key();
      row.name = c->name();
      const double ns = c->name() == winner ? 1000 : 2000;
      row.stats = BenchStats{ns, ns, ns, 0, 3};
      record.candidates.push_back(std::move(row));
    }
    ASSERT_TRUE((*cache)->store(record));
  }

  std::unique_ptr<Dispatcher> open(const std::filesystem::path& spec, DispatcherOptions o = {}) {
    o.cache_dir = cache_dir();
    o.selector.bench.budget_ms = 1;
    auto d = open_dispatcher(spec, std::move(o));
    EXPECT_TRUE(d) << d.error().message;
    return d ? std::move(*d) : nullptr;
  }

  std::filesystem::path cache_dir() const { return dir_.path() / "cache"; }

  ScratchDir dir_{"dispatcher"};
};

TEST_F(DispatcherTest, ServesWhatTheCliTunedForExactShapesAndTheNearestForOthers) {
  const auto spec =
      write_spec({"{name: small, M: 16, N: 32, K: 64}", "{name: skinny, M: 2, N: 64, K: 32}"});
  CliResult r = run_cli(cache_dir(), {"tune", spec.string(), "--budget-ms", "1", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto cache = open_sqlite_cache(cache_dir());
  ASSERT_TRUE(cache);
  auto records = (*cache)->list();
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 2u);
  auto loaded = load_spec(spec);
  ASSERT_TRUE(loaded);
  auto winner_of = [&](std::size_t i) {
    const std::string key = make_problem(*loaded, loaded->problems[i])->key();
    for (const TuningRecord& rec : *records) {
      if (rec.key.problem == key) return rec.winner;
    }
    return std::string("(none)");
  };

  auto d = open(spec);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->size_names(), (std::vector<std::string>{"M", "N", "K"}));
  auto small = d->lookup(Sizes{{"K", 64}, {"M", 16}, {"N", 32}});  // any order
  ASSERT_TRUE(small) << small.error().message;
  EXPECT_EQ(small->source, Source::kExact);
  EXPECT_EQ(*small->name, winner_of(0));
  auto skinny = d->lookup(Shape{2, 64, 32});
  ASSERT_TRUE(skinny);
  EXPECT_EQ(skinny->source, Source::kExact);
  EXPECT_EQ(*skinny->name, winner_of(1));
  EXPECT_TRUE(call_is_correct(*d, {16, 32, 64}));
  EXPECT_TRUE(call_is_correct(*d, {2, 64, 32}));

  // Untuned: {3, 60, 30} is nearer to skinny (distance 0.58 + 0.09 + 0.09) than to small.
  auto near = d->lookup(Shape{3, 60, 30});
  ASSERT_TRUE(near);
  EXPECT_EQ(near->source, Source::kNearest);
  EXPECT_EQ(*near->name, winner_of(1));
  EXPECT_EQ(std::vector(near->tuned.begin(), near->tuned.end()),
            (std::vector<std::int64_t>{2, 64, 32}));
  EXPECT_TRUE(call_is_correct(*d, {3, 60, 30}));
  EXPECT_TRUE(call_is_correct(*d, {16, 32, 64}, 2));  // back and forth between shapes
  EXPECT_TRUE(call_is_correct(*d, {3, 60, 30}, 3));
  EXPECT_EQ(d->background_tunings(), 0);
}

TEST_F(DispatcherTest, NearestIsBySumOfLog2RatiosWithTiesToTheFirstTuned) {
  const auto spec = write_spec({"{M: 16, N: 32, K: 64}", "{M: 64, N: 32, K: 64}",
                                "{M: 128, N: 128, K: 128}"});  // the third is untuned
  store_pick(spec, 0, "mm_BLOCK4");
  store_pick(spec, 1, "mm_BLOCK16");
  auto d = open(spec);
  ASSERT_TRUE(d);
  struct Case {
    Shape sizes;
    Source source;
    const char* name;
    Shape tuned;
  } cases[] = {
      {kSmall, Source::kExact, "mm_BLOCK4", kSmall},
      {kWide, Source::kExact, "mm_BLOCK16", kWide},
      {{32, 32, 64}, Source::kNearest, "mm_BLOCK4", kSmall},     // 1 from each: the first tuned
      {{48, 32, 64}, Source::kNearest, "mm_BLOCK16", kWide},     // 0.42 from wide, 1.58 from small
      {{128, 128, 128}, Source::kNearest, "mm_BLOCK16", kWide},  // in the spec, not tuned
      {{8, 32, 64}, Source::kNearest, "mm_BLOCK4", kSmall},
      {{0, 32, 64}, Source::kNearest, "mm_BLOCK4", kSmall},  // sizes below 1 count as 1
  };
  for (const Case& c : cases) {
    auto served = d->lookup(c.sizes);
    ASSERT_TRUE(served) << served.error().message;
    EXPECT_EQ(served->source, c.source) << c.sizes[0] << "," << c.sizes[1] << "," << c.sizes[2];
    EXPECT_EQ(*served->name, c.name) << c.sizes[0] << "," << c.sizes[1] << "," << c.sizes[2];
    EXPECT_TRUE(std::ranges::equal(served->tuned, c.tuned));
    EXPECT_TRUE(call_is_correct(*d, c.sizes));
  }
}

TEST_F(DispatcherTest, ServesTheDefaultWhenNothingIsTuned) {
  const auto spec = write_spec({"{M: 16, N: 32, K: 64}"});
  auto d = open(spec);
  ASSERT_TRUE(d);
  auto served = d->lookup(kSmall);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->source, Source::kDefault);
  EXPECT_EQ(*served->name, "mm_BLOCK4");  // the first template config
  EXPECT_TRUE(served->tuned.empty());
  EXPECT_TRUE(call_is_correct(*d, kSmall));

  DispatcherOptions openblas;
  openblas.default_choice = "openblas";
  auto other = open(spec, openblas);
  ASSERT_TRUE(other);
  served = other->lookup(Shape{5, 7, 9});
  ASSERT_TRUE(served);
  EXPECT_EQ(*served->name, "openblas");
  EXPECT_TRUE(call_is_correct(*other, {5, 7, 9}));
  EXPECT_TRUE(call_is_correct(*other, kSmall));  // a library call loaded for each shape

  DispatcherOptions bad;
  bad.cache_dir = cache_dir();
  bad.default_choice = "mm_BLOCK5";
  auto failed = open_dispatcher(spec, bad);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(failed.error().message.find("default_choice 'mm_BLOCK5' is not a candidate"),
            std::string::npos)
      << failed.error().message;
}

TEST_F(DispatcherTest, RejectsSizesTheSpecCannotTakeAndKeepsServing) {
  const auto spec = write_spec({"{M: 16, N: 32, K: 64}"});
  store_pick(spec, 0, "mm_BLOCK8");
  auto d = open(spec);
  ASSERT_TRUE(d);
  auto expect_invalid = [](const Result<Dispatcher::Served>& r, const std::string& what) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
  };
  expect_invalid(d->lookup(Sizes{{"M", 16}, {"N", 32}}), "size 'K' is missing");
  expect_invalid(d->lookup(Sizes{{"M", 16}, {"N", 32}, {"K", 1}, {"Q", 1}}), "size 'Q' is unknown");
  expect_invalid(d->lookup(Sizes{{"M", 16}, {"M", 32}, {"K", 1}}), "size 'M' is repeated");
  expect_invalid(d->lookup(std::vector<std::int64_t>{16, 32}), "2 sizes given; expected 3");
  expect_invalid(d->lookup(Shape{-4, 32, 64}), "'M' is -4");
  std::int32_t m = 16, n = 32, k = 64;
  void* args[] = {nullptr, nullptr, nullptr, &m, &n, &k};
  EXPECT_FALSE(d->call(Shape{-4, 32, 64}, args));
  EXPECT_TRUE(call_is_correct(*d, kSmall));
  auto served = d->lookup(kSmall);
  ASSERT_TRUE(served);
  EXPECT_EQ(*served->name, "mm_BLOCK8");
}

TEST_F(DispatcherTest, TunesAnUnseenShapeInTheBackgroundAndSwapsThePickIn) {
  const auto spec = write_spec({"{M: 16, N: 32, K: 64}"});
  store_pick(spec, 0, "mm_BLOCK8");
  const Shape unseen = {24, 40, 48};
  std::string picked;
  {
    auto d = open(spec, tuning_unseen());
    ASSERT_TRUE(d);
    auto first = d->lookup(unseen);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->source, Source::kNearest);
    EXPECT_EQ(*first->name, "mm_BLOCK8");
    EXPECT_TRUE(call_is_correct(*d, unseen));  // served while the tuning runs
    ASSERT_TRUE(d->wait_for_background());
    EXPECT_EQ(d->background_tunings(), 1);
    auto after = d->lookup(unseen);
    ASSERT_TRUE(after);
    EXPECT_EQ(after->source, Source::kExact);
    picked = *after->name;
    EXPECT_TRUE(call_is_correct(*d, unseen));
    auto tuned = d->lookup(kSmall);  // a tuned shape is never tuned again
    ASSERT_TRUE(tuned);
    EXPECT_EQ(tuned->source, Source::kExact);
    EXPECT_EQ(d->background_tunings(), 1);
    // A shape next to the new one is now served by it.
    auto near = d->lookup(Shape{24, 40, 50});
    ASSERT_TRUE(near);
    EXPECT_TRUE(std::ranges::equal(near->tuned, unseen));
    EXPECT_EQ(*near->name, picked);
    EXPECT_EQ(d->background_tunings(), 2);  // and tuned in turn
    ASSERT_TRUE(d->wait_for_background());
  }
  // The pick is in the tuning cache: after a restart the background tuning reads it back.
  auto cache = open_sqlite_cache(cache_dir());
  ASSERT_TRUE(cache);
  EXPECT_EQ((*cache)->list()->size(), 3u);
  auto d = open(spec, tuning_unseen());
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->lookup(unseen));
  ASSERT_TRUE(d->wait_for_background());
  auto again = d->lookup(unseen);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source, Source::kExact);
  EXPECT_EQ(*again->name, picked);
}

TEST_F(DispatcherTest, ConcurrentCallsOnAnUnseenShapeStartOneTuning) {
  const auto spec = write_spec({"{M: 16, N: 32, K: 64}"});
  auto d = open(spec, tuning_unseen());  // nothing tuned: the default serves meanwhile
  ASSERT_TRUE(d);
  const Shape unseen = {20, 36, 44};
  std::vector<std::thread> threads;
  std::array<bool, 4> ok{};
  for (unsigned t = 0; t < ok.size(); ++t) {
    threads.emplace_back([&, t] {
      ok[t] = true;
      for (int i = 0; i < 5; ++i) ok[t] = ok[t] && call_is_correct(*d, unseen, t * 10 + i);
    });
  }
  for (std::thread& t : threads) t.join();
  for (bool b : ok) EXPECT_TRUE(b);
  EXPECT_EQ(d->background_tunings(), 1);
  ASSERT_TRUE(d->wait_for_background());
  EXPECT_EQ(d->background_tunings(), 1);
  auto served = d->lookup(unseen);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->source, Source::kExact);
  EXPECT_TRUE(call_is_correct(*d, unseen));
}

}  // namespace
}  // namespace ktune::test
