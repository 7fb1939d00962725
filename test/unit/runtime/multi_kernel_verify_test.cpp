// MultiKernel verifies before it measures: a variant whose outputs disagree with the reference
// variant's (a wrong element, NaN, an element never written) is excluded, reported, never picked
// and never stored as a pick, however fast it is and wherever it stands in the list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "ktune/cache/tuning_cache.h"
#include "ktune/runtime/multi_kernel.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;

// y = a + b over n floats.
using Add = MultiKernel<float*, const float*, const float*, std::int64_t>;

void add_plain(float* y, const float* a, const float* b, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
// Right, and slower: each element summed in double, three times.
void add_slow(float* y, const float* a, const float* b, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int r = 0; r < 3; ++r) s = static_cast<double>(a[i]) + static_cast<double>(b[i]) + 0 * s;
    y[i] = static_cast<float>(s);
  }
}
// The bug a new user met: only y[0] written, so it is by far the fastest.
void add_first_only(float* y, const float* a, const float* b, std::int64_t) { y[0] = a[0] + b[0]; }
void add_off_by_one(float* y, const float* a, const float* b, std::int64_t n) {
  add_plain(y, a, b, n);
  y[n - 1] += 1.0f;
}
void add_nan(float* y, const float* a, const float* b, std::int64_t n) {
  add_plain(y, a, b, n);
  y[n / 2] = std::numeric_limits<float>::quiet_NaN();
}

ShapeKey add_bucket(float* const&, const float* const&, const float* const&,
                    const std::int64_t& n) {
  return {n, 0, 0, 0};
}
std::size_t y_bytes(float* const&, const float* const&, const float* const&,
                    const std::int64_t& n) {
  return static_cast<std::size_t>(n) * sizeof(float);
}

MultiKernelOptions options(std::FILE* report, TuningCache* cache = nullptr) {
  MultiKernelOptions o;
  o.name = "add";
  o.cache = cache;
  o.report = report;
  o.bench = {.warmup_runs = 0, .budget_ms = 1, .min_runs = 3, .max_runs = 5};
  return o;
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) text += buf;
  return text;
}

class MultiKernelVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("KTUNE_FORCE_PICK");
    ::unsetenv("KTUNE_MULTI_KERNEL_DISABLE_CACHE");
    report_ = std::tmpfile();
    ASSERT_NE(report_, nullptr);
    for (std::int64_t i = 0; i < kN; ++i) {
      a_[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i % 11) - 2;
      b_[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i % 5);
    }
  }
  void TearDown() override { std::fclose(report_); }
  // The caller's y, and what it must hold after the call.
  void call(Add& mk) { mk(y_.data(), a_.data(), b_.data(), kN); }
  void expect_right_result() {
    for (std::int64_t i = 0; i < kN; ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(y_[k], a_[k] + b_[k]) << "element " << i;
    }
  }
  static constexpr std::int64_t kN = 1 << 14;
  std::vector<float> a_ = std::vector<float>(kN), b_ = std::vector<float>(kN),
                     y_ = std::vector<float>(kN, 0.0f);
  std::FILE* report_ = nullptr;
};

