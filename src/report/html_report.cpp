// The HTML report (ktune/report/html_report.h). Layout of the document: a header, an overview
// table with one row per record, then one collapsible section per record: its key facts, the
// pick's confidence, a chart of the fastest candidates' time distributions, one small chart per
// parameter (median time of each value), the failures grouped by outcome and message, and a table
// of every candidate. Charts are SVG written here; the script only sorts tables, filters problems
// and opens a section that a link points to. A Content-Security-Policy allows no network and only
// that script (by its hash), so that even text that escaped escaping could not run.
#include "ktune/report/html_report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/html_text.h"

namespace ktune {
namespace {

using report_text::append_escaped;
using report_text::cut;
using report_text::esc;
using report_text::finite_positive;
using report_text::measured;
using report_text::median_of;
using report_text::not_measured_to_end;
using report_text::sort_value;
using report_text::time_text;
using report_text::utc_text;

// ------------------------------------------------------------------------------------------
// Scales and axes

struct Scale {
  double lo = 1;
  double hi = 10;
  bool log = false;
  double x0 = 0;
  double x1 = 1;
  [[nodiscard]] double operator()(double v) const {
    v = std::clamp(v, lo, hi);
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return x0 + t * (x1 - x0);
  }
};

// Ticks between lo and hi: 1-2-5 steps on a linear scale; decades (with 2 and 5 when few) on a
// log scale.
std::vector<double> ticks(const Scale& s) {
  std::vector<double> out;
  if (s.log) {
    const int d0 = static_cast<int>(std::floor(std::log10(s.lo)));
    const int d1 = static_cast<int>(std::ceil(std::log10(s.hi)));
    const bool fine = d1 - d0 <= 3;
    for (int d = d0; d <= d1 && d - d0 < 40; ++d) {
      for (const double m : {1.0, 2.0, 5.0}) {
        if (m != 1.0 && !fine) continue;
        const double v = m * std::pow(10.0, d);
        if (v >= s.lo * (1 - 1e-9) && v <= s.hi * (1 + 1e-9)) out.push_back(v);
      }
    }
    return out;
  }
  const double range = s.hi - s.lo;
  const double raw = range / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(s.lo / step) * step; v <= s.hi * (1 + 1e-9) && out.size() < 20;
       v += step) {
    out.push_back(v);
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// The time chart: one row per drawn candidate, min-max whisker, a box of median +- one robust
// standard deviation (1.4826 MAD), the median as a bar and its value.

constexpr double kChartWidth = 1000;
constexpr double kLabelRight = 300;
constexpr double kPlotLeft = 312;
constexpr double kPlotRight = 900;
constexpr double kRowHeight = 18;
constexpr double kChartTop = 24;

void time_chart(std::string& out, const TuningRecord& r, const std::vector<std::size_t>& order,
                const ReportOptions& options) {
  // The fastest `chart_candidates`, then the winner and runner-up where they fall outside.
  std::vector<std::size_t> shown;
  const std::string* runner_up = r.confidence ? &r.confidence->runner_up : nullptr;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const CandidateRecord& c = r.candidates[order[k]];
    if (k < options.chart_candidates || c.name == r.winner ||
        (runner_up && !runner_up->empty() && c.name == *runner_up)) {
      shown.push_back(order[k]);
    }
  }
  if (shown.empty()) {
    out += "<p class=\"note\">No candidate was measured: nothing to draw.</p>\n";
    return;
  }
  double lo = INFINITY;
  double hi = 0;
  for (std::size_t i : shown) {
    const BenchStats& s = *r.candidates[i].stats;
    lo = std::min(lo, s.median_ns);
    hi = std::max(hi, s.median_ns);
    if (finite_positive(s.min_ns)) lo = std::min(lo, s.min_ns);
    if (finite_positive(s.max_ns)) hi = std::max(hi, s.max_ns);
  }
  Scale scale{lo, hi, hi / lo > 10, kPlotLeft, kPlotRight};
  if (scale.log) {
    scale.lo = std::pow(10.0, std::floor(std::log10(lo) * 4) / 4);  // quarter decades of margin
    scale.hi = std::pow(10.0, std::ceil(std::log10(hi) * 4) / 4);
  } else {
    const double pad = std::max((hi - lo) * 0.05, hi * 0.01);
    scale.lo = std::max(0.0, lo - pad);
    scale.hi = hi + pad;
  }
  const double height = kChartTop + kRowHeight * static_cast<double>(shown.size()) + 8;
  out += fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
      "aria-label=\"time of each drawn candidate\">\n",
      kChartWidth, height);
  for (double t : ticks(scale)) {
    const double x = scale(t);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"14\">{3}</text>\n",
        x, kChartTop - 4, height - 4, time_text(t));
  }
  out += fmt::format("<text class=\"tick\" x=\"{:.0f}\" y=\"14\">{}</text>\n", kPlotRight + 50,
                     scale.log ? "log scale" : "");
  double y = kChartTop;
  for (std::size_t i : shown) {
    const CandidateRecord& c = r.candidates[i];
    const BenchStats& s = *c.stats;
    const bool win = c.name == r.winner;
    const bool ru = runner_up && !runner_up->empty() && c.name == *runner_up;
    const char* cls = win ? "win" : ru ? "ru" : "oth";
    const double mid = y + kRowHeight / 2;
    const double mn = finite_positive(s.min_ns) ? std::min(s.min_ns, s.median_ns) : s.median_ns;
    const double mx = std::isfinite(s.max_ns) ? std::max(s.max_ns, s.median_ns) : s.median_ns;
    const double sd = std::isfinite(s.mad_ns) ? 1.4826 * std::fabs(s.mad_ns) : 0;
    const double b0 = std::max(mn, s.median_ns - sd);
    const double b1 = std::min(mx, s.median_ns + sd);
    out += fmt::format("<g class=\"{}\"><title>", cls);
    append_escaped(out, c.name);
    out += fmt::format(": median {}, min {}, max {}, MAD {}, {} runs{}</title>",
                       time_text(s.median_ns), time_text(s.min_ns), time_text(s.max_ns),
                       time_text(s.mad_ns), s.runs,
                       win  ? " (the pick)"
                       : ru ? " (runner-up)"
                            : "");
    out += fmt::format("<text class=\"lbl\" x=\"{:.0f}\" y=\"{:.1f}\">", kLabelRight, mid + 4);
    append_escaped(out, cut(c.name, 42));
    out += fmt::format(
        "</text><line class=\"wh\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<rect class=\"box\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>"
        "<line class=\"med\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"val\" x=\"{:.0f}\" y=\"{:.1f}\">{}</text></g>\n",
        scale(mn), scale(mx), mid, mid, scale(b0), mid - 5, std::max(1.0, scale(b1) - scale(b0)),
        10.0, scale(s.median_ns), scale(s.median_ns), mid - 7, mid + 7, kPlotRight + 10, mid + 4,
        time_text(s.median_ns));
    y += kRowHeight;
  }
  out += "</svg>\n";
  out += fmt::format(
      "<p class=\"note\">{} of {} measured candidates drawn, fastest first. Whisker: min to "
      "max of the timed runs; box: median &#177; 1.4826 MAD; bar: median. Blue: the pick; amber: "
      "the runner-up.</p>\n",
      shown.size(), order.size());
}

