// tune_distributed (tune_distributed.h).
//
// Rank 0 plans: each problem asked for is looked up in the tuning cache (a hit is served, as
// without MPI); the others are sent to every rank (kPlan). With at least as many problems to
// tune as ranks, problem j of them goes to rank j % R, which tunes it whole (a Selector over an
// in-memory cache: compile, measure, decide, re-verify) and sends the record to rank 0 (kResult).
// With fewer, every problem is tuned by all ranks together: rank r compiles and measures the
// candidates i with i % R == r (the search, with no decide stage and no re-verification) and
// sends their rows; rank 0 puts every rank's rows, its own included, into a fresh in-memory
// cache as the partial rows of the whole selection and runs that selection, which resumes them
// (select/resume.h) exactly as after a kill: it measures only candidates no rank delivered, then
// re-measures the close calls itself (decide stage), re-verifies the pick and makes the record.
// So the candidates that decide are timed against each other on one rank, as in a single run.
// Rank 0 alone stores records in the tuning cache (one transaction each, as each arrives), prints
// the tables in spec order, and sends every record to every rank (kFinal).
#include "tune_distributed.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli.h"
#include "select/resume.h"
#include "select/search_loop.h"
#include "select/select_stages.h"

namespace ktune::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What rank 0 knows of one problem at the end.
struct ProblemResult {
  std::optional<TuningRecord> record;
  std::string error;  // when there is no record
  bool from_cache = false;
  int rank = 0;  // who tuned it (problem sharding); -1: all ranks (candidate sharding)
};

// A rank's report on a problem (kResult).
struct Report {
  std::string kind;  // "record", "rows" or "error"
  std::string data;
};

// The line rank 0 writes if mpirun ends it (SIGTERM: a rank died and the job was not run with
// --enable-recovery): what is not stored yet. Replaced as records are stored; never freed.
std::atomic<const std::string*> g_term_note{nullptr};

extern "C" void on_sigterm(int) {
  if (const std::string* note = g_term_note.load()) {
    [[maybe_unused]] auto n = ::write(2, note->data(), note->size());
  }
  ::_exit(kExitError);
}

void set_term_note(std::string text) {
  g_term_note.store(new std::string(std::move(text)));  // NOLINT: read by the signal handler
}

// KTUNE_TEST_MPI_DIE_RANK=r (tests only): rank r ends with _exit(3) once it has tuned its first
// problem, before reporting it: a rank that dies mid-run.
void maybe_die(int rank) {
  const char* env = std::getenv("KTUNE_TEST_MPI_DIE_RANK");
  if (env && *env && std::atoi(env) == rank) {
    fmt::print(stderr, "ktune: rank {}: KTUNE_TEST_MPI_DIE_RANK: exiting now\n", rank);
    std::fflush(stderr);
    ::_exit(3);
  }
}

// Whether the candidates of a problem can be sharded: every rank's share must be measured as the
// whole selection would measure it, so the search must measure every candidate (no budget), and
// there must be a reference (without one, the first valid candidate of each share would stand in
// for it, and shares would be compared with different candidates).
bool shardable(const SelectorOptions& o, const SpecChoices& c) {
  if (!c.reference) return false;
  const ResolvedStrategy s = resolve_strategy(o.search, c.candidates.size());
  return s.name == "exhaustive" && !s.max_evals && !o.search.max_evals && !o.search.time_limit_s;
}

std::string rows_to_json(const std::vector<CandidateRecord>& rows, const TuningKey& key,
                         const MeasureSettings& settings) {
  Json out = Json::array();
  for (const CandidateRecord& r : rows) out.push_back(partial_to_json({key, settings, r}));
  return out.dump();
}

Result<std::vector<CandidateRecord>> rows_from_json(const std::string& text) {
  std::vector<CandidateRecord> rows;
  try {
    const Json in = Json::parse(text);
    if (!in.is_array()) return make_error(ErrorCode::kParse, "rows: not an array");
    for (const Json& r : in) {
      if (!r.is_string()) return make_error(ErrorCode::kParse, "rows: not a string");
      auto row = partial_from_json(r.get<std::string>());
      if (!row) return std::unexpected(row.error());
      rows.push_back(std::move(row->candidate));
    }
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kParse, std::string("rows: ") + e.what());
  }
  return rows;
}

class Run {
 public:
  Run(MpiComm& comm, DistributedTune& job)
      : comm_(comm),
        job_(job),
        me_(comm.rank()),
        ranks_(comm.size()),
        scratch_(make_memory_cache()),
        full_(selector_options(job.options, me_)),
        scratch_opts_(caching(full_)),
        share_opts_(share_options(scratch_opts_)),
        share_sel_(job.backend, *scratch_, share_opts_),
        final_sel_(job.backend, *scratch_, scratch_opts_) {}

