// TuningCache: what tuning found, keyed so that anything that could change the answer misses.
// Every candidate's outcome and statistics are kept, not only the winner (Inductor's
// PersistentCache keeps timings only). The default store is SQLite (WAL) in the cache folder
// (ktune/cache_sqlite/sqlite_cache.h, its own module so that this interface needs no SQLite).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/bench/bench_stats.h"
#include "ktune/core/outcome.h"
#include "ktune/core/status.h"
#include "ktune/tensor/compare.h"

namespace ktune {

struct TuningKey {
  std::string op;       // Problem::op
  std::string problem;  // Problem::key()
  std::string
      candidate_set;      // hash over the sorted hash_key() of every candidate and the reference
  std::string device;     // Backend::device_fingerprint()
  std::string toolchain;  // Backend::toolchain_fingerprint()
  std::string version;    // ktune version

  // Hash of all fields: the primary key.
  [[nodiscard]] std::string digest() const;
};

// How the candidates of a tuning were checked; part of the key because a looser check can pick
// another winner.
struct KeyVerification {
  std::optional<std::string> reference;  // the reference's Choice::hash_key(); unset: none
  std::optional<Tolerance> tolerance;    // unset: by dtype
  std::uint64_t seed = 0;                // of the generated inputs
};

// Everything that could change a tuning's answer, as make_tuning_key takes it.
struct KeyInputs {
  std::string op;       // Problem::op
  std::string problem;  // Problem::key()
  // Each candidate's identity (Choice::hash_key(), or a variant name); the order does not
  // matter, so that a stored winner is found again by name whatever order the caller lists.
  std::vector<std::string> candidates;
  // Unset: candidates are timed only, never checked (MultiKernel).
  std::optional<KeyVerification> verification;
  std::string device;     // Backend::device_fingerprint()
  std::string toolchain;  // Backend::toolchain_fingerprint()
};

// The one derivation of a tuning-cache key (Selector, MultiKernel, Dispatcher); adds ktune's
// version. Digests stay those of the layouts each caller used before this function existed.
[[nodiscard]] TuningKey make_tuning_key(const KeyInputs& inputs);

// One of the spec's metrics (`metrics:`, e.g. GFLOP/s) for a measured candidate: its name and
// value at the candidate's median.
struct MetricValue {
  std::string name;
  double value = 0;
  friend bool operator==(const MetricValue&, const MetricValue&) = default;
};

struct CandidateRecord {
  std::string choice_key;  // Choice::hash_key()
  std::string name;
  std::string info;
  Outcome outcome = Outcome::kOk;
  std::string message;  // empty for ok
  std::optional<BenchStats> stats;
  double compile_s = 0;
  // The metrics, in the spec's order (finite values only); empty for a candidate not measured
  // and when the tuning had none. `{}` so that {key, name, ..., compile_s} stays complete.
  std::vector<MetricValue> metrics{};
  // Choice::params(): (name, value as text), empty for library calls; what `ktune simulate` and
  // the T4 export read.
  std::vector<std::pair<std::string, std::string>> params{};
  // The code cache key of its compiled object (Artifact::key: <cache dir>/code/<key[0:2]>/<key>.*);
  // empty for library calls, candidates not compiled, and records stored before ktune kept it.
  // What `ktune cache prune --unreferenced` keeps.
  std::string artifact{};
};

// How far a tuning's pick can be trusted, measured while it was made (the decide stage of the
// Selector): who came second and by how much, with a confidence interval from rounds that
// measured both alternately, the measurements' spread and the load of other processes.
struct PickConfidence {
  std::string runner_up;       // the second-best valid candidate; empty: there was none
  double runner_up_ratio = 0;  // its time over the winner's (>= 1 unless re-verification moved
                               // the pick to a slower candidate)
  // The ratio's confidence interval (about 95%: order statistics of the paired round ratios).
  // ratio_rounds 0: the two were not measured in rounds; low = high = the ratio of first medians.
  double ratio_low = 0;
  double ratio_high = 0;
  int ratio_rounds = 0;
  double spread = 0;       // robust relative spread (1.4826 MAD / median) of repeated measurements
  double others_load = 0;  // CPU cores other processes used while ktune measured; < 0: unknown
  int cores = 0;           // cores ktune measures on (its affinity)
  int reverified = 0;      // verifications of the pick after timing, all passed
  bool trusted = true;     // false: the pick was reported as not to be trusted (noise, load)
};

// The measurement settings a tuning ran with (SelectorOptions' bench options and decide stage).
// Not part of the key: they change how precisely the candidates were timed, not which ones
// exist or how they were checked, so an earlier tuning still answers when --budget-ms is
// tweaked; the CLI says so on a hit whose settings differ from the flags given.
struct MeasureSettings {
  double budget_ms = 0;
  int min_runs = 0;
  int max_runs = 0;
  int warmup_runs = 0;
  bool flush_cache = true;
  int graph_calls = 0;
  int decide_rounds = 0;
  double close_call_band = 0;
  friend bool operator==(const MeasureSettings&, const MeasureSettings&) = default;
};

struct TuningRecord {
  TuningKey key;
  std::string winner;  // name of the picked candidate
  std::vector<CandidateRecord> candidates;
  std::int64_t created_unix = 0;
  double compile_s = 0;  // wall time of the parallel compile stage
  double bench_s = 0;    // wall time of measuring and verifying
  // Unset in records stored before ktune measured it.
  std::optional<PickConfidence> confidence;
  // Unset in records stored before ktune kept them, and in MultiKernel's.
  std::optional<MeasureSettings> settings;
  // Set when the tuning had no reference: the candidate that stood in for one (the first in
  // candidate order that passed the checks that need no reference), whose outputs every other
  // candidate was compared with. `{}` so that the braced records of MultiKernel stay complete.
  std::optional<std::string> stand_in{};
  // Labels for people, not part of the key (two specs tuning the same problem share a record; the
  // last to store it names it): the spec that tuned it (Spec::name; empty without a spec:
  // `ktune gemm`, MultiKernel) and the problem's name in it (Problem::name, e.g. "skinny"). Empty
  // in records stored before ktune kept them.
  std::string spec{};
  std::string problem_name{};
};

// A candidate as the caller of a lookup knows it: its name and the identity it keyed the lookup
// with (Choice::hash_key(); a MultiKernel variant's name).
struct CandidateId {
  std::string name;
  std::string key;
};

// Why a stored record must not be served, or ok. A file can be edited, truncated or written by
// an older or foreign program, so nothing read back is trusted on its word: the key must be the
// one asked for, the winner must be one of the rows, exactly once, and valid (outcome ok, a
// finite positive median where it was measured), candidate names and keys unique, and the rows
// as many as the store recorded (`stored_count`, when the store keeps one). With `candidates`
// (those the caller keyed the lookup with), the rows must be exactly those candidates, each row's
// name with its own key: a record with a row missing, foreign or renamed is not served.
[[nodiscard]] Status check_record(const TuningRecord& record, const TuningKey& asked,
                                  std::optional<std::size_t> stored_count = std::nullopt,
                                  std::span<const CandidateId> candidates = {});

class TuningCache {
 public:
  using WarningSink = std::function<void(const std::string&)>;
  virtual ~TuningCache() = default;
  // A stored record that fails check_record() is a miss, with a warning that says why; the
  // tuning that follows overwrites it.
  [[nodiscard]] virtual Result<std::optional<TuningRecord>> lookup(const TuningKey& key) = 0;
  // Replaces any record with the same key digest.
  [[nodiscard]] virtual Status store(const TuningRecord& record) = 0;
  // All records, newest first.
  [[nodiscard]] virtual Result<std::vector<TuningRecord>> list() = 0;
  // Records whose digest starts with `prefix` (at least 4 hex digits).
  [[nodiscard]] virtual Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) = 0;
  // Returns how many records were removed (partial rows go too, uncounted).
  [[nodiscard]] virtual Result<std::size_t> clear() = 0;
  // Removes the record whose key digest is `digest` (TuningKey::digest(), all 32 hex digits)
  // and the partial rows stored under that key. True when a record was removed, false when none
  // had that digest (its partial rows go all the same); kInvalidArgument for a digest that is not
  // 32 hex digits.
  [[nodiscard]] virtual Result<bool> remove(std::string_view digest) = 0;