// ------------------------------------------------------------------------------------------
// Time by parameter: per parameter, the median (over the measured candidates with that value) of
// the candidates' medians, as bars; the best candidate of each value as a dot.

struct ValueStat {
  std::string value;
  std::vector<double> medians;
  int total = 0;
  int failed = 0;
};

struct ParamStat {
  std::string name;
  std::vector<ValueStat> values;
  std::map<std::string, std::size_t, std::less<>> index;
};

std::optional<double> as_number(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<ParamStat> param_stats(const TuningRecord& r) {
  std::vector<ParamStat> params;
  std::map<std::string, std::size_t, std::less<>> by_name;
  for (const CandidateRecord& c : r.candidates) {
    for (const auto& [name, value] : c.params) {
      auto [it, fresh] = by_name.try_emplace(name, params.size());
      if (fresh) params.push_back(ParamStat{name, {}, {}});
      ParamStat& p = params[it->second];
      auto [vit, vfresh] = p.index.try_emplace(value, p.values.size());
      if (vfresh) p.values.push_back(ValueStat{value, {}, 0, 0});
      ValueStat& v = p.values[vit->second];
      ++v.total;
      if (measured(c)) {
        v.medians.push_back(c.stats->median_ns);
      } else if (c.outcome != Outcome::kOk && !not_measured_to_end(c.outcome)) {
        ++v.failed;
      }
    }
  }
  // Numbers in numeric order, anything else in order of first appearance.
  for (ParamStat& p : params) {
    const bool numeric = std::all_of(p.values.begin(), p.values.end(), [](const ValueStat& v) {
      return as_number(v.value).has_value();
    });
    if (numeric) {
      std::stable_sort(p.values.begin(), p.values.end(),
                       [](const ValueStat& a, const ValueStat& b) {
                         return *as_number(a.value) < *as_number(b.value);
                       });
    }
  }
  return params;
}

void param_chart(std::string& out, const ParamStat& p, const std::string* winner_value,
                 const ReportOptions& options) {
  constexpr double kW = 320;
  constexpr double kH = 176;
  constexpr double kLeft = 54;
  constexpr double kRight = 312;
  constexpr double kTop = 22;
  constexpr double kBottom = 128;
  const std::size_t n = std::min(p.values.size(), options.chart_values);
  double top = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!p.values[i].medians.empty()) top = std::max(top, median_of(p.values[i].medians));
  }
  out += "<figure class=\"pcard\"><figcaption>";
  append_escaped(out, cut(p.name, 60));
  out += fmt::format(
      "</figcaption><svg viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
      "aria-label=\"median time by value\">",
      kW, kH);
  if (top <= 0) {
    out += "<text class=\"tick\" x=\"160\" y=\"80\">no value was measured</text></svg></figure>\n";
    return;
  }
  const double ymax = top * 1.12;
  const auto yof = [&](double v) {
    return kBottom - (std::min(v, ymax) / ymax) * (kBottom - kTop);
  };
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/>"
      "<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{3:.1f}\" y2=\"{3:.1f}\"/>"
      "<text class=\"ytick\" x=\"{4}\" y=\"{5:.1f}\">{6}</text>"
      "<text class=\"ytick\" x=\"{4}\" y=\"{2}\">0</text>",
      kLeft, kRight, kBottom, yof(top), kLeft - 4, yof(top) + 4, time_text(top));
  const double slot = (kRight - kLeft) / static_cast<double>(n);
  const double bar = std::min(36.0, slot * 0.7);
  const std::size_t label_every = n <= 12 ? 1 : (n + 11) / 12;
  for (std::size_t i = 0; i < n; ++i) {
    const ValueStat& v = p.values[i];
    const double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    const bool win = winner_value && *winner_value == v.value;
    out += fmt::format("<g class=\"{}\"><title>", win ? "win" : "oth");
    append_escaped(out, p.name);
    out += '=';
    append_escaped(out, v.value);
    if (v.medians.empty()) {
      out += fmt::format(": none of {} measured ({} failed)</title>", v.total, v.failed);
    } else {
      const double med = median_of(v.medians);
      const double best = *std::min_element(v.medians.begin(), v.medians.end());
      out +=
          fmt::format(": median {} over {} measured, best {}; {} candidates, {} failed{}</title>",
                      time_text(med), v.medians.size(), time_text(best), v.total, v.failed,
                      win ? " (the pick's value)" : "");
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>"
          "<circle class=\"best\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>",
          cx - bar / 2, yof(med), bar, kBottom - yof(med), cx, yof(best));
      if (n <= 8) {
        out += fmt::format("<text class=\"btxt\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", cx,
                           yof(med) - 4, time_text(med));
      }
    }
    if (v.medians.empty()) {
      out += fmt::format("<text class=\"xfail\" x=\"{:.1f}\" y=\"{:.1f}\">&#215;</text>", cx,
                         kBottom - 4);
    }
    if (i % label_every == 0) {
      out += fmt::format("<text class=\"xtick\" x=\"{:.1f}\" y=\"{:.1f}\">", cx, kBottom + 14);
      append_escaped(out, cut(v.value, 10));
      out += "</text>";
    }
    out += "</g>";
  }
  if (p.values.size() > n) {
    out +=
        fmt::format("<text class=\"tick\" x=\"160\" y=\"{:.0f}\">{} more values not drawn</text>",
                    kH - 6, p.values.size() - n);
  }
  out += "</svg></figure>\n";
}

