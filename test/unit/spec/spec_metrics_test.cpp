// metrics: parsed in the file's order with positioned errors, and evaluated per problem at a
// candidate's time.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

const std::string kHead =
    std::string(spec_test::kAddHead) + "problems:\n  - {n: 8}\n  - {n: 1000}\n";

Result<Spec> with_metrics(const std::string& metrics) {
  return parse_inline(kHead + std::string("metrics:\n") + metrics);
}

TEST(SpecMetrics, KeptInTheFilesOrderAndEvaluatedPerProblem) {
  // Names need not be identifiers (GB/s); the order is the file's, not sorted.
  auto spec = with_metrics(
      "  GB/s: 3 * 4 * n / time_s / 1e9\n  Gelem/s: n / time_s / 1e9\n"
      "  elements: n\n");
  ASSERT_TRUE(spec) << spec.error().message;
  ASSERT_EQ(spec->metrics.size(), 3u);
  EXPECT_EQ(spec->metrics[0].name, "GB/s");
  EXPECT_EQ(spec->metrics[1].name, "Gelem/s");
  EXPECT_EQ(spec->metrics[2].name, "elements");
  EXPECT_EQ(spec->metrics[0].line, 11);

  const std::vector<SpecMetric> small = spec_metrics(*spec, spec->problems[0]);
  const std::vector<SpecMetric> big = spec_metrics(*spec, spec->problems[1]);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[0].name, "GB/s");
  EXPECT_DOUBLE_EQ(big[0].value(2e-6), 12.0 * 1000 / 2e-6 / 1e9);  // 6 GB/s
  EXPECT_DOUBLE_EQ(small[0].value(2e-6), 12.0 * 8 / 2e-6 / 1e9);
  EXPECT_DOUBLE_EQ(big[1].value(1e-6), 1.0);
  EXPECT_DOUBLE_EQ(big[2].value(123.0), 1000.0);  // time_s need not appear
}

TEST(SpecMetrics, AValueThatIsNotFiniteIsNaN) {
  auto spec = with_metrics("  rate: n / time_s\n");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_TRUE(std::isnan(spec_metrics(*spec, spec->problems[0])[0].value(0.0)));
}

TEST(SpecMetrics, NoneWithoutTheSection) {
  auto spec = parse_inline(kHead);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_TRUE(spec->metrics.empty());
  EXPECT_TRUE(spec_metrics(*spec, spec->problems[0]).empty());
}

struct BadMetric {
  const char* label;
  std::string metrics;
  std::string message;  // after "<specs dir>/inline.yaml:"
};

void PrintTo(const BadMetric& c, std::ostream* os) { *os << c.label; }

class BadMetrics : public testing::TestWithParam<BadMetric> {};

TEST_P(BadMetrics, ReportsWhereAndWhat) {
  const BadMetric& c = GetParam();
  auto spec = with_metrics(c.metrics);
  ASSERT_FALSE(spec) << "accepted:\n" << c.metrics;
  EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(spec.error().message, (specs_dir() / "inline.yaml").string() + ":" + c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Schema, BadMetrics,
    testing::Values(
        BadMetric{"unknown_name", "  GB/s: 4 * m / time_s\n",
                  "11:9: metrics.GB/s: 'm' in '4 * m / time_s' is neither a problem size nor "
                  "time_s; expected one of n, time_s"},
        BadMetric{"bad_syntax", "  GB/s: 4 * n /\n",
                  "11:9: metrics.GB/s: bad expression '4 * n /': Unexpected end of expression at "
                  "position 8"},
        BadMetric{"duplicate", "  rate: n / time_s\n  rate: 2 * n / time_s\n",
                  "12:3: metrics.rate: duplicate key"},
        BadMetric{"not_a_map", "  - n / time_s\n", "11:3: metrics: expected a mapping; got a list"},
        BadMetric{"not_a_string", "  rate: [n, time_s]\n",
                  "11:9: metrics.rate: expected a string; got a list"}),
    [](const testing::TestParamInfo<BadMetric>& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace ktune
