// The report's charts (html_charts.h): scales and ticks, the time chart, and per parameter the
// median time of each value, all as SVG written here.
#include "report/html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>

#include "report/html_text.h"

namespace ktune::report_internal {
namespace {

using report_text::append_escaped;
using report_text::cut;
using report_text::finite_positive;
using report_text::measured;
using report_text::median_of;
using report_text::not_measured_to_end;
using report_text::time_text;

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace ktune::report_internal
