// A record's section and the overview table (html_sections.h): the failures grouped by outcome
// and message, the table of every candidate, the key facts and the confidence box.
#include "report/html_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "report/html_charts.h"
#include "report/html_text.h"

namespace ktune::report_internal {
namespace {

using report_text::append_escaped;
using report_text::cut;
using report_text::esc;
using report_text::finite_positive;
using report_text::measured;
using report_text::not_measured_to_end;
using report_text::sort_value;
using report_text::time_text;
using report_text::utc_text;

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

}  // namespace

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

}  // namespace ktune::report_internal