  int run() {
    if (me_ == 0) return run_root();
    return run_other();
  }

 private:
  // No device lock (the ranks of a host measure at once, on cores of their own), no table (rank
  // 0 prints every table at the end); progress and the JSON log on rank 0 only.
  static SelectorOptions selector_options(SelectorOptions o, int rank) {
    o.lock_dir.clear();
    o.out = nullptr;
    if (rank != 0) {
      o.progress = nullptr;
      o.json_log.clear();
    }
    return o;
  }
  // On the in-memory cache: partial rows are read and kept whatever --retune or --no-cache say
  // (they concern the tuning cache, which only rank 0 touches, after these selections).
  static SelectorOptions caching(SelectorOptions o) {
    o.read_cache = o.write_cache = true;
    return o;
  }
  // A share of the candidates: searched and measured only; the whole selection on rank 0 decides.
  static SelectorOptions share_options(SelectorOptions o) {
    o.close_call_rounds = 0;
    o.noisy_rounds = 0;
    o.reverify_runs = 0;
    return o;
  }

  Result<Problem> problem_of(std::size_t p) {
    return make_problem(job_.spec, job_.spec.problems[p]);
  }

  // This rank's share of problem p's candidates (i % R == rank): their rows as measured, also
  // when the share has no valid candidate (the rows kept as partials until then).
  Result<std::vector<CandidateRecord>> measure_share(const Problem& problem, SpecChoices& c) {
    std::vector<std::size_t> idx;
    for (std::size_t i = static_cast<std::size_t>(me_); i < c.candidates.size();
         i += static_cast<std::size_t>(ranks_)) {
      idx.push_back(i);
    }
    if (idx.empty()) return std::vector<CandidateRecord>{};
    std::vector<ChoicePtr> part;
    part.reserve(idx.size());
    for (std::size_t i : idx) part.push_back(std::move(c.candidates[i]));
    const TuningKey key = share_sel_.key_for(problem, part, c.reference.get());
    auto sel = share_sel_.select(problem, part, c.reference.get());
    for (std::size_t k = 0; k < idx.size(); ++k) c.candidates[idx[k]] = std::move(part[k]);
    if (sel) return std::move(sel->record.candidates);
    if (interrupted()) return std::unexpected(sel.error());
    auto kept = scratch_->partials(key, measure_settings(share_opts_));
    if (!kept || kept->empty()) return std::unexpected(sel.error());
    return kept;
  }

  // Rank 0: the whole selection of problem p over every rank's rows.
  Result<TuningRecord> decide(const Problem& problem, SpecChoices& c,
                              const std::vector<CandidateRecord>& rows) {
    const TuningKey key = final_sel_.key_for(problem, c.candidates, c.reference.get());
    const MeasureSettings settings = measure_settings(scratch_opts_);
    for (const CandidateRecord& r : rows) {
      if (Status s = scratch_->store_partial(key, settings, r); !s) {
        return std::unexpected(s.error());
      }
    }
    auto sel = final_sel_.select(problem, c.candidates, c.reference.get());
    if (!sel) return std::unexpected(sel.error());
    return std::move(sel->record);
  }

  // ---- rank 0 ----

  void store(std::size_t p, ProblemResult r) {
    if (r.record && !r.from_cache && job_.options.write_cache) {
      if (Status s = job_.cache->store(*r.record); !s) {
        r.error = fmt::format("{}: not stored in the tuning cache: {}", job_.spec.problems[p].name,
                              s.error().message);
        r.record.reset();
      }
    }
    results_[p] = std::move(r);
    update_term_note();
  }

  void update_term_note() {
    std::vector<std::string> missing;
    for (std::size_t p : tune_) {
      if (!results_.contains(p)) missing.push_back(job_.spec.problems[p].name);
    }
    set_term_note(fmt::format(
        "error: ktune: rank 0 was ended by mpirun (a rank died; `mpirun --enable-recovery` lets "
        "the others finish): every finished problem is stored; not tuned: {}\n",
        missing.empty() ? std::string("none") : fmt::format("{}", fmt::join(missing, ", "))));
  }

  // Everything received so far (non-blocking with timeout 0): results stored as they come.
  void drain(std::chrono::milliseconds wait) {
    while (auto m = comm_.receive(wait)) {
      wait = std::chrono::milliseconds(0);
      if (m->tag != MpiTag::kResult) continue;
      take(*m);
    }
  }

