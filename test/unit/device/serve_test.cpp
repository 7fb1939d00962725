// The request flow (device/serve.h) on a fake device whose launches write fixed outputs: one per
// outcome the flow must tell apart (right, wrong, a write past the end, an output left unwritten,
// an input modified, a failing and a sticky launch), the prepared problem kept across requests,
// the three reference routes, and the measurement loop's count from the budget.
#include "device/serve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "bench/measure_loop.h"
#include "device/host_problem.h"
#include "device/timed_checks.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kN = 64;
constexpr double kSampleNs = 1000;  // what every fake sample takes

// c = 2 * a, done right or wrong in one of the ways a candidate can be wrong; and the ways of
// fooling one verification call: right only on the first call, right only for small values,
// right until timed, wrong on a call at random (a data race), writing the storage around a
// strided view (a gap, the prefix before the offset).
enum class Behaviour {
  kRight,
  kWrong,
  kPastEnd,
  kHalfWritten,
  kWritesInput,
  kFails,
  kSticky,
  kFirstCallOnly,
  kSmallValuesOnly,
  kSkipsWhenTimed,
  kSkipsAfterAlways,
  kRacy,
  kWritesGap,
  kWritesPrefix,
  kWritesInputGap,
  kNanForLarge,
  kScaledRoundOff,
};

const std::map<std::string, Behaviour> kBehaviours = {
    {"right", Behaviour::kRight},
    {"wrong", Behaviour::kWrong},
    {"past_end", Behaviour::kPastEnd},
    {"half_written", Behaviour::kHalfWritten},
    {"writes_input", Behaviour::kWritesInput},
    {"fails", Behaviour::kFails},
    {"sticky", Behaviour::kSticky},
    {"first_call_only", Behaviour::kFirstCallOnly},
    {"small_values_only", Behaviour::kSmallValuesOnly},
    {"skips_when_timed", Behaviour::kSkipsWhenTimed},
    {"skips_after_always", Behaviour::kSkipsAfterAlways},
    {"racy", Behaviour::kRacy},
    {"writes_gap", Behaviour::kWritesGap},
    {"writes_prefix", Behaviour::kWritesPrefix},
    {"writes_input_gap", Behaviour::kWritesInputGap},
    {"nan_for_large", Behaviour::kNanForLarge},
    {"scaled_round_off", Behaviour::kScaledRoundOff},
};

struct FakeLaunch final : DeviceLaunch {
  explicit FakeLaunch(Behaviour b) : behaviour(b) {}
  Behaviour behaviour;
  mutable int calls = 0;  // what a kernel's static counter would count
};

// What the fake device saw, shared with the test.
struct Counts {
  int allocations = 0;  // of the uniform data set
  int stress_allocations = 0;
  int loads = 0;
  int faults = 0;
  std::vector<int> sample_counts;   // each SampleSource::sample or sample_each call's count
  int resets = 0;                   // reset_outputs() calls: one before each timed run
  std::uint64_t race = 0x2545F491;  // kRacy's generator: a fixed seed, so the test cannot flake
};

// Runs the launch as a device's timer would, and says every run took kSampleNs.
class FakeTimer final : public SampleSource {
 public:
  FakeTimer(Counts& counts, std::function<Status()> run) : counts_(counts), run_(std::move(run)) {}
  Status warm_up(int count) override {
    for (int i = 0; i < count; ++i) {
      if (Status s = run_(); !s) return s;
    }
    return {};
  }
  Status sample(int count, std::vector<double>* ns) override {
    counts_.sample_counts.push_back(count);
    for (int i = 0; i < count; ++i) {
      if (Status s = run_(); !s) return s;
      ns->push_back(kSampleNs);
    }
    return {};
  }
  // As a device that queues its work: `before` and the runs back to back, one call.
  Status sample_each(int count, const std::function<Status()>& before,
                     std::vector<double>* ns) override {
    counts_.sample_counts.push_back(count);
    for (int i = 0; i < count; ++i) {
      if (Status s = before(); !s) return s;
      if (Status s = run_(); !s) return s;
      ns->push_back(kSampleNs);
    }
    return {};
  }

 private:
  Counts& counts_;
  std::function<Status()> run_;
};

