// One search's state and the two ways a batch of proposed candidates is compiled and run
// (search_loop.cpp's search_stage drives them): in turn, or overlapped (measuring while the rest
// compile). Internal to the select module.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "select/search_loop.h"
#include "select/speculative_decide.h"

namespace ktune::search_batch {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The state of one search: what the strategy was told, what counts against the budget.
struct Search {
  const SelectContext& ctx;
  StageRunner& runner;
  std::vector<CandidateRecord>& records;
  std::optional<std::string>* stand_in;
  Strategy& strategy;
  std::optional<double> time_limit_s;
  Clock::time_point start = Clock::now();
  bool prepared = false;
  std::vector<char> evaluated;       // per candidate
  const std::vector<char>& resumed;  // per candidate, or empty
  SearchRun run;
  // Decide rounds while waiting on compiles (null: none), among `measured`: the candidates
  // evaluated so far (resumed ones from the start), in the order they were.
  SpeculativeDecide* ahead = nullptr;
  std::vector<std::size_t> measured = {};

  [[nodiscard]] bool out_of_time() {
    if (time_limit_s && seconds_since(start) >= *time_limit_s) run.out_of_time = true;
    return run.out_of_time;
  }
  // The runner prepared with the reference, once, before the first candidate runs.
  [[nodiscard]] Status prepare(Choice* reference) {
    if (prepared) return {};
    prepared = true;
    if (Status s = runner.prepare(reference); !s) {
      return make_error(s.error().code, fmt::format("{}: {}", ctx.title, s.error().message));
    }
    return {};
  }
  // Candidate i, compiled (or failed to): run unless it failed, and tell the strategy.
  void finish(RunOne& one, std::size_t i) {
    const bool ok = records[i].outcome == Outcome::kOk && one.run(i);
    evaluated[i] = 1;
    measured.push_back(i);
    ++run.evaluated;
    tell(i, ok);
  }
  [[nodiscard]] bool is_resumed(std::size_t i) const { return i < resumed.size() && resumed[i]; }
  // A candidate an interrupted run evaluated, proposed again: the strategy learns its kept
  // outcome, nothing runs, and the budget was charged for it at the start.
  void replay(std::size_t i) { tell(i, records[i].outcome == Outcome::kOk); }
  void tell(std::size_t i, bool ok) {
    const CandidateRecord& r = records[i];
    strategy.observe(i, ok && r.stats ? std::optional<double>(r.stats->median_ns) : std::nullopt);
  }
};

// Without overlap: the batch compiled, then run in the order proposed.
[[nodiscard]] Status run_batch(Search& s, const Backend& backend, Choice* reference,
                               const std::vector<std::size_t>& batch);

// With overlap: compile tasks hand finished candidates to this thread, which measures them as
// they come; library choices (nothing to compile) first.
[[nodiscard]] Status run_batch_overlapped(Search& s, const Backend& backend, Choice* reference,
                                          const std::vector<std::size_t>& batch);

}  // namespace ktune::search_batch