void param_section(std::string& out, const TuningRecord& r, const ReportOptions& options) {
  std::vector<ParamStat> params = param_stats(r);
  if (params.empty()) return;
  const CandidateRecord* winner = nullptr;
  for (const CandidateRecord& c : r.candidates) {
    if (c.name == r.winner) winner = &c;
  }
  out += "<h3>Time by parameter</h3>\n<div class=\"pgrid\">\n";
  std::vector<std::string> fixed;
  constexpr std::size_t kMaxParamCharts = 64;
  std::size_t drawn = 0;
  for (const ParamStat& p : params) {
    if (p.values.size() < 2) {
      fixed.push_back(p.name + "=" + (p.values.empty() ? "" : p.values.front().value));
      continue;
    }
    if (drawn == kMaxParamCharts) continue;
    const std::string* wv = nullptr;
    if (winner) {
      for (const auto& [name, value] : winner->params) {
        if (name == p.name) wv = &value;
      }
    }
    param_chart(out, p, wv, options);
    ++drawn;
  }
  out +=
      "</div>\n<p class=\"note\">Bar: median of the medians of the measured candidates with "
      "that value; dot: the fastest of them; &#215;: none measured. The pick's values in "
      "blue.";
  if (!fixed.empty()) {
    out += " Same in every candidate: ";
    for (std::size_t i = 0; i < fixed.size() && i < 32; ++i) {
      if (i) out += ", ";
      out += "<code>";
      append_escaped(out, cut(fixed[i], 80));
      out += "</code>";
    }
    if (fixed.size() > 32) out += fmt::format(" and {} more", fixed.size() - 32);
    out += '.';
  }
  if (drawn == kMaxParamCharts) out += " Only the first 64 parameters are drawn.";
  out += "</p>\n";
}

// ------------------------------------------------------------------------------------------
// Failures by outcome, candidates with the same message together.