  void take(const MpiMessage& m) {
    std::size_t p = 0;
    Report rep;
    try {
      const Json j = Json::parse(m.body);
      p = j.at("problem").get<std::size_t>();
      rep.kind = j.at("kind").get<std::string>();
      rep.data = j.at("data").get<std::string>();
    } catch (const Json::exception& e) {
      fmt::print(stderr, "ktune: warning: rank {}: a message that does not parse ignored: {}\n",
                 m.from, e.what());
      return;
    }
    if (!std::count(tune_.begin(), tune_.end(), p)) return;
    if (rep.kind == "rows") {
      reports_[{p, m.from}] = std::move(rep);
      return;
    }
    ProblemResult r;
    r.rank = m.from;
    if (rep.kind == "record") {
      auto recs = import_json(rep.data);
      if (recs && recs->size() == 1) {
        r.record = std::move(recs->front());
      } else {
        r.error =
            fmt::format("{}: the record from rank {} does not parse{}", job_.spec.problems[p].name,
                        m.from, recs ? "" : ": " + recs.error().message);
      }
    } else {
      r.error = rep.data;
    }
    progress(fmt::format("rank {} tuned {}{}", m.from, job_.spec.problems[p].name,
                         r.record ? fmt::format(": {}", r.record->winner) : " (failed)"));
    store(p, std::move(r));
  }

  void progress(const std::string& line) {
    if (job_.options.progress) select_progress(job_.options.progress, line);
  }

  int run_root() {
    const auto t0 = Clock::now();
    // SIGTERM from mpirun (another rank died): say what is not stored, end at once. Records are
    // stored one transaction each, so nothing is half-written.
    struct sigaction sa {};
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGTERM, &sa, nullptr);

    Selector real(job_.backend, *job_.cache, full_);
    int failures = 0;
    for (std::size_t p : job_.problems) {
      auto problem = problem_of(p);
      auto c = problem ? job_.choices(p) : Result<SpecChoices*>(std::unexpected(problem.error()));
      if (!c) {
        results_[p].error = c.error().message;
        continue;
      }
      if (full_.read_cache) {
        const TuningKey key = real.key_for(*problem, (*c)->candidates, (*c)->reference.get());
        std::vector<CandidateId> ids;
        for (const ChoicePtr& x : (*c)->candidates) ids.push_back({x->name(), x->hash_key()});
        auto hit = lookup_checked(*job_.cache, key, ids);
        if (hit && *hit && record_answers(**hit, full_.search) &&
            std::any_of((*c)->candidates.begin(), (*c)->candidates.end(),
                        [&](const ChoicePtr& x) { return x->name() == (*hit)->winner; })) {
          results_[p] = ProblemResult{std::move(**hit), "", true, 0};
          continue;
        }
      }
      tune_.push_back(p);
    }
    const bool by_candidates = tune_.size() < static_cast<std::size_t>(ranks_);
    progress(fmt::format("{} MPI rank(s): {} problem(s) to tune, {} from the tuning cache; {}",
                         ranks_, tune_.size(), job_.problems.size() - tune_.size(),
                         tune_.empty()   ? "nothing to shard"
                         : by_candidates ? "each problem's candidates sharded over the ranks"
                                         : "problems sharded over the ranks"));
    Json plan = Json::array();
    for (std::size_t p : tune_) plan.push_back(p);
    for (int r = 1; r < ranks_; ++r) comm_.send(r, MpiTag::kPlan, plan.dump());
    update_term_note();