// Host buffers checked as the CPU checks them; enqueue writes what the behaviour says.
class FakeProblem final : public HostProblem {
 public:
  FakeProblem(ProblemBuffers buffers, Counts& counts)
      : HostProblem(std::move(buffers)), counts_(counts) {}

  Status reset_outputs() override {
    ++counts_.resets;
    return HostProblem::reset_outputs();
  }

  Status enqueue(const DeviceLaunch& launch) override {
    const TensorSpec& cs = problem().args[0].tensor;
    const TensorSpec& as = problem().args[1].tensor;
    auto* c = static_cast<float*>(buffers().args()[0]);  // the views' first elements
    auto* a = static_cast<float*>(buffers().args()[1]);
    const auto& l = static_cast<const FakeLaunch&>(launch);
    const Behaviour b = l.behaviour;
    const int call = ++l.calls;
    if (b == Behaviour::kFails) return make_error(ErrorCode::kIo, "fake: launch failed");
    if (b == Behaviour::kSticky) return make_error(ErrorCode::kIo, "fake: FAKE_STICKY");
    if (b == Behaviour::kFirstCallOnly && call > 1) return {};
    if (b == Behaviour::kSkipsWhenTimed && call > 2) return {};  // after two verifications
    // After two verifications, a warm-up and the always-checked timed runs.
    if (b == Behaviour::kSkipsAfterAlways && call > 3 + TimedChecks::kAlwaysChecked) return {};
    const std::int64_t n = b == Behaviour::kHalfWritten ? kN / 2 : kN;
    // kScaledRoundOff: off by 1e-6 of the largest input everywhere, as the round-off of another
    // summation order is off by a fraction of its terms' magnitude.
    float largest = 0;
    for (std::int64_t i = 0; i < kN; ++i) {
      largest = std::max(largest, std::fabs(a[as.storage_index(i) - as.offset]));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      float x = a[as.storage_index(i) - as.offset];
      if (b == Behaviour::kSmallValuesOnly) x = std::clamp(x, -1.0f, 1.0f);
      if (b == Behaviour::kNanForLarge && std::fabs(x) > 1) x = std::nanf("");
      c[cs.storage_index(i) - cs.offset] =
          2 * x + (b == Behaviour::kScaledRoundOff ? 1e-6f * largest : 0.0f);
    }
    if (b == Behaviour::kRacy) {
      std::uint64_t& r = counts_.race;  // xorshift64
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      if (r & 1) c[0] += 1;  // lost the race on this call: wrong one time in two
    }
    if (b == Behaviour::kWrong) c[kN - 1] += 1;
    if (b == Behaviour::kPastEnd) c[kN] = 0;
    if (b == Behaviour::kWritesInput) a[0] += 1;
    if (b == Behaviour::kWritesGap) c[cs.storage_index(1) - cs.offset - 1] = 0;
    if (b == Behaviour::kWritesPrefix) c[-1] = 0;
    if (b == Behaviour::kWritesInputGap) a[as.storage_index(1) - as.offset - 1] = 0;
    return {};
  }
  Result<std::unique_ptr<SampleSource>> timer(const DeviceLaunch& launch,
                                              const BenchOptions&) override {
    return std::make_unique<FakeTimer>(counts_, [this, &launch] { return enqueue(launch); });
  }

 private:
  Counts& counts_;
};

// Launches by entry name (kBehaviours); "missing" fails to load, "no_library" is unavailable.
class FakeDevice final : public DeviceAdapter {
 public:
  explicit FakeDevice(Counts& counts) : counts_(counts) {}
  std::string_view name() const override { return "fake"; }
  Status open() override { return {}; }
  Result<std::unique_ptr<DeviceProblem>> allocate(const Problem& problem, std::uint64_t seed,
                                                  DataSet set) override {
    if (set == DataSet::kUniform) ++counts_.allocations;
    if (set == DataSet::kStress) ++counts_.stress_allocations;
    return std::make_unique<FakeProblem>(ProblemBuffers::create(problem, seed, set), counts_);
  }
  Result<std::shared_ptr<const DeviceLaunch>> load(const LaunchSpec& spec,
                                                   const Problem&) override {
    ++counts_.loads;
    if (spec.entry == "no_library") return make_error(ErrorCode::kUnavailable, "no library here");
    auto it = kBehaviours.find(spec.entry);
    if (it == kBehaviours.end()) return make_error(ErrorCode::kIo, "cannot open " + spec.entry);
    return std::make_shared<const FakeLaunch>(it->second);
  }
  Fault fault(std::string message) override {
    ++counts_.faults;
    if (message.find("FAKE_STICKY") == std::string::npos) return {std::move(message), false};
    lost_ = true;
    return {message + "; the worker restarts", true};
  }
  bool lost() const override { return lost_; }