void failures_section(std::string& out, const TuningRecord& r, const ReportOptions& options) {
  // outcome -> message -> candidate names, in order of first appearance.
  std::map<int, std::vector<std::pair<std::string, std::vector<const std::string*>>>> groups;
  std::size_t count = 0;
  for (const CandidateRecord& c : r.candidates) {
    if (c.outcome == Outcome::kOk) continue;
    ++count;
    auto& by_message = groups[static_cast<int>(c.outcome)];
    auto it = std::find_if(by_message.begin(), by_message.end(),
                           [&](const auto& g) { return g.first == c.message; });
    if (it == by_message.end()) {
      by_message.emplace_back(c.message, std::vector<const std::string*>{});
      it = std::prev(by_message.end());
    }
    it->second.push_back(&c.name);
  }
  if (count == 0) {
    out += "<h3>Failures</h3>\n<p class=\"note\">Every candidate passed its checks.</p>\n";
    return;
  }
  out += fmt::format("<h3>Failures and candidates not measured ({})</h3>\n", count);
  for (const auto& [outcome_value, by_message] : groups) {
    const auto outcome = static_cast<Outcome>(outcome_value);
    std::size_t n = 0;
    for (const auto& g : by_message) n += g.second.size();
    out += fmt::format(
        "<details class=\"fail{}\"><summary><span class=\"badge {}\">{}</span> {} candidate{}, "
        "{} distinct message{}</summary>\n",
        not_measured_to_end(outcome) ? " quiet" : "", not_measured_to_end(outcome) ? "grey" : "red",
        outcome_name(outcome), n, n == 1 ? "" : "s", by_message.size(),
        by_message.size() == 1 ? "" : "s");
    for (const auto& [message, names] : by_message) {
      out += "<div class=\"fgroup\"><div class=\"fnames\">";
      constexpr std::size_t kNamesShown = 40;
      for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) {
        if (i) out += ", ";
        out += "<code>";
        append_escaped(out, cut(*names[i], 200));
        out += "</code>";
      }
      if (names.size() > kNamesShown) {
        out += fmt::format(" and {} more", names.size() - kNamesShown);
      }
      out += "</div>";
      if (message.empty()) {
        out += "<p class=\"note\">(no message)</p>";
      } else {
        out += "<pre>";
        append_escaped(out, cut(message, options.max_message_bytes));
        out += "</pre>";
        if (message.size() > options.max_message_bytes) {
          out += fmt::format("<p class=\"note\">message cut: {} of {} bytes shown</p>",
                             options.max_message_bytes, message.size());
        }
      }
      out += "</div>\n";
    }
    out += "</details>\n";
  }
}

// ------------------------------------------------------------------------------------------
// Every candidate, in a sortable table.