    bool first = true;
    for (std::size_t j = 0; j < tune_.size() && !interrupted(); ++j) {
      const std::size_t p = tune_[j];
      auto problem = problem_of(p);
      auto c = job_.choices(p);  // both made above
      SpecChoices& ch = **c;
      if (!by_candidates || !shardable(full_, ch)) {
        if (!by_candidates && j % static_cast<std::size_t>(ranks_) != 0) continue;
        // Rank 0's own problem, or one that is not sharded: tuned here, stored by the Selector.
        auto sel = real.select(*problem, ch.candidates, ch.reference.get());
        if (first) maybe_die(0), first = false;
        ProblemResult r;
        if (sel) {
          r.record = std::move(sel->record);
        } else {
          r.error = sel.error().message;
        }
        results_[p] = std::move(r);  // stored by the Selector already
        update_term_note();
        drain(std::chrono::milliseconds(0));
        continue;
      }
      // Candidates sharded: this rank's share, then every other rank's rows.
      auto own = measure_share(*problem, ch);
      if (first) maybe_die(0), first = false;
      std::vector<CandidateRecord> rows;
      std::vector<int> lost;
      if (own) rows = std::move(*own);
      for (int r = 1; r < ranks_; ++r) {
        while (!reports_.contains({p, r}) && comm_.alive(r) && !interrupted()) {
          drain(std::chrono::milliseconds(200));
        }
        auto rep = reports_.find({p, r});
        if (rep == reports_.end()) {
          lost.push_back(r);
          continue;
        }
        auto theirs = rows_from_json(rep->second.data);
        if (!theirs) {
          fmt::print(stderr, "ktune: warning: rank {}: {}; its candidates are measured here\n", r,
                     theirs.error().message);
          continue;
        }
        for (CandidateRecord& x : *theirs) rows.push_back(std::move(x));
      }
      if (!lost.empty()) {
        progress(fmt::format("{}: rank(s) {} gone; their candidates are measured on rank 0",
                             job_.spec.problems[p].name, fmt::join(lost, ", ")));
        gone_.insert(lost.begin(), lost.end());
      }
      if (interrupted()) break;
      auto rec = decide(*problem, ch, rows);
      ProblemResult r;
      r.rank = -1;
      if (rec) {
        r.record = std::move(*rec);
      } else {
        r.error = rec.error().message;
      }
      store(p, std::move(r));
    }
    // The other ranks' problems: until each has reported or is gone.
    for (;;) {
      if (interrupted()) break;
      bool waiting = false;
      for (std::size_t j = 0; j < tune_.size(); ++j) {
        const int owner = static_cast<int>(j % static_cast<std::size_t>(ranks_));
        if (by_candidates || owner == 0 || results_.contains(tune_[j])) continue;
        if (comm_.alive(owner)) {
          waiting = true;
        } else {
          gone_.insert(owner);
        }
      }
      if (!waiting) break;
      drain(std::chrono::milliseconds(200));
    }
    drain(std::chrono::milliseconds(0));
    return finish_root(t0, failures);
  }

  int finish_root(Clock::time_point t0, int failures) {
    int tuned = 0, hits = 0;
    std::vector<std::string> missing;
    Json records = Json::array();
    std::vector<TuningRecord> all;
    for (std::size_t p : job_.problems) {
      const ProblemDecl& decl = job_.spec.problems[p];
      auto it = results_.find(p);
      if (it == results_.end()) {
        missing.push_back(decl.name);
        continue;
      }
      ProblemResult& r = it->second;
      if (!r.record) {
        fmt::print(stderr, "error: {}\n", r.error);
        ++failures;
        continue;
      }
      ++tuned;
      hits += r.from_cache;
      auto problem = problem_of(p);
      const std::string title = problem ? selection_title(*problem) : decl.name;
      if (std::FILE* out = job_.options.out) {
        std::fputs(
            format_autotune_table(title, *r.record, job_.options.table_rows, r.from_cache).c_str(),
            out);
        const auto w =
            std::find_if(r.record->candidates.begin(), r.record->candidates.end(),
                         [&](const CandidateRecord& x) { return x.name == r.record->winner; });
        fmt::print(out, "Selected {} ({}){}\n", r.record->winner,
                   w != r.record->candidates.end() ? w->info : "",
                   r.from_cache ? " from the tuning cache; compiled nothing, measured nothing"
                   : r.rank < 0 ? ", candidates measured on every rank, decided on rank 0"
                                : fmt::format(", tuned on rank {}", r.rank));
        if (r.record->confidence && !r.record->confidence->trusted) {
          std::fputs(untrusted_warning(title, *r.record->confidence).c_str(), out);
        }
        std::fflush(out);
      }
      all.push_back(*r.record);
    }
    if (job_.after && !interrupted() && !job_.after()) ++failures;
    const bool interrupted_now = interrupted();
    if (!missing.empty() && !interrupted_now) {
      std::vector<std::string> who;
      for (int g : gone_) who.push_back(std::to_string(g));
      fmt::print(stderr,
                 "error: rank(s) {} ended before reporting (process gone, or silent for {} s); "
                 "problems not tuned: {}; the others are stored; rerun the same command to tune "
                 "the missing ones\n",
                 who.empty() ? std::string("?") : fmt::format("{}", fmt::join(who, ", ")),
                 kSilenceLimit.count(), fmt::join(missing, ", "));
    }
    fmt::print(
        "Tuned {} problem(s) in {:.3f} s ({} from the tuning cache{}{}); cache: {}; {} MPI "
        "rank(s)\n",
        tuned, seconds_since(t0), hits, failures ? fmt::format(", {} failed", failures) : "",
        missing.empty() ? "" : fmt::format(", {} missing", missing.size()), job_.cache_label,
        ranks_);
    std::fflush(stdout);
    const int code = (failures || !missing.empty()) ? kExitError : 0;
    Json fin{{"exit", interrupted_now ? 130 : code}, {"records", export_json(all)}};
    const std::string body = fin.dump();
    for (int r = 1; r < ranks_; ++r) {
      if (comm_.alive(r)) comm_.send(r, MpiTag::kFinal, body);
    }
    return code;
  }

  // ---- ranks 1.. ----

  void report(std::size_t p, const std::string& kind, const std::string& data) {
    comm_.send(0, MpiTag::kResult, Json{{"problem", p}, {"kind", kind}, {"data", data}}.dump());
  }

  // The next message with `tag` from rank 0, while rank 0 lives.
  std::optional<MpiMessage> from_root(MpiTag tag) {
    for (;;) {
      if (auto m = comm_.receive(std::chrono::milliseconds(200))) {
        if (m->from == 0 && m->tag == tag) return m;
        continue;
      }
      if (!comm_.alive(0)) return std::nullopt;
    }
  }

  int rank0_gone() {
    fmt::print(stderr,
               "error: ktune: rank {}: rank 0 is gone (process ended, or silent for {} s); "
               "nothing this rank measured is stored\n",
               me_, kSilenceLimit.count());
    return kExitError;
  }

  int run_other() {
    auto plan_msg = from_root(MpiTag::kPlan);
    if (!plan_msg) return rank0_gone();
    try {
      for (const Json& p : Json::parse(plan_msg->body)) tune_.push_back(p.get<std::size_t>());
    } catch (const Json::exception& e) {
      fmt::print(stderr, "error: ktune: rank {}: the plan from rank 0 does not parse: {}\n", me_,
                 e.what());
      return kExitError;
    }
    const bool by_candidates = tune_.size() < static_cast<std::size_t>(ranks_);
    bool first = true;
    for (std::size_t j = 0; j < tune_.size() && !interrupted(); ++j) {
      const std::size_t p = tune_[j];
      if (!by_candidates && j % static_cast<std::size_t>(ranks_) != static_cast<std::size_t>(me_)) {
        continue;
      }
      auto problem = problem_of(p);
      auto c = problem ? job_.choices(p) : Result<SpecChoices*>(std::unexpected(problem.error()));
      if (!c) {
        report(p, "error", c.error().message);
        continue;
      }
      SpecChoices& ch = **c;
      if (by_candidates) {
        if (!shardable(full_, ch)) continue;  // rank 0 tunes it alone
        auto rows = measure_share(*problem, ch);
        if (first) maybe_die(me_), first = false;
        const TuningKey key = share_sel_.key_for(*problem, ch.candidates, ch.reference.get());
        report(p, "rows",
               rows_to_json(rows ? *rows : std::vector<CandidateRecord>{}, key,
                            measure_settings(share_opts_)));
        continue;
      }
      auto sel = final_sel_.select(*problem, ch.candidates, ch.reference.get());
      if (first) maybe_die(me_), first = false;
      if (sel) {
        report(p, "record", export_json({sel->record}));
      } else {
        report(p, "error", sel.error().message);
      }
    }
    auto fin = from_root(MpiTag::kFinal);
    if (!fin) return rank0_gone();
    try {
      const Json j = Json::parse(fin->body);
      auto records = import_json(j.at("records").get<std::string>());
      if (!records) throw std::runtime_error(records.error().message);
      std::vector<std::string> picks;
      for (const TuningRecord& r : *records) picks.push_back(r.winner);
      fmt::print(stderr, "ktune: rank {}: the picks from rank 0 ({}): {}\n", me_, picks.size(),
                 fmt::join(picks, ", "));
      return j.at("exit").get<int>();
    } catch (const std::exception& e) {
      fmt::print(stderr, "error: ktune: rank {}: the final records from rank 0 do not parse: {}\n",
                 me_, e.what());
      return kExitError;
    }
  }

  MpiComm& comm_;
  DistributedTune& job_;
  const int me_;
  const int ranks_;
  std::unique_ptr<TuningCache> scratch_;
  const SelectorOptions full_;
  const SelectorOptions scratch_opts_;
  const SelectorOptions share_opts_;
  Selector share_sel_;
  Selector final_sel_;
  std::vector<std::size_t> tune_;  // the plan: problems to tune, spec order
  std::map<std::size_t, ProblemResult> results_;
  std::map<std::pair<std::size_t, int>, Report> reports_;  // rows by (problem, rank)
  std::set<int> gone_;
};

}  // namespace

int tune_distributed(MpiComm& comm, DistributedTune& job) {
  Run run(comm, job);
  return run.run();
}

}  // namespace ktune::cli