 private:
  Counts& counts_;
  bool lost_ = false;
};

Problem twice_problem() {
  Problem p;
  p.op = "twice";
  p.name = "n=64";
  const auto spec = TensorSpec::contiguous(DType::kF32, {kN});
  p.args.push_back(ProblemArg{{"c", ArgRole::kOut, DType::kF32}, spec, {}});
  p.args.push_back(ProblemArg{{"a", ArgRole::kIn, DType::kF32}, spec, {}});
  return p;
}

LaunchSpec launch(const std::string& entry) {
  LaunchSpec l;
  l.entry = entry;
  return l;
}

class RequestFlowTest : public ::testing::Test {
 protected:
  RequestFlowTest()
      : flow_(std::make_unique<FakeDevice>(counts_),
              [this](const std::filesystem::path& path, const Problem& problem,
                     const std::optional<Tolerance>&) -> Result<ReferenceOutputs> {
                ++files_read_;
                if (path != "reference.bin") return make_error(ErrorCode::kIo, "no such file");
                // The right answer, as the parent would have written it.
                ProblemBuffers b = ProblemBuffers::create(problem, 3);
                ReferenceOutputs ref;
                ref.outputs.resize(2);
                ref.tolerances.resize(2);
                ref.outputs[0] = HostBuffer::allocate(kN * sizeof(float));
                auto* c = reinterpret_cast<float*>(ref.outputs[0].data());
                const auto* a = static_cast<const float*>(b.args()[1]);
                for (std::int64_t i = 0; i < kN; ++i) c[i] = 2 * a[i];
                return ref;
              }) {}

  // Verified against the reference launch "right", then measured.
  BenchmarkRequest request(const std::string& entry) {
    BenchmarkRequest r;
    r.id = next_id_++;
    r.candidate = entry;
    r.launch = launch(entry);
    r.problem = twice_problem();
    r.seed = 3;
    r.reference = launch("right");
    r.bench.budget_ms = 0.01;  // 10 us: ten samples of 1 us
    r.bench.min_runs = 3;
    r.bench.max_runs = 50;
    return r;
  }

  Counts counts_;
  int files_read_ = 0;
  std::uint64_t next_id_ = 1;
  RequestFlow flow_;
};

TEST_F(RequestFlowTest, ARightCandidateIsVerifiedAndMeasuredWithTheBudgetsCount) {
  BenchmarkResponse r = flow_.serve(request("right"));
  EXPECT_EQ(r.id, 1u);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  ASSERT_TRUE(r.stats);
  // One first sample, then runs_for_budget(10 us / 1 us) - 1 more, one run at a time (each
  // from poisoned outputs, checked after: the first kAlwaysChecked runs all are).
  EXPECT_EQ(r.stats->runs, 10);
  EXPECT_DOUBLE_EQ(r.stats->median_ns, kSampleNs);
  EXPECT_EQ(counts_.sample_counts, std::vector<int>(10, 1));
  EXPECT_EQ(counts_.resets, 10);
  EXPECT_FALSE(r.restart);
}

TEST_F(RequestFlowTest, UncheckedTimedRunsGoBackToBackEachFromPoisonedOutputs) {
  BenchmarkRequest q = request("right");
  q.bench.budget_ms = 0.2;  // 200 runs of 1 us
  q.bench.max_runs = 200;
  BenchmarkResponse r = flow_.serve(q);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(r.stats->runs, 200);
  const std::vector<int>& segments = counts_.sample_counts;
  EXPECT_EQ(std::accumulate(segments.begin(), segments.end(), 0), 200);
  EXPECT_EQ(counts_.resets, 200);  // every run from poisoned outputs, checked or not
  // The always-checked runs one by one, then runs up to each drawn check in one call. A check is
  // drawn for one run in kMinCheckEvery at least, at random: about 12 calls for the 190 others,
  // but fewer now and then (more than 11 failed 4 times in 10,000). At least one drawn besides
  // the last run's fails once in 200,000 at the lowest rate.
  ASSERT_GT(segments.size(), static_cast<std::size_t>(TimedChecks::kAlwaysChecked) + 1);
  EXPECT_EQ(std::vector<int>(segments.begin(), segments.begin() + TimedChecks::kAlwaysChecked),
            std::vector<int>(TimedChecks::kAlwaysChecked, 1));
  EXPECT_GT(*std::max_element(segments.begin(), segments.end()), 1);
  EXPECT_LT(segments.size(), 200u);
}

