// `ktune simulate`: replays the strategies against a fully measured space (a tuning record of the
// cache, or a T4 results file) over many seeds and reports how soon each reaches the optimum.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.h"
#include "core/file_util.h"
#include "ktune/cache/t4.h"
#include "ktune/search/simulate.h"
#include "select/candidate_space.h"

namespace ktune::cli {
namespace {

struct SimulateArgs {
  std::string digest;   // a prefix, as `ktune cache show` takes
  std::string problem;  // or the newest record of this problem key
  std::string cache_dir;
  std::string t4;
  std::vector<std::string> strategies;
  std::uint64_t seeds = 50;
  std::size_t batch = 1;
  std::uint64_t max_evals = 0;  // 0: every candidate (or what auto brings)
  double within = 0.02;
  bool json = false;
  bool no_library = false;
};

int fail(std::string_view what) {
  fmt::print(stderr, "error: simulate: {}\n", what);
  return kExitError;
}

// The records' parameters as the space a selection over the same candidates searches
// (make_candidate_space: the same coordinates, so that a simulated strategy walks the
// neighbourhoods a tuning would); candidates without parameters are library calls.
Result<RecordedSpace> to_recorded(const std::vector<CandidateRecord>& cs) {
  RecordedSpace r;
  std::vector<CandidateParams> params;
  params.reserve(cs.size());
  for (const CandidateRecord& c : cs) {
    params.push_back(c.params);
    // Only a measurement to the budget is a time to reach: an abandoned candidate's partial
    // median comes from a tuning that stopped it (record spaces with --no-abandon).
    const bool timed = c.stats && c.outcome == Outcome::kOk;
    r.time_ns.push_back(timed ? std::optional(c.stats->median_ns) : std::nullopt);
    r.cost_s.push_back((c.stats ? c.stats->median_ns * 1e-9 * c.stats->runs : 0) + c.compile_s);
  }
  r.space = make_candidate_space(params);
  if (auto s = check_recorded_space(r); !s) return std::unexpected(s.error());
  return r;
}

Result<std::vector<CandidateRecord>> load(const SimulateArgs& a, const CliContext& ctx) {
  if (!a.t4.empty()) {
    auto text = read_file(a.t4);
    if (!text) return std::unexpected(text.error());
    auto cs = import_t4(*text);
    if (!cs) return make_error(cs.error().code, fmt::format("{}: {}", a.t4, cs.error().message));
    return cs;
  }
  CliContext in = ctx;
  if (!a.cache_dir.empty()) {  // that folder's SQLite file, whatever the global --cache says
    in.cache_dir = a.cache_dir;
    in.cache_url.clear();
  }
  auto cache = open_cache_in(in);
  if (!cache) return make_error(ErrorCode::kIo, "the tuning cache could not be opened");
  auto found = a.digest.empty() ? cache->list() : cache->find_prefix(a.digest);
  if (!found) return std::unexpected(found.error());
  std::vector<TuningRecord> match;  // newest first, as the cache lists them
  for (TuningRecord& r : *found) {
    if (a.problem.empty() || r.key.problem == a.problem) match.push_back(std::move(r));
  }
  if (match.empty()) return make_error(ErrorCode::kNotFound, "no tuning record matches");
  if (match.size() > 1 && a.problem.empty()) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{} records match; give a digest prefix or --problem", match.size()));
  }
  return std::move(match.front().candidates);
}

std::string cell(const Quartiles& q, int decimals) {
  auto one = [&](double v) {
    return std::isinf(v) ? std::string("-") : fmt::format("{:.{}f}", v, decimals);
  };
  return fmt::format("{} {} {}", one(q.q1), one(q.median), one(q.q3));
}

nlohmann::ordered_json to_json(const Quartiles& q) {
  auto one = [](double v) {
    return std::isinf(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
  };
  return {{"q1", one(q.q1)}, {"median", one(q.median)}, {"q3", one(q.q3)}};
}

int run_simulate(const SimulateArgs& a, const CliContext& ctx) {
  if (!a.t4.empty() && (!a.digest.empty() || !a.problem.empty() || !a.cache_dir.empty())) {
    fmt::print(stderr,
               "error: simulate: --t4 reads a file; it takes no digest, --problem or "
               "--cache\n");
    return kExitUsage;
  }
  auto cs = load(a, ctx);
  if (!cs) return fail(cs.error().message);
  const auto missing = std::count_if(cs->begin(), cs->end(), [](const CandidateRecord& c) {
    return c.outcome == Outcome::kNotEvaluated;
  });
  if (missing > 0) {
    fmt::print(stderr, "ktune: warning: {} candidate(s) were not evaluated; replayed as failed\n",
               missing);
  }
  const auto abandoned = std::count_if(cs->begin(), cs->end(), [](const CandidateRecord& c) {
    return c.outcome == Outcome::kAbandoned;
  });
  if (abandoned > 0) {
    fmt::print(stderr,
               "ktune: warning: {} candidate(s) were abandoned (partial times); replayed as "
               "failed: record the space with --no-abandon\n",
               abandoned);
  }
  // A library call that is the optimum is proposed first by every strategy: it hides how they
  // search the template's space.
  if (a.no_library) std::erase_if(*cs, [](const CandidateRecord& c) { return c.params.empty(); });
  auto recorded = to_recorded(*cs);
  if (!recorded) return fail(recorded.error().message);
  SimulateOptions opts;
  opts.batch = a.batch;
  opts.within = a.within;
  if (a.max_evals > 0) opts.max_evals = a.max_evals;
  std::vector<std::string> names = a.strategies;
  if (names.empty()) {
    for (std::string_view n : strategy_names()) names.emplace_back(n);
  }
  double optimum = std::numeric_limits<double>::infinity();
  for (const auto& t : recorded->time_ns) {
    if (t) optimum = std::min(optimum, *t);
  }
  const auto close =
      std::count_if(recorded->time_ns.begin(), recorded->time_ns.end(),
                    [&](const auto& t) { return t && *t <= optimum * (1 + a.within); });
  nlohmann::ordered_json out = {{"candidates", recorded->space.size()},
                                {"parameters", recorded->space.names},
                                {"optimum_ns", optimum},
                                {"within", a.within},
                                {"candidates_within", close},
                                {"seeds", a.seeds},
                                {"batch", a.batch},
                                {"strategies", nlohmann::ordered_json::array()}};
  if (!a.json) {
    fmt::print(
        "{} candidates ({} parameters), optimum {:.3f} us, {} within {:g}%; {} seeds, "
        "batch {}\n",
        recorded->space.size(), recorded->space.dims.size(), optimum / 1e3, close, a.within * 100,
        a.seeds, a.batch);
    fmt::print("{:<14}  {:>26}  {:>32}  {:>7}\n", "STRATEGY", "EVALS_TO_REACH (Q1 MED Q3)",
               "SIM_TIME_S_TO_REACH (Q1 MED Q3)", "REACHED");
  }
  for (const std::string& name : names) {
    auto score = score_strategy(name, *recorded, opts, a.seeds);
    if (!score) return fail(score.error().message);
    if (a.json) {
      out["strategies"].push_back({{"strategy", name},
                                   {"evals", to_json(score->evals)},
                                   {"time_s", to_json(score->time_s)},
                                   {"reached_fraction", score->reached_fraction}});
    } else {
      fmt::print("{:<14}  {:>26}  {:>32}  {:>6.0f}%\n", name, cell(score->evals, 1),
                 cell(score->time_s, 2), score->reached_fraction * 100);
    }
  }
  if (a.json) fmt::print("{}\n", out.dump(1));
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Replay search strategies against a fully measured space (a tuning record or a T4 file): "
      "evaluations and simulated time to reach within --within of the optimum, over --seeds");
  cmd->add_option("digest", a->digest, "Digest prefix of the tuning record (as cache show)");
  cmd->add_option("--problem", a->problem, "The newest record of this problem key");
  cmd->add_option("--cache", a->cache_dir,
                  "Folder of the tuning cache (default: the global --cache, else --cache-dir)");
  cmd->add_option("--t4", a->t4,
                  "A T4 results file (ktune cache export --format t4, Kernel "
                  "Tuner) instead of the cache");
  std::vector<std::string> known;
  for (std::string_view n : strategy_names()) known.emplace_back(n);
  cmd->add_option("--strategy", a->strategies, "Strategies to score (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember(known));
  cmd->add_option("--seeds", a->seeds, "Seeds per strategy (default: 50)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000}));
  cmd->add_option("--batch", a->batch, "Candidates proposed at once (default: 1)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  cmd->add_option("--max-evals", a->max_evals,
                  "Evaluations per run at most (default: every candidate; auto: its budget)")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_option("--within", a->within, "Target: time <= optimum * (1 + within) (default 0.02)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_flag("--json", a->json, "Print JSON instead of the table");
  cmd->add_flag("--no-library", a->no_library,
                "Leave out the candidates without parameters (library calls)");
  cmd->callback([&ctx, a] { ctx.exit_code = run_simulate(*a, ctx); });
}

}  // namespace ktune::cli