void candidates_table(std::string& out, const TuningRecord& r,
                      const std::vector<std::size_t>& order) {
  // Measured ones fastest first, then the others in stored order.
  std::vector<std::size_t> rows = order;
  std::vector<bool> in(r.candidates.size(), false);
  for (std::size_t i : order) in[i] = true;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (!in[i]) rows.push_back(i);
  }
  const double best = order.empty() ? 0 : r.candidates[order.front()].stats->median_ns;
  bool any_metrics = false;
  for (const CandidateRecord& c : r.candidates) any_metrics = any_metrics || !c.metrics.empty();
  out += fmt::format(
      "<details class=\"all\"><summary>All {} candidates</summary>\n"
      "<div class=\"scroll\"><table class=\"sortable "
      "cands\"><thead><tr><th>#</th><th>name</th><th>outcome</th>"
      "<th>median</th><th>min</th><th>max</th><th>spread</th><th>runs</th><th>vs best</th>"
      "<th>compile</th><th>parameters</th>{}</tr></thead><tbody>\n",
      r.candidates.size(), any_metrics ? "<th>metrics</th>" : "");
  std::size_t rank = 0;
  for (std::size_t i : rows) {
    const CandidateRecord& c = r.candidates[i];
    ++rank;
    const bool win = c.name == r.winner;
    out +=
        fmt::format("<tr{}><td data-v=\"{}\">{}</td><td>", win ? " class=\"win\"" : "", rank, rank);
    append_escaped(out, c.name);
    if (c.params.empty() && !c.info.empty()) {
      out += "<div class=\"info\">";
      append_escaped(out, cut(c.info, 300));
      out += "</div>";
    }
    out += fmt::format("</td><td><span class=\"o-{}\">{}</span></td>",
                       c.outcome == Outcome::kOk        ? "ok"
                       : not_measured_to_end(c.outcome) ? "quiet"
                                                        : "bad",
                       outcome_name(c.outcome));
    if (c.stats) {
      const BenchStats& s = *c.stats;
      const double spread = finite_positive(s.median_ns) ? 1.4826 * s.mad_ns / s.median_ns : NAN;
      const double ratio = finite_positive(best) && measured(c) ? s.median_ns / best : NAN;
      out += fmt::format(
          "<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>"
          "<td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>",
          sort_value(s.median_ns), time_text(s.median_ns), sort_value(s.min_ns),
          time_text(s.min_ns), sort_value(s.max_ns), time_text(s.max_ns), sort_value(spread),
          std::isfinite(spread) ? fmt::format("{:.1f}%", spread * 100) : "-", s.runs, s.runs,
          sort_value(ratio), std::isfinite(ratio) ? fmt::format("{:.3f}&#215;", ratio) : "-");
    } else {
      out +=
          "<td data-v=\"1e300\">-</td><td data-v=\"1e300\">-</td><td data-v=\"1e300\">-</td>"
          "<td data-v=\"1e300\">-</td><td data-v=\"-1\">-</td><td data-v=\"1e300\">-</td>";
    }
    out += fmt::format("<td data-v=\"{}\">{}</td><td class=\"params\">", sort_value(c.compile_s),
                       std::isfinite(c.compile_s) ? fmt::format("{:.2f} s", c.compile_s) : "-");
    for (std::size_t k = 0; k < c.params.size(); ++k) {
      if (k) out += ' ';
      append_escaped(out, cut(c.params[k].first, 100));
      out += '=';
      append_escaped(out, cut(c.params[k].second, 100));
    }
    out += "</td>";
    if (any_metrics) {
      out += "<td>";
      for (std::size_t k = 0; k < c.metrics.size(); ++k) {
        if (k) out += ", ";
        append_escaped(out, cut(c.metrics[k].name, 100));
        out += fmt::format(" {:.4g}", c.metrics[k].value);
      }
      out += "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div></details>\n";
}

// ------------------------------------------------------------------------------------------
// One record.

void fact(std::string& out, std::string_view label, std::string_view escaped_html) {
  out += fmt::format("<dt>{}</dt><dd>{}</dd>", label, escaped_html);
}

std::string code(std::string_view s) { return "<code>" + esc(s) + "</code>"; }

std::string settings_text(const MeasureSettings& s) {
  std::string t =
      fmt::format("budget {} ms, {}&#8211;{} timed runs, {} warm-up, cache flush {}", s.budget_ms,
                  s.min_runs, s.max_runs, s.warmup_runs, s.flush_cache ? "on" : "off");
  if (s.graph_calls != 0) t += fmt::format(", {} calls per graph", s.graph_calls);
  return t + fmt::format(", {} deciding rounds within a {} close-call band", s.decide_rounds,
                         s.close_call_band);
}

void confidence_box(std::string& out, const TuningRecord& r) {
  out += "<div class=\"conf\"><h3>Confidence</h3>";
  if (!r.confidence) {
    out +=
        "<p class=\"note\">Not stored (a record from before ktune measured it, or a "
        "MultiKernel's).</p></div>\n";
    return;
  }
  const PickConfidence& c = *r.confidence;
  out += fmt::format("<p><span class=\"badge {}\">{}</span></p><dl>", c.trusted ? "green" : "red",
                     c.trusted ? "trusted" : "not trusted");
  if (c.runner_up.empty()) {
    fact(out, "runner-up", "none (no other valid candidate)");
  } else {
    fact(out, "runner-up", code(c.runner_up));
    fact(out, "its time / the pick's", fmt::format("{:.3f}&#215;", c.runner_up_ratio));
    fact(out, "95% interval",
         c.ratio_rounds > 0
             ? fmt::format("[{:.3f}, {:.3f}] over {} paired rounds", c.ratio_low, c.ratio_high,
                           c.ratio_rounds)
             : fmt::format("[{:.3f}, {:.3f}] (first medians; not measured in rounds)", c.ratio_low,
                           c.ratio_high));
  }
  fact(out, "spread", fmt::format("{:.2f}% (1.4826 MAD / median)", c.spread * 100));
  fact(out, "other processes",
       c.others_load < 0
           ? std::string("load unknown")
           : fmt::format("{:.2f} cores busy; ktune measured on {}", c.others_load, c.cores));
  fact(out, "re-verified",
       fmt::format("{} time{} after timing", c.reverified, c.reverified == 1 ? "" : "s"));
  out += "</dl></div>\n";
}

std::vector<std::size_t> measured_order(const TuningRecord& r) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (measured(r.candidates[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return r.candidates[a].stats->median_ns < r.candidates[b].stats->median_ns;
  });
  return order;
}

const CandidateRecord* find_winner(const TuningRecord& r) {
  for (const CandidateRecord& c : r.candidates) {
    if (c.name == r.winner) return &c;
  }
  return nullptr;
}

std::size_t failed_count(const TuningRecord& r) {
  return static_cast<std::size_t>(
      std::count_if(r.candidates.begin(), r.candidates.end(), [](const CandidateRecord& c) {
        return c.outcome != Outcome::kOk && !not_measured_to_end(c.outcome);
      }));
}

void record_section(std::string& out, const TuningRecord& r, std::size_t index, bool open,
                    const ReportOptions& options) {
  const std::vector<std::size_t> order = measured_order(r);
  const CandidateRecord* winner = find_winner(r);
  const std::string digest = r.key.digest();
  out += fmt::format("<section class=\"problem\" id=\"rec-{}\"><details class=\"rec\"{}><summary>",
                     index, open ? " open" : "");
  out += "<span class=\"op\">";
  append_escaped(out, cut(r.key.op, 80));
  out += "</span> <span class=\"pkey\">";
  append_escaped(out, cut(r.key.problem, 160));
  out += "</span> <span class=\"pick\">&#8594; ";
  append_escaped(out, cut(r.winner, 80));
  if (winner && winner->stats) out += fmt::format(" ({})", time_text(winner->stats->median_ns));
  out += "</span></summary>\n<div class=\"body\"><div class=\"top\"><dl class=\"facts\">";
  fact(out, "pick",
       code(r.winner) + (winner && winner->stats ? fmt::format(" &#8212; median {}",
                                                               time_text(winner->stats->median_ns))
                                                 : std::string()));
  fact(out, "op", code(r.key.op));
  fact(out, "problem", code(r.key.problem));
  const std::size_t unfinished = static_cast<std::size_t>(
      std::count_if(r.candidates.begin(), r.candidates.end(),
                    [](const CandidateRecord& c) { return not_measured_to_end(c.outcome); }));
  fact(out, "candidates",
       fmt::format("{} ({} measured, {} failed{})", r.candidates.size(), order.size(),
                   failed_count(r),
                   unfinished ? fmt::format(", {} abandoned or not evaluated", unfinished) : ""));
  fact(out, "digest", code(digest));
  fact(out, "created", esc(utc_text(r.created_unix)));
  fact(out, "device", code(r.key.device));
  fact(out, "toolchain", code(r.key.toolchain));
  fact(out, "ktune version", code(r.key.version));
  fact(out, "compile / measure", fmt::format("{:.2f} s / {:.2f} s", r.compile_s, r.bench_s));
  fact(out, "measured with", r.settings ? settings_text(*r.settings) : "(not stored)");
  if (r.stand_in) {
    fact(
        out, "reference",
        "none; " + code(*r.stand_in) + " stood in for it (every other candidate compared with it)");
  }
  if (Status s = check_record(r, r.key); !s) {
    fact(out, "not served", "<span class=\"badge red\">" + esc(s.error().message) + "</span>");
  }
  out += "</dl>\n";
  confidence_box(out, r);
  out += "</div>\n<h3>Time per candidate</h3>\n";
  time_chart(out, r, order, options);
  param_section(out, r, options);
  failures_section(out, r, options);
  candidates_table(out, r, order);
  out += "</div></details></section>\n";
}

void overview(std::string& out, std::span<const TuningRecord> records) {
  out +=
      "<div class=\"scroll\"><table class=\"sortable "
      "overview\"><thead><tr><th>#</th><th>op</th><th>problem</th>"
      "<th>pick</th><th>median</th><th>candidates</th><th>failed</th><th>runner-up</th>"
      "<th>confidence</th><th>created</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    const CandidateRecord* w = find_winner(r);
    const double med = w && w->stats ? w->stats->median_ns : NAN;
    out += fmt::format("<tr><td data-v=\"{0}\"><a href=\"#rec-{0}\">{1}</a></td><td>", i, i + 1);
    append_escaped(out, cut(r.key.op, 60));
    out += "</td><td class=\"pkey\">";
    append_escaped(out, cut(r.key.problem, 120));
    out += "</td><td>";
    append_escaped(out, cut(r.winner, 60));
    out += fmt::format(
        "</td><td data-v=\"{}\">{}</td><td data-v=\"{}\">{}</td>"
        "<td data-v=\"{}\">{}</td>",
        sort_value(med), time_text(med), r.candidates.size(), r.candidates.size(), failed_count(r),
        failed_count(r));
    if (r.confidence && !r.confidence->runner_up.empty()) {
      out += fmt::format("<td data-v=\"{}\">{:.3f}&#215;</td>",
                         sort_value(r.confidence->runner_up_ratio), r.confidence->runner_up_ratio);
    } else {
      out += "<td data-v=\"1e300\">-</td>";
    }
    if (r.confidence) {
      out += r.confidence->trusted ? "<td><span class=\"badge green\">trusted</span></td>"
                                   : "<td><span class=\"badge red\">not trusted</span></td>";
    } else {
      out += "<td>-</td>";
    }
    out += fmt::format("<td data-v=\"{}\">{}</td></tr>\n", r.created_unix,
                       esc(utc_text(r.created_unix)));
  }
  out += "</tbody></table></div>\n";
}