TEST_F(RequestFlowTest, SkippingWorkBetweenChecksIsCaughtAtTheNextCheck) {
  // Right for the two verification calls and the always-checked runs, then skipping: poisoned
  // outputs left as they are show at the next checked run, whichever it is.
  BenchmarkRequest q = request("skips_after_always");
  q.bench.budget_ms = 0.2;
  q.bench.max_runs = 200;
  BenchmarkResponse r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("changed behaviour under timing"));
}

TEST_F(RequestFlowTest, AboveTheBestSoFarIsAbandonedAfterItsFirstRunsWithTheirStats) {
  BenchmarkRequest q = request("right");
  q.abandon_above_ns = kSampleNs / 2;  // the best so far is twice as fast
  BenchmarkResponse r = flow_.serve(q);
  ASSERT_EQ(r.outcome, Outcome::kAbandoned) << r.message;
  ASSERT_TRUE(r.stats);  // the partial statistics go back with it
  EXPECT_EQ(r.stats->runs, kAbandonAfterRuns);
  EXPECT_DOUBLE_EQ(r.stats->median_ns, kSampleNs);
  EXPECT_EQ(counts_.sample_counts, std::vector<int>(kAbandonAfterRuns, 1));
  // Within the bound it is measured to the budget as before.
  q.abandon_above_ns = kSampleNs * 1.1;
  r = flow_.serve(q);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(r.stats->runs, 10);
}

TEST_F(RequestFlowTest, EachWayOfBeingWrongHasItsOutcome) {
  const std::pair<const char*, Outcome> cases[] = {
      {"wrong", Outcome::kWrongResult},
      {"past_end", Outcome::kRedzoneViolation},
      {"half_written", Outcome::kUnwrittenOutput},
      {"writes_input", Outcome::kInputModified},
      {"fails", Outcome::kLaunchError},
  };
  for (const auto& [entry, outcome] : cases) {
    BenchmarkResponse r = flow_.serve(request(entry));
    EXPECT_EQ(r.outcome, outcome) << entry << ": " << r.message;
    EXPECT_FALSE(r.stats) << entry;
    EXPECT_FALSE(r.restart) << entry;
  }
  EXPECT_EQ(counts_.allocations, 1);  // one problem, prepared once for all of them
  EXPECT_TRUE(counts_.sample_counts.empty());
  EXPECT_EQ(counts_.faults, 1);  // only the failed launch asks the device
  // And a right one still passes after them.
  EXPECT_EQ(flow_.serve(request("right")).outcome, Outcome::kOk);
}

TEST_F(RequestFlowTest, AnUnwrittenOutputIsCaughtWithoutAReferenceToo) {
  BenchmarkRequest q = request("half_written");
  q.reference.reset();
  BenchmarkResponse r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("output c: element 32 was never written"));
  q = request("wrong");
  q.reference.reset();
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kOk);  // nothing to tell it from the right answer
}

TEST_F(RequestFlowTest, TheReferenceFileRouteVerifiesLikeTheLaunch) {
  BenchmarkRequest q = request("wrong");
  q.reference.reset();
  q.expected = "reference.bin";
  q.measure = false;
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kWrongResult);
  q = request("right");
  q.reference.reset();
  q.expected = "reference.bin";
  q.measure = false;
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kOk);
  EXPECT_EQ(files_read_, 1);  // read once for the prepared problem

  q.expected = "elsewhere.bin";
  BenchmarkResponse r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("right: no reference to verify against: no such file"));
}

TEST_F(RequestFlowTest, ABrokenReferenceLeavesNothingToVerifyAgainst) {
  BenchmarkRequest q = request("right");
  q.reference = launch("half_written");
  BenchmarkResponse r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("no reference to verify against: reference: unwritten_output"));
  q.reference = launch("missing");
  r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("reference does not load: cannot open missing"));
}

