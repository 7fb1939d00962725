// The AUTOTUNE table, in the spirit of Inductor's log_results, plus every failure by name.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ktune/select/selector.h"

namespace ktune {
namespace {

std::string format_time(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.2f} us", ns / 1e3);
}

std::string one_line(std::string s, std::size_t max) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

// How far the pick can be trusted, in one line (PickConfidence).
std::string confidence_line(const PickConfidence& c) {
  std::string out = "Pick confidence: ";
  if (c.runner_up.empty()) {
    out += "no runner-up";
  } else if (c.ratio_rounds > 0) {
    out += fmt::format("runner-up {} at {:.3f}x [{:.3f}, {:.3f}] over {} alternating rounds",
                       c.runner_up, c.runner_up_ratio, c.ratio_low, c.ratio_high, c.ratio_rounds);
  } else {
    out += fmt::format("runner-up {} at {:.3f}x", c.runner_up, c.runner_up_ratio);
  }
  out += fmt::format("; spread {:.1f}%; ", 100 * c.spread);
  out += c.others_load >= 0
             ? fmt::format("other processes {:.2f} of {} cores", c.others_load, c.cores)
             : std::string("other processes' load not measured (under 0.5 s)");
  out += fmt::format("; verified {} more times after timing{}\n", c.reverified,
                     c.trusted ? "" : "; NOT TRUSTED (noise)");
  return out;
}

// The metrics' names in the order the candidates give them (every measured candidate has the
// same ones, but one whose value was not finite lacks it).
std::vector<std::string> metric_names(const TuningRecord& record) {
  std::vector<std::string> names;
  for (const CandidateRecord& c : record.candidates) {
    for (const MetricValue& m : c.metrics) {
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
    }
  }
  return names;
}

std::string format_metric(double v) {
  const double a = std::abs(v);
  if (a >= 1e7 || (a > 0 && a < 1e-3)) return fmt::format("{:.3e}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3f}", v);
}

// One metric column per name, right-aligned at least as wide as its name; "-" where a row
// has no value.
std::string metric_cells(const CandidateRecord& c, const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    const auto it = std::find_if(c.metrics.begin(), c.metrics.end(),
                                 [&](const MetricValue& m) { return m.name == n; });
    const std::string cell = it == c.metrics.end() ? "-" : format_metric(it->value);
    out += fmt::format(" {:>{}}", cell, std::max<std::size_t>(n.size(), 10));
  }
  return out;
}

}  // namespace

std::string no_reference_note(const std::string& stand_in) {
  return fmt::format(
      "no reference: candidates compared with each other (against the first valid candidate, "
      "{})",
      stand_in);
}

