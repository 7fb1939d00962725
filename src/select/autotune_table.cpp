// The AUTOTUNE table, in the spirit of Inductor's log_results, plus every failure by name.
#include <fmt/format.h>

#include <algorithm>
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

}  // namespace

std::string format_autotune_table(const std::string& title, const TuningRecord& record, int rows,
                                  bool from_cache) {
  std::vector<const CandidateRecord*> ok;
  std::vector<const CandidateRecord*> failed;
  for (const CandidateRecord& c : record.candidates) {
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
  const double best = !ok.empty() && ok.front()->stats ? ok.front()->stats->median_ns : 0;
  const std::size_t shown = std::min(ok.size(), static_cast<std::size_t>(std::max(rows, 0)));
  for (std::size_t i = 0; i < shown; ++i) {
    const CandidateRecord& c = *ok[i];
    if (c.stats && c.stats->median_ns > 0) {
      out +=
          fmt::format("  {:<{}} {:>11} {:>6.1f}%  {}\n", c.name, width,
                      format_time(c.stats->median_ns), 100.0 * best / c.stats->median_ns, c.info);
    } else {
      out += fmt::format("  {:<{}} {:>11} {:>7}  {}\n", c.name, width, "-", "-", c.info);
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
  for (const CandidateRecord* c : failed) {
    out += fmt::format("  {:<{}}  {:<17} {}\n", c->name, width, outcome_name(c->outcome),
                       one_line(c->message, 160));
  }
  out += fmt::format(
      "{} candidates ({} valid, {} failed); {:.2f} s compiling, {:.2f} s verifying and "
      "benchmarking\n",
      record.candidates.size(), ok.size(), failed.size(), record.compile_s, record.bench_s);
  if (const auto& c = record.confidence) out += confidence_line(*c);
  return out;
}

}  // namespace ktune