// ------------------------------------------------------------------------------------------
// The document's fixed parts.

constexpr std::string_view kStyle = R"css(
:root{--blue:#2563eb;--amber:#d97706;--slate:#64748b;--red:#b91c1c;--green:#15803d;--line:#e2e8f0}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#0f172a;background:#f8fafc}
header{background:#0f172a;color:#f8fafc;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px}
header .meta{color:#cbd5e1;font-size:13px}
header code{background:#1e293b;color:#e2e8f0}
main{max-width:1240px;margin:0 auto;padding:16px 24px 48px}
code,pre,.pkey{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
code{background:#f1f5f9;padding:1px 4px;border-radius:4px;word-break:break-all}
pre{background:#0f172a;color:#e2e8f0;padding:10px 12px;border-radius:6px;overflow:auto;max-height:320px;white-space:pre-wrap;word-break:break-all;margin:6px 0}
.toolbar{display:flex;gap:8px;align-items:center;margin:4px 0 12px}
.toolbar input{flex:1;max-width:420px;padding:6px 10px;border:1px solid #cbd5e1;border-radius:6px;font:inherit}
.toolbar button{padding:6px 12px;border:1px solid #cbd5e1;background:#fff;border-radius:6px;font:inherit;cursor:pointer}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f5f9;position:sticky;top:0;cursor:pointer;user-select:none;white-space:nowrap}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
td[data-v]{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.pkey{min-width:300px;max-width:460px;word-break:break-all}
tr.win td{background:#eff6ff;font-weight:600}
.params{font-family:"DejaVu Sans Mono",monospace;font-size:11px;color:#334155}
.info{color:var(--slate);font-size:11px}
.o-ok{color:var(--green)}.o-bad{color:var(--red)}.o-quiet{color:var(--slate)}
.scroll{overflow-x:auto}
section.problem{background:#fff;border:1px solid var(--line);border-radius:8px;margin:14px 0;box-shadow:0 1px 2px #0f172a0d}
details.rec>summary{padding:10px 14px;cursor:pointer;font-size:15px;list-style-position:inside}
details.rec>summary .op{font-weight:700}
details.rec>summary .pkey{color:#475569;word-break:break-all}
details.rec>summary .pick{color:var(--blue);font-weight:600}
.body{padding:0 16px 14px;border-top:1px solid var(--line)}
.top{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:18px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 12px;margin:12px 0}
dt{color:var(--slate)}dd{margin:0;word-break:break-word}
.conf{align-self:start;background:#f8fafc;border:1px solid var(--line);border-radius:8px;padding:4px 14px;margin-top:12px}
.conf dl{grid-template-columns:max-content minmax(0,1fr)}
h3{font-size:15px;margin:18px 0 6px}
.note{color:var(--slate);font-size:12px;margin:4px 0}
.badge{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.badge.green{background:var(--green)}.badge.red{background:var(--red)}.badge.grey{background:var(--slate)}
svg text{font-family:"DejaVu Sans",sans-serif}
.chart .lbl{font:11px "DejaVu Sans Mono",monospace;text-anchor:end;fill:#334155}
.chart .tick{font-size:10px;fill:var(--slate);text-anchor:middle}
.chart .val{font-size:11px;fill:#334155}
.grid{stroke:var(--line);stroke-width:1}
.axis{stroke:#94a3b8;stroke-width:1}
.wh{stroke-width:1.5}.med{stroke-width:3}
.oth .wh,.oth .med{stroke:var(--slate)}.oth .box{fill:#cbd5e1}
.win .wh,.win .med{stroke:var(--blue)}.win .box{fill:#bfdbfe}.win .lbl{fill:var(--blue);font-weight:700}
.ru .wh,.ru .med{stroke:var(--amber)}.ru .box{fill:#fde68a}.ru .lbl{fill:var(--amber)}
.pgrid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:10px}
.pcard{margin:0;border:1px solid var(--line);border-radius:8px;padding:6px 8px;background:#fff}
.pcard figcaption{font:600 12px "DejaVu Sans Mono",monospace;word-break:break-all}
.pcard .bar{fill:#94a3b8}.pcard .win .bar{fill:var(--blue)}
.pcard .best{fill:#0f172a}
.pcard .btxt{font-size:9px;text-anchor:middle;fill:#334155}
.pcard .xtick{font-size:10px;text-anchor:middle;fill:#334155}
.pcard .ytick{font-size:9px;text-anchor:end;fill:var(--slate)}
.pcard .tick{font-size:10px;text-anchor:middle;fill:var(--slate)}
.pcard .xfail{font-size:12px;text-anchor:middle;fill:var(--red)}
details.fail{border-left:3px solid var(--red);padding:2px 10px;margin:6px 0;background:#fef2f2;border-radius:0 6px 6px 0}
details.fail.quiet{border-left-color:var(--slate);background:#f8fafc}
details.fail>summary{cursor:pointer}
.fgroup{margin:6px 0 10px}.fnames{font-size:12px}
details.all{margin-top:14px}details.all>summary{cursor:pointer;font-weight:600}
.empty{padding:40px;text-align:center;color:var(--slate);font-size:16px}
@media (max-width:900px){.top{grid-template-columns:1fr}}
)css";

// Sorts a table by the clicked column (numbers from data-v), filters problems by the text of
// their summary, opens every section or none, and opens the section a link points to; with
// #selftest, exercises all of that. The last line marks the document as fully scripted (the
// headless-browser test reads both).
constexpr std::string_view kScript = R"js(
(function () {
  'use strict';
  function each(list, f) { Array.prototype.forEach.call(list, f); }
  function key(cell) {
    var v = cell.getAttribute('data-v');
    return v === null ? cell.textContent.toLowerCase() : parseFloat(v);
  }
  each(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    each(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        each(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var sections = document.querySelectorAll('section.problem');
  var rows = document.querySelectorAll('table.overview tbody tr');
  var filter = document.getElementById('filter');
  if (filter) {
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      each(sections, function (s) {
        s.hidden = q !== '' && s.querySelector('summary').textContent.toLowerCase().indexOf(q) < 0;
      });
      each(rows, function (r) {
        r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }
  function setAll(open) {
    each(document.querySelectorAll('details.rec'), function (d) { d.open = open; });
  }
  var expand = document.getElementById('expand');
  var collapse = document.getElementById('collapse');
  if (expand) expand.addEventListener('click', function () { setAll(true); });
  if (collapse) collapse.addEventListener('click', function () { setAll(false); });
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var s = id ? document.getElementById(id) : null;
    var d = s ? s.querySelector('details.rec') : null;
    if (d) { d.open = true; s.scrollIntoView(); }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
  // report.html#selftest (the headless-browser test): every column sorted both ways and checked
  // ascending, the filter applied and cleared, every section collapsed and opened again.
  if (location.hash === '#selftest') {
    var ok = true, sorted = 0;
    each(document.querySelectorAll('table.sortable'), function (table) {
      each(table.tHead.rows[0].cells, function (th, col) {
        th.click();
        var prev = null;
        each(table.tBodies[0].rows, function (r) {
          var k = key(r.cells[col]);
          if (prev !== null && k < prev) ok = false;
          prev = k;
        });
        th.click();
        sorted++;
      });
    });
    if (filter) {
      filter.value = '\u0000 matches nothing';
      filter.dispatchEvent(new Event('input'));
      each(sections, function (s) { if (!s.hidden) ok = false; });
      filter.value = '';
      filter.dispatchEvent(new Event('input'));
      each(sections, function (s) { if (s.hidden) ok = false; });
    }
    setAll(false);
    setAll(true);
    document.body.setAttribute('data-ktune-selftest', (ok ? 'passed ' : 'failed ') + sorted);
  }
  document.body.setAttribute('data-ktune-report', 'ready');
})();
)js";

std::string sha256_base64(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &n, EVP_sha256(), nullptr) != 1) return {};
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), md.data(), static_cast<int>(n));
  out.resize(static_cast<std::size_t>(std::max(len, 0)));
  return out;
}

}  // namespace

std::string html_escape(std::string_view text) { return esc(text); }

std::string render_html_report(std::span<const TuningRecord> records,
                               const ReportOptions& options) {
  std::string out;
  out.reserve(16384 + records.size() * 8192);
  // No network, no plugins, no other script than ours (by its hash; without a hash the page
  // works unscripted).
  const std::string hash = sha256_base64(kScript);
  const std::string script_src = hash.empty() ? "'none'" : "'sha256-" + hash + "'";
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:; script-src {}; base-uri 'none'; "
      "form-action 'none'\">\n",
      script_src);
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  append_escaped(out, options.title);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body>\n<header><h1>";
  append_escaped(out, options.title);
  out += "</h1><div class=\"meta\">";
  std::size_t problems = records.size();
  std::size_t candidates = 0;
  for (const TuningRecord& r : records) candidates += r.candidates.size();
  out += fmt::format("{} record{}, {} candidate{}", problems, problems == 1 ? "" : "s", candidates,
                     candidates == 1 ? "" : "s");
  if (!options.source.empty()) {
    out += " &#183; from <code>";
    append_escaped(out, options.source);
    out += "</code>";
  }
  if (options.generated_unix != 0) {
    out += " &#183; made " + esc(utc_text(options.generated_unix));
  }
  out += "</div></header>\n<main>\n";
  if (records.empty()) {
    out += "<p class=\"empty\">No tuning records: nothing to report.</p>\n";
  } else {
    out +=
        "<div class=\"toolbar\"><input id=\"filter\" type=\"search\" placeholder=\"filter "
        "problems (op, problem key, pick)\" aria-label=\"filter problems\">"
        "<button id=\"expand\" type=\"button\">expand all</button>"
        "<button id=\"collapse\" type=\"button\">collapse all</button></div>\n";
    overview(out, records);
    const bool open = records.size() <= options.open_up_to;
    for (std::size_t i = 0; i < records.size(); ++i) {
      record_section(out, records[i], i, open, options);
    }
  }
  out += "</main>\n<script>";
  out += kScript;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace ktune