std::string format_autotune_table(const std::string& title, const TuningRecord& record, int rows,
                                  bool from_cache) {
  std::vector<const CandidateRecord*> ok;
  std::vector<const CandidateRecord*> failed;
  // Candidates a budgeted search left out are a count in the summary, not rows: there may be
  // thousands of them. They all carry the one message that says which search it was.
  std::size_t not_evaluated = 0;
  const CandidateRecord* left_out = nullptr;
  for (const CandidateRecord& c : record.candidates) {
    if (c.outcome == Outcome::kNotEvaluated) {
      ++not_evaluated;
      if (!left_out) left_out = &c;
      continue;
    }
    (c.outcome == Outcome::kOk ? ok : failed).push_back(&c);
  }
  // The pick first, then by median. The pick is usually the lowest median too; where it is not,
  // the decide stage chose it on the paired ratios of its rounds (a load burst lands on one round
  // of all contenders and cancels in their ratio, not in a median of times), and the rows
  // above 100% say so rather than contradict "Selected".
  std::stable_sort(ok.begin(), ok.end(), [&](const auto* a, const auto* b) {
    const bool wa = a->name == record.winner;
    const bool wb = b->name == record.winner;
    if (wa != wb) return wa;
    const double ma = a->stats ? a->stats->median_ns : 0;
    const double mb = b->stats ? b->stats->median_ns : 0;
    return ma < mb;
  });
  std::size_t width = 8;
  for (const CandidateRecord& c : record.candidates) width = std::max(width, c.name.size());
  width = std::min<std::size_t>(width, 60);

  std::string out = fmt::format("AUTOTUNE {}{}\n", title, from_cache ? " [tuning cache]" : "");
  // Loud, above the rows: without a reference "valid" only means "agrees with the stand-in".
  if (record.stand_in) out += fmt::format("  {}\n", no_reference_note(*record.stand_in));
  const auto basis = [&](const CandidateRecord& c) {
    return record.stand_in && c.name == *record.stand_in
               ? std::string("  [comparison basis: stands in for the missing reference]")
               : std::string();
  };
  const std::vector<std::string> metrics = metric_names(record);
  if (!metrics.empty()) {
    std::string header = fmt::format("  {:<{}} {:>11} {:>7}", "", width, "time", "of best");
    for (const std::string& n : metrics) {
      header += fmt::format(" {:>{}}", n, std::max<std::size_t>(n.size(), 10));
    }
    out += header + "\n";
  }
  const double best = !ok.empty() && ok.front()->stats ? ok.front()->stats->median_ns : 0;
  const std::size_t shown = std::min(ok.size(), static_cast<std::size_t>(std::max(rows, 0)));
  for (std::size_t i = 0; i < shown; ++i) {
    const CandidateRecord& c = *ok[i];
    const std::string cells = metric_cells(c, metrics);
    if (c.stats && c.stats->median_ns > 0) {
      out += fmt::format("  {:<{}} {:>11} {:>6.1f}%{}  {}{}\n", c.name, width,
                         format_time(c.stats->median_ns), 100.0 * best / c.stats->median_ns, cells,
                         c.info, basis(c));
    } else {
      out += fmt::format("  {:<{}} {:>11} {:>7}{}  {}{}\n", c.name, width, "-", "-", cells, c.info,
                         basis(c));
    }
  }
  if (ok.size() > shown) out += fmt::format("  ... {} more valid candidates\n", ok.size() - shown);
  const bool faster_medians =
      best > 0 && std::any_of(ok.begin(), ok.end(), [&](const CandidateRecord* c) {
        return c->stats && c->stats->median_ns > 0 && c->stats->median_ns < best;
      });
  if (faster_medians) {
    out += fmt::format(
        "  (rows above 100%: lower medians, but the alternating rounds' paired ratios decided "
        "for {})\n",
        record.winner);
  }
  // Abandoned candidates are shown like the valid ones, at most `rows` of them (a large space
  // abandons hundreds); failures are always listed.
  std::size_t abandoned = 0;
  const std::size_t abandoned_rows = static_cast<std::size_t>(std::max(rows, 0));
  for (const CandidateRecord* c : failed) {
    if (c->outcome == Outcome::kAbandoned) {
      if (abandoned++ >= abandoned_rows) continue;
      // Its partial median, of the few runs it made: slower than the best, by how much is rough.
      const std::string partial =
          c->stats && c->stats->median_ns > 0
              ? fmt::format("{} median of {} runs; ", format_time(c->stats->median_ns),
                            c->stats->runs)
              : std::string();
      out += fmt::format("  {:<{}}  {:<17} {}{}{}\n", c->name, width, outcome_name(c->outcome),
                         partial, one_line(c->message, 120), basis(*c));
      continue;
    }
    out += fmt::format("  {:<{}}  {:<17} {}{}\n", c->name, width, outcome_name(c->outcome),
                       one_line(c->message, 160), basis(*c));
  }
  if (abandoned > abandoned_rows) {
    out += fmt::format("  ... {} more abandoned as slower\n", abandoned - abandoned_rows);
  }
  const std::string not_measured =
      left_out ? fmt::format(", {} {}", not_evaluated,
                             one_line(left_out->message.starts_with("not measured: ")
                                          ? "not measured, " + left_out->message.substr(14)
                                          : "not evaluated: " + left_out->message,
                                      200))
               : std::string();
  // Abandoned candidates passed verification: valid, though not measured in full.
  const std::string abandoned_count =
      abandoned > 0 ? fmt::format(", {} of them abandoned as slower", abandoned) : std::string();
  out += fmt::format(
      "{} candidates ({} valid, {} failed{}){}; {:.2f} s compiling, {:.2f} s verifying and "
      "benchmarking{}\n",
      record.candidates.size(), ok.size() + abandoned, failed.size() - abandoned, not_measured,
      abandoned_count, record.compile_s, record.bench_s,
      record.stand_in ? "; " + no_reference_note(*record.stand_in) : std::string());
  if (const auto& c = record.confidence) out += confidence_line(*c);
  return out;
}

}  // namespace ktune
