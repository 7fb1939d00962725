// The HTML report generator: escaping of everything a cache file can carry, the figures it shows
// (pick, confidence, time per candidate, time by parameter, failures grouped), hostile numbers,
// and its size at scale.
#include "ktune/report/html_report.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>
#include <string>
#include <vector>

namespace ktune {
namespace {

constexpr std::string_view kPlanted = "<script>document.body.dataset.pwned='1'</script>";

std::size_t count(const std::string& hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string::npos;
       at = hay.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

CandidateRecord candidate(std::string name, std::vector<std::pair<std::string, std::string>> params,
                          double median_ns, Outcome outcome = Outcome::kOk,
                          std::string message = {}) {
  CandidateRecord c;
  c.choice_key = "ck-" + name;
  c.name = std::move(name);
  c.params = std::move(params);
  c.outcome = outcome;
  c.message = std::move(message);
  if (outcome == Outcome::kOk) {
    c.stats = BenchStats{median_ns, median_ns * 0.95, median_ns * 1.2, median_ns * 0.01, 25};
  }
  c.compile_s = 0.5;
  return c;
}

// BLOCK in {4, 8, 16}, UNROLL in {1, 2}: time = BLOCK-dependent base * UNROLL factor; BLOCK=16
// UNROLL=2 fails to compile (twice the same message) and BLOCK=4 UNROLL=2 gives wrong results.
TuningRecord sample() {
  TuningRecord r;
  r.key = TuningKey{"mm",   "mm(out C f32[16,32], in A f32[16,64])", "cset", "cpu:test", "g++ 12",
                    "0.1.0"};
  r.created_unix = 1'700'000'000;
  r.compile_s = 1.5;
  r.bench_s = 2.5;
  const auto p = [](int block, int unroll) {
    return std::vector<std::pair<std::string, std::string>>{{"BLOCK", std::to_string(block)},
                                                            {"UNROLL", std::to_string(unroll)}};
  };
  r.candidates = {
      candidate("mm_B4_U1", p(4, 1), 4000),
      candidate("mm_B8_U1", p(8, 1), 2000),
      candidate("mm_B16_U1", p(16, 1), 3000),
      candidate("mm_B4_U2", p(4, 2), 0, Outcome::kWrongResult, "C[3] = 7 expected 8"),
      candidate("mm_B8_U2", p(8, 2), 1000),
      candidate("mm_B16_U2", p(16, 2), 0, Outcome::kCompileError, "error: too big"),
      candidate("mm_B16_U2b", p(16, 2), 0, Outcome::kCompileError, "error: too big"),
      candidate("openblas", {}, 1500),
  };
  r.candidates.back().info = "OpenBLAS sgemm";
  r.winner = "mm_B8_U2";
  r.confidence = PickConfidence{"openblas", 1.5, 1.41, 1.62, 7, 0.012, 0.25, 2, 2, true};
  r.settings = MeasureSettings{50, 3, 100, 1, true, 0, 7, 0.05};
  return r;
}

TEST(HtmlReport, EscapesEveryStringFromTheCache) {
  TuningRecord r = sample();
  const std::string s(kPlanted);
  r.key.op = s;
  r.key.problem = s;
  r.key.device = s;
  r.key.toolchain = s;
  r.key.version = s;
  r.candidates[3].message = s + "\n" + s;
  r.candidates[0].name = s;
  r.candidates[7].info = s;
  r.candidates[1].params.emplace_back(s, s);
  r.candidates[1].metrics.push_back(MetricValue{s, 1.0});
  r.confidence->runner_up = s;
  r.stand_in = s;
  const std::vector<TuningRecord> records{r};
  ReportOptions options;
  options.title = s;
  options.source = s;
  const std::string html = render_html_report(records, options);
  // Ours is the only script element; the planted text is there, escaped, in every place.
  EXPECT_EQ(count(html, "<script"), 1U);
  EXPECT_EQ(count(html, "pwned='1'</script>"), 0U);
  EXPECT_GE(count(html, "&lt;script&gt;document.body.dataset.pwned=&#39;1&#39;&lt;/script&gt;"),
            14U);
  // Attribute breakouts: no raw quote from the data reaches an attribute.
  EXPECT_EQ(html.find("pwned='"), std::string::npos);
}

TEST(HtmlReport, EscapeSanitizesBytesThatAreNotText) {
  EXPECT_EQ(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(html_escape("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(html_escape(std::string("nul\0x", 5)), "nul\xEF\xBF\xBDx");
  EXPECT_EQ(html_escape("\x1b[31m"), "\xEF\xBF\xBD[31m");
  EXPECT_EQ(html_escape("\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80"),
            "\xC2\xB5s \xE2\x86\x92 \xF0\x9F\x98\x80");
  // A lone continuation byte, a cut sequence, an overlong '<' (C0 BC), a surrogate (ED A0 80).
  EXPECT_EQ(html_escape("\x80"), "\xEF\xBF\xBD");
  EXPECT_EQ(html_escape("\xE2\x86"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(html_escape("\xC0\xBC"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(html_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(HtmlReport, ShowsPickConfidenceFailuresAndParameters) {
  const std::vector<TuningRecord> records{sample()};
  const std::string html = render_html_report(records);
  EXPECT_NE(html.find("&#8594; mm_B8_U2 (1.00 \xC2\xB5s)"), std::string::npos);  // summary
  // Confidence: runner-up, ratio, interval and rounds, trusted.
  EXPECT_NE(html.find("<code>openblas</code>"), std::string::npos);
  EXPECT_NE(html.find("1.500&#215;"), std::string::npos);
  EXPECT_NE(html.find("[1.410, 1.620] over 7 paired rounds"), std::string::npos);
  EXPECT_NE(html.find("badge green\">trusted"), std::string::npos);
  EXPECT_NE(html.find("budget 50 ms, 3&#8211;100 timed runs"), std::string::npos);
  // Failures: one group per outcome, the two identical compile errors as one message.
  EXPECT_NE(html.find(">compile_error</span> 2 candidates, 1 distinct message"), std::string::npos);
  EXPECT_NE(html.find(">wrong_result</span> 1 candidate, 1 distinct message"), std::string::npos);
  EXPECT_EQ(count(html, "<pre>error: too big</pre>"), 1U);
  EXPECT_NE(html.find("<code>mm_B16_U2</code>, <code>mm_B16_U2b</code>"), std::string::npos);
  // Time by parameter: BLOCK=8 has 2000 and 1000 measured: median 1.50 us, best 1.00 us; the
  // pick's value. BLOCK=16 has one measured (3000) and two failed. UNROLL=1: 4000, 2000, 3000.
  EXPECT_NE(html.find("BLOCK=8: median 1.50 \xC2\xB5s over 2 measured, best 1.00 \xC2\xB5s; 2 "
                      "candidates, 0 failed (the pick's value)"),
            std::string::npos);
  EXPECT_NE(html.find("BLOCK=16: median 3.00 \xC2\xB5s over 1 measured, best 3.00 \xC2\xB5s; 3 "
                      "candidates, 2 failed"),
            std::string::npos);
  EXPECT_NE(html.find("UNROLL=1: median 3.00 \xC2\xB5s over 3 measured"), std::string::npos);
  // Values in numeric order: 4, 8, 16 (not 16, 4, 8).
  const std::size_t b4 = html.find("BLOCK=4:");
  const std::size_t b8 = html.find("BLOCK=8:");
  const std::size_t b16 = html.find("BLOCK=16:");
  ASSERT_NE(b4, std::string::npos);
  EXPECT_LT(b4, b8);
  EXPECT_LT(b8, b16);
  // The table: every candidate, the winner's row marked; the library call shows its info.
  EXPECT_NE(html.find("All 8 candidates"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"win\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"info\">OpenBLAS sgemm</div>"), std::string::npos);
  // The time chart draws the 5 measured, fastest first.
  EXPECT_NE(html.find("5 of 5 measured candidates drawn"), std::string::npos);
  const std::size_t first = html.find("<g class=\"win\"><title>mm_B8_U2: median");
  const std::size_t second = html.find("<g class=\"ru\"><title>openblas: median");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
}

TEST(HtmlReport, SelfContainedWithOneHashedScript) {
  const std::vector<TuningRecord> records{sample()};
  const std::string html = render_html_report(records);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  // Nothing fetched at view time: no URL, no external reference of any kind.
  for (const char* ref : {"http:", "https:", "//cdn", "src=", "href=\"http", "@import", "url("}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("script-src 'sha256-[A-Za-z0-9+/]{43}='")));
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("data-ktune-report', 'ready'"), std::string::npos);
}

TEST(HtmlReport, HostileNumbersGiveFiniteCoordinates) {
  TuningRecord r = sample();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  r.candidates[0].stats = BenchStats{nan, nan, nan, nan, -1};
  r.candidates[1].stats = BenchStats{inf, -inf, inf, inf, 3};
  r.candidates[2].stats = BenchStats{2500, -5, nan, -7, 1};       // min < 0, max unknown, MAD < 0
  r.candidates[4].stats = BenchStats{1000, 2000, 500, 1e300, 2};  // min > median > max
  r.confidence->runner_up_ratio = nan;
  r.compile_s = inf;
  const std::vector<TuningRecord> records{r};
  const std::string html = render_html_report(records);
  // Every number in a coordinate attribute is finite.
  const std::regex coord(R"re(\b(x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)")re");
  std::size_t seen = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), coord);
       it != std::sregex_iterator(); ++it) {
    const std::string v = (*it)[2];
    if (v == "100%") continue;
    ++seen;
    ASSERT_TRUE(std::isfinite(std::stod(v))) << (*it)[0];
  }
  EXPECT_GT(seen, 20U);
  EXPECT_NE(html.find("3 of 3 measured candidates drawn"), std::string::npos);
}

TEST(HtmlReport, NothingMeasuredAndNoRecords) {
  TuningRecord r = sample();
  for (CandidateRecord& c : r.candidates) {
    c.outcome = Outcome::kCrashed;
    c.stats.reset();
    c.message = "killed by signal 11 (SIGSEGV)";
  }
  r.confidence.reset();
  const std::vector<TuningRecord> records{r};
  const std::string html = render_html_report(records);
  EXPECT_NE(html.find("No candidate was measured"), std::string::npos);
  EXPECT_NE(html.find(">crashed</span> 8 candidates, 1 distinct message"), std::string::npos);
  EXPECT_NE(html.find("no value was measured"), std::string::npos);
  EXPECT_NE(html.find("Not stored"), std::string::npos);
  // A record a lookup would refuse (its winner crashed) says so.
  EXPECT_NE(html.find("<dt>not served</dt>"), std::string::npos);

  const std::string empty = render_html_report({});
  EXPECT_NE(empty.find("No tuning records: nothing to report."), std::string::npos);
  EXPECT_NE(empty.find("data-ktune-report"), std::string::npos);
}

TEST(HtmlReport, LongMessagesAreCutAtACharacterBoundary) {
  TuningRecord r = sample();
  std::string message;
  for (int i = 0; i < 5000; ++i) message += "\xC2\xB5";  // 10000 bytes of two-byte characters
  r.candidates[3].message = message;
  ReportOptions options;
  options.max_message_bytes = 1001;
  const std::vector<TuningRecord> records{r};
  const std::string html = render_html_report(records, options);
  EXPECT_NE(html.find("message cut: 1001 of 10000 bytes shown"), std::string::npos);
  std::string shown;
  for (int i = 0; i < 500; ++i) shown += "\xC2\xB5";
  EXPECT_NE(html.find("<pre>" + shown + "\xE2\x80\xA6</pre>"), std::string::npos);
  EXPECT_EQ(html.find("\xEF\xBF\xBD"), std::string::npos);  // no broken character
}

// 200 problems of 300 candidates (4 parameters, a tenth failing with a long message): the file
// stays a few hundred bytes per candidate, the chart draws 30 of each, and it is made quickly.
TEST(HtmlReport, ScalesToHundredsOfProblemsAndCandidates) {
  std::vector<TuningRecord> records;
  for (int p = 0; p < 200; ++p) {
    TuningRecord r = sample();
    r.key.problem = "mm(M=" + std::to_string(p) + ")";
    r.candidates.clear();
    for (int i = 0; i < 300; ++i) {
      std::vector<std::pair<std::string, std::string>> params{
          {"BLOCK_M", std::to_string(16 << (i % 4))},
          {"BLOCK_N", std::to_string(16 << (i / 4 % 4))},
          {"STAGES", std::to_string(i / 16 % 5)},
          {"VARIANT", "v" + std::to_string(i)}};
      const bool bad = i % 10 == 9;
      r.candidates.push_back(candidate("mm_cand_" + std::to_string(i) + "_BLOCK_M_BLOCK_N_STAGES",
                                       params, 1000.0 + 37.0 * ((i * 7919) % 300),
                                       bad ? Outcome::kCompileError : Outcome::kOk,
                                       bad ? std::string(3000, 'e') : std::string()));
    }
    r.winner = r.candidates[0].name;
    r.confidence->runner_up = r.candidates[1].name;
    records.push_back(std::move(r));
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string html = render_html_report(records);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::size_t candidates = 200 * 300;
  std::printf("200 records of 300 candidates: %zu bytes in %.2f s\n", html.size(), seconds);
  EXPECT_LT(html.size() / candidates, 700U) << html.size();
  EXPECT_LT(seconds, 10.0);
  // The fastest 30 and the runner-up (candidate 1 is about the 107th fastest).
  EXPECT_EQ(count(html, "31 of 270 measured candidates drawn"), 200U);
  // VARIANT has 300 values: 40 drawn, the rest counted; the identical long messages once each.
  EXPECT_EQ(count(html, "260 more values not drawn"), 200U);
  EXPECT_EQ(count(html, "30 candidates, 1 distinct message"), 200U);
  // Sections start closed with this many records.
  EXPECT_EQ(count(html, "<details class=\"rec\" open>"), 0U);
}

TEST(HtmlReport, Deterministic) {
  const std::vector<TuningRecord> records{sample(), sample()};
  EXPECT_EQ(render_html_report(records), render_html_report(records));
}

}  // namespace
}  // namespace ktune