TEST_F(MultiKernelVerify, BrokenVariantsAreExcludedReportedAndNeverPickedOrStored) {
  auto cache = make_memory_cache();
  auto mk = Add::create(options(report_, cache.get()),
                        {{"plain", &add_plain},
                         {"first_only", &add_first_only},
                         {"off_by_one", &add_off_by_one},
                         {"nan", &add_nan},
                         {"slow", &add_slow}},
                        &add_bucket, {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  call(*mk);
  expect_right_result();
  const std::string pick = *mk->picked(add_bucket(nullptr, nullptr, nullptr, kN));
  EXPECT_TRUE(pick == "plain" || pick == "slow") << pick;

  const std::vector<MultiKernelFailure> failures = mk->failures();
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures[0].variant, "first_only");
  EXPECT_EQ(failures[0].outcome, Outcome::kUnwrittenOutput);
  EXPECT_EQ(failures[1].variant, "off_by_one");
  EXPECT_EQ(failures[1].outcome, Outcome::kWrongResult);
  EXPECT_EQ(failures[2].variant, "nan");
  EXPECT_EQ(failures[2].outcome, Outcome::kNanOutput);
  const std::string said = read_all(report_);
  EXPECT_THAT(said, HasSubstr("ktune: MultiKernel 'add' bucket 16384x0x0x0: variant 'first_only' "
                              "excluded: unwritten_output: "));
  EXPECT_THAT(said, HasSubstr("variant 'off_by_one' excluded: wrong_result: written argument 0 "
                              "against the reference: 1 of 16384 elements differ"));

  // The stored record: the pick is a verified variant, the others keep their outcomes and no time.
  auto records = cache->list();
  ASSERT_TRUE(records.has_value());
  ASSERT_EQ(records->size(), 1u);
  const TuningRecord& r = (*records)[0];
  EXPECT_EQ(r.winner, pick);
  for (const CandidateRecord& c : r.candidates) {
    const bool broken = c.name == "first_only" || c.name == "off_by_one" || c.name == "nan";
    EXPECT_EQ(c.outcome == Outcome::kOk, !broken) << c.name << " " << outcome_name(c.outcome);
    EXPECT_EQ(c.stats.has_value(), !broken) << c.name;
  }
}

// A reference that writes only y[0] cannot be the reference: the next variant is, and the broken
// one is excluded like any other.
TEST_F(MultiKernelVerify, ABrokenFirstVariantDoesNotBecomeTheReference) {
  auto mk =
      Add::create(options(report_),
                  {{"first_only", &add_first_only}, {"slow", &add_slow}, {"plain", &add_plain}},
                  &add_bucket, {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  call(*mk);
  expect_right_result();
  ASSERT_EQ(mk->failures().size(), 1u);
  EXPECT_EQ(mk->failures()[0].variant, "first_only");
  EXPECT_THAT(mk->failures()[0].message, HasSubstr("as the reference"));
}

// A wrong reference named by the user is the user's truth: the right variants disagree with it
// and are excluded; only it remains.
TEST_F(MultiKernelVerify, TheDesignatedReferenceDecides) {
  MultiKernelOptions o = options(report_);
  o.reference = "off_by_one";
  auto mk = Add::create(o, {{"plain", &add_plain}, {"off_by_one", &add_off_by_one}}, &add_bucket,
                        {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  call(*mk);
  EXPECT_EQ(*mk->picked(add_bucket(nullptr, nullptr, nullptr, kN)), "off_by_one");
  ASSERT_EQ(mk->failures().size(), 1u);
  EXPECT_EQ(mk->failures()[0].variant, "plain");

  o.reference = "nope";
  auto bad = Add::create(o, {{"plain", &add_plain}}, &add_bucket, {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "MultiKernel 'add': reference 'nope' is no variant; expected one of: plain");
}

// Round-off is not a disagreement: a variant summing in another order passes within the dtype's
// tolerance.
TEST_F(MultiKernelVerify, RoundOffWithinTheToleranceIsNoDisagreement) {
  auto mk = Add::create(options(report_), {{"plain", &add_plain}, {"slow", &add_slow}}, &add_bucket,
                        {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_TRUE(mk.has_value());
  call(*mk);
  EXPECT_TRUE(mk->failures().empty());
  EXPECT_EQ(read_all(report_), "");
}

using Half = MultiKernel<std::uint16_t*, std::int64_t>;
void zero_half(std::uint16_t* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = 0;
}
ShapeKey half_bucket(std::uint16_t* const&, const std::int64_t& n) { return {n, 0, 0, 0}; }
std::size_t half_bytes(std::uint16_t* const&, const std::int64_t& n) {
  return static_cast<std::size_t>(n) * 2;
}

// A 16-bit output may be f16 or bf16: compared, it must say which.
TEST_F(MultiKernelVerify, ACompared16BitOutputNeedsItsDtype) {
  MultiKernelOptions o = options(report_);
  auto bad = Half::create(o, {{"zero", &zero_half}}, &half_bucket, {{0, &half_bytes}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, HasSubstr("mutated argument 0 is compared but its pointee type "
                                             "names no dtype; set its dtype"));
  auto good = Half::create(o, {{"zero", &zero_half}}, &half_bucket,
                           {{0, &half_bytes, ArgUse::kOut, DType::kBF16}});
  ASSERT_TRUE(good.has_value()) << good.error().message;
  std::vector<std::uint16_t> y(64, 7);
  (*good)(y.data(), 64);
  EXPECT_EQ(y, std::vector<std::uint16_t>(64, 0));
  EXPECT_TRUE(good->failures().empty());
}

}  // namespace
}  // namespace ktune