  // Partial records: each candidate's outcome stored as soon as it is measured, so that a tuning
  // killed half-way resumes with what it measured. They are never served by lookup(); only a
  // tuning under the same key reads them back (select/resume.h), and only those measured with
  // the same settings. Each store is one transaction and replaces the candidate's earlier row.
  [[nodiscard]] virtual Status store_partial(const TuningKey& key, const MeasureSettings& settings,
                                             const CandidateRecord& record) = 0;
  // The rows stored under exactly `key` (the version is part of it) with `settings`, in the
  // order they were stored; rows from other settings or unreadable rows are left out.
  [[nodiscard]] virtual Result<std::vector<CandidateRecord>> partials(
      const TuningKey& key, const MeasureSettings& settings) = 0;
  // Called once the finished record is stored.
  [[nodiscard]] virtual Status clear_partials(const TuningKey& key) = 0;

  // Where warnings about records not served go; by default one "ktune: warning: " line on
  // stderr. Set before the cache is shared between threads.
  void set_warning_sink(WarningSink sink) { warn_ = std::move(sink); }
  void warn(const std::string& message) const;

 private:
  WarningSink warn_;
};

// lookup() plus the check against the candidates the caller keyed it with (check_record's
// `candidates`): what every reader of stored picks (Selector, MultiKernel, dispatch tables) uses.
[[nodiscard]] Result<std::optional<TuningRecord>> lookup_checked(
    TuningCache& cache, const TuningKey& key, std::span<const CandidateId> candidates);

// For tests and --no-cache: lives as long as the object.
[[nodiscard]] std::unique_ptr<TuningCache> make_memory_cache();

// One partial row as the stores keep it (JSON: the key, the settings and the candidate, in the
// record codec's layout), and back; kParse for a row that is not one.
struct PartialRow {
  TuningKey key;
  MeasureSettings settings;
  CandidateRecord candidate;
};
[[nodiscard]] std::string partial_to_json(const PartialRow& row);
[[nodiscard]] Result<PartialRow> partial_from_json(std::string_view text);

// JSON: {"format": "ktune-tuning-cache", "version": 2, "records": [...]} (docs/json.md). Each
// record carries its candidate_count; a record whose rows disagree with it is a parse error.
// Records that parse but could not be served (check_record) are returned as they are: `ktune
// cache import` skips them. Version 1 documents (params as [{"name", "value"}] lists) still import.
[[nodiscard]] std::string export_json(const std::vector<TuningRecord>& records);
// One record's layout in it, for the CLI's --json documents, is src/cache/record_json.h's.
// kParse with the offending path ("records[3].candidates[0].outcome") on bad input.
[[nodiscard]] Result<std::vector<TuningRecord>> import_json(std::string_view text);

}  // namespace ktune