TEST_F(RequestFlowTest, TheProblemIsPreparedAgainOnlyWhenProblemSeedOrReferenceChange) {
  ASSERT_EQ(flow_.serve(request("right")).outcome, Outcome::kOk);
  ASSERT_EQ(flow_.serve(request("right")).outcome, Outcome::kOk);
  EXPECT_EQ(counts_.allocations, 1);
  BenchmarkRequest q = request("right");
  q.seed = 4;
  ASSERT_EQ(flow_.serve(q).outcome, Outcome::kOk);
  EXPECT_EQ(counts_.allocations, 2);
  q.reference.reset();
  ASSERT_EQ(flow_.serve(q).outcome, Outcome::kOk);
  EXPECT_EQ(counts_.allocations, 3);
}

TEST_F(RequestFlowTest, LoadFailuresAreLoadErrorsAndAMissingLibraryIsUnsupported) {
  BenchmarkResponse r = flow_.serve(request("missing"));
  EXPECT_EQ(r.outcome, Outcome::kLoadError) << r.message;
  EXPECT_THAT(r.message, HasSubstr("cannot open missing"));
  r = flow_.serve(request("no_library"));
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_EQ(counts_.allocations, 0);  // nothing prepared for a candidate that did not load
}

TEST_F(RequestFlowTest, AStickyFaultRestartsAndRefusesWhatFollows) {
  BenchmarkResponse r = flow_.serve(request("sticky"));
  EXPECT_EQ(r.outcome, Outcome::kLaunchError) << r.message;
  EXPECT_THAT(r.message, HasSubstr("FAKE_STICKY; the worker restarts"));
  EXPECT_TRUE(r.restart);
  r = flow_.serve(request("right"));
  EXPECT_EQ(r.outcome, Outcome::kLaunchError) << r.message;
  EXPECT_THAT(r.message, HasSubstr("the fake context was lost"));
  EXPECT_TRUE(r.restart);
}

TEST_F(RequestFlowTest, AReferenceRunInProcessServesRequestsThatNameNone) {
  BenchmarkRequest q = request("wrong");
  q.reference.reset();
  Result<double> ns = flow_.prepare_reference(q, FakeLaunch(Behaviour::kRight));
  ASSERT_TRUE(ns) << ns.error().message;
  ASSERT_NE(flow_.reference(), nullptr);
  // In-process candidates come as loaded launches, verified against that reference.
  EXPECT_EQ(flow_.serve(q, FakeLaunch(Behaviour::kWrong)).outcome, Outcome::kWrongResult);
  EXPECT_EQ(flow_.serve(q, FakeLaunch(Behaviour::kRight)).outcome, Outcome::kOk);
  EXPECT_EQ(counts_.allocations, 1);
  EXPECT_EQ(counts_.loads, 0);

  Result<double> bad = flow_.prepare_reference(q, FakeLaunch(Behaviour::kWritesInput));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message, HasSubstr("reference: input_modified: wrote into input a"));
}

TEST_F(RequestFlowTest, RightOnlyOnItsFirstCallIsCaughtByTheSecond) {
  BenchmarkResponse r = flow_.serve(request("first_call_only"));
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("on the stress data set"));
  // Without a reference there is no second data set: the second call is on the first again.
  BenchmarkRequest q = request("first_call_only");
  q.reference.reset();
  r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("on its second call (the first was right)"));
}

TEST_F(RequestFlowTest, RightOnlyForSmallValuesIsCaughtOnTheStressSet) {
  BenchmarkResponse r = flow_.serve(request("small_values_only"));
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  EXPECT_THAT(r.message,
              HasSubstr("on the stress data set (other magnitudes and signs): output c"));
  EXPECT_EQ(counts_.stress_allocations, 1);  // prepared once, with the reference run on it
  EXPECT_EQ(flow_.serve(request("right")).outcome, Outcome::kOk);
  EXPECT_EQ(counts_.stress_allocations, 1);
}

TEST_F(RequestFlowTest, AReferenceThatCannotComputeTheStressSetLeavesItOut) {
  // NaN for |a| > 1: sound on the uniform set only. The problem is still served, verified on
  // the uniform set twice, so a kernel right only for small values passes (the limit the
  // architecture notes name).
  BenchmarkRequest q = request("right");
  q.reference = launch("nan_for_large");
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kOk);
  q.launch = launch("small_values_only");
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kOk);
  q.launch = launch("first_call_only");
  BenchmarkResponse r = flow_.serve(q);
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("on its second call (the first was right)"));
}

TEST_F(RequestFlowTest, RoundOffThatGrowsWithTheValuesIsNotAWrongResult) {
  // 6e-5 on the stress set (inputs up to 64) is over f32's atol of 1e-5 for its small elements,
  // but the stress set's atol grows with its outputs' scale; on the uniform set it is within.
  BenchmarkResponse r = flow_.serve(request("scaled_round_off"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
}

TEST_F(RequestFlowTest, SkippingWorkWhenTimedIsRejectedNotTimed) {
  BenchmarkResponse r = flow_.serve(request("skips_when_timed"));
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("changed behaviour under timing"));
  EXPECT_FALSE(r.stats);
  // Verification alone cannot see it.
  BenchmarkRequest q = request("skips_when_timed");
  q.measure = false;
  EXPECT_EQ(flow_.serve(q).outcome, Outcome::kOk);
}

TEST_F(RequestFlowTest, ARaceWrongOneCallInTwoIsCaughtEveryTime) {
  // Two verification calls and ten checked timed runs: a candidate wrong on a call with
  // probability 1/2 passes all twelve with probability 1/4096.
  int under_timing = 0;
  for (int i = 0; i < 20; ++i) {
    BenchmarkResponse r = flow_.serve(request("racy"));
    EXPECT_EQ(r.outcome, Outcome::kWrongResult) << i << ": " << r.message;
    if (r.message.find("under timing") != std::string::npos) ++under_timing;
  }
  // About one in four passes both verification calls: the timed runs' checks catch those.
  EXPECT_GT(under_timing, 0);
  EXPECT_LT(under_timing, 20);
}

// c and a: 64 elements at stride 2 after one element of offset, so storage element 0 is the
// prefix and 2, 4, ... are gaps.
Problem strided_problem() {
  Problem p = twice_problem();
  p.name = "n=64 strided";
  TensorSpec spec = TensorSpec::contiguous(DType::kF32, {kN});
  spec.strides = {2};
  spec.offset = 1;
  for (ProblemArg& a : p.args) a.tensor = spec;
  return p;
}

TEST_F(RequestFlowTest, WritesAroundAStridedViewAreCaughtWithTheStorageElement) {
  auto serve = [&](const std::string& entry) {
    BenchmarkRequest q = request(entry);
    q.problem = strided_problem();
    return flow_.serve(q);
  };
  BenchmarkResponse r = serve("right");
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  r = serve("writes_gap");
  EXPECT_EQ(r.outcome, Outcome::kRedzoneViolation) << r.message;
  EXPECT_THAT(r.message, HasSubstr("wrote outside the view of c: storage element 2"));
  r = serve("writes_prefix");
  EXPECT_EQ(r.outcome, Outcome::kRedzoneViolation) << r.message;
  EXPECT_THAT(r.message, HasSubstr("wrote outside the view of c: storage element 0"));
  r = serve("writes_input_gap");
  EXPECT_EQ(r.outcome, Outcome::kInputModified) << r.message;
  EXPECT_THAT(r.message, HasSubstr("wrote into input a (storage element 2)"));
}

TEST_F(RequestFlowTest, TheReferencesTimeGoesOutWithTheRequestThatRanIt) {
  BenchmarkResponse first = flow_.serve(request("right"));
  ASSERT_EQ(first.outcome, Outcome::kOk) << first.message;
  EXPECT_GT(first.reference_ns, 0);
  EXPECT_EQ(flow_.serve(request("right")).reference_ns, 0);  // the same prepared problem
}

TEST(RunsForBudget, FillsTheBudgetWithinTheBounds) {
  BenchOptions o;
  o.budget_ms = 1;
  o.min_runs = 3;
  o.max_runs = 200;
  EXPECT_EQ(runs_for_budget(o, 10'000), 100);
  EXPECT_EQ(runs_for_budget(o, 1'000'000), 3);  // slower than the budget: the minimum
  EXPECT_EQ(runs_for_budget(o, 1), 200);        // faster: the maximum
  o.max_runs = 2;
  EXPECT_EQ(runs_for_budget(o, 1), 3);  // a maximum below the minimum gives way
}

}  // namespace
}  // namespace ktune
