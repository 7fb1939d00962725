// `ktune cache list|show|rm|export|import|clear|prune`: inspect, move and trim the tuning cache
// (of --cache-dir, or of --cache: open_cache_in) and the code cache of --cache-dir.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/record_json.h"
#include "cli.h"
#include "core/file_util.h"
#include "ktune/backend/code_cache.h"
#include "ktune/cache/t4.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/select/selector.h"
#include "options.h"

namespace ktune::cli {
namespace {

constexpr std::size_t kDigestShown = 12;
constexpr std::size_t kMaxCell = 48;  // longer problem keys and names are cut in `list`

int fail(std::string_view verb, std::string_view what) {
  fmt::print(stderr, "error: cache {}: {}\n", verb, what);
  return kExitError;
}

std::string utc_time(std::int64_t unix_s) {
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

std::string cut(const std::string& s) {
  return s.size() <= kMaxCell ? s : s.substr(0, kMaxCell - 3) + "...";
}

std::string micros(const std::optional<BenchStats>& stats, double BenchStats::*field) {
  return stats ? fmt::format("{:.3f}", (*stats).*field / 1000.0) : std::string("-");
}

constexpr std::string_view kListFormat = "ktune-cache-list";
constexpr std::int64_t kListVersion = 1;

// A record's problem for people: its name in the spec where the record has one, else its key.
std::string problem_label(const TuningRecord& r) {
  return r.problem_name.empty() ? r.key.problem : r.problem_name;
}

int run_list(const CliContext& ctx, bool json) {
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  auto records = cache->list();
  if (!records) return fail("list", records.error().message);
  if (json) {
    OrderedJson list = OrderedJson::array();
    for (const TuningRecord& r : *records) list.push_back(record_summary_json(r));
    const OrderedJson doc{{"format", kListFormat},
                          {"version", kListVersion},
                          {"record_version", kRecordVersion},
                          {"cache_dir", ctx.cache_dir.string()},
                          {"cache", cache_location(ctx)},
                          {"records", std::move(list)}};
    fmt::print("{}\n", json_dump(doc, 2));
    return 0;
  }
  if (records->empty()) {
    fmt::print("no tuning records in {}\n", cache_location(ctx));
    return 0;
  }
  using Row = std::vector<std::string>;
  std::vector<Row> rows{
      {"DIGEST", "SPEC", "OP", "PROBLEM", "WINNER", "CANDIDATES", "CREATED (UTC)"}};
  for (const TuningRecord& r : *records) {
    rows.push_back({r.key.digest().substr(0, kDigestShown), r.spec.empty() ? "-" : cut(r.spec),
                    r.key.op, cut(problem_label(r)), cut(r.winner),
                    std::to_string(r.candidates.size()), utc_time(r.created_unix)});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const Row& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const Row& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], width[i]) : row[i];
    }
    fmt::print("{}\n", line);
  }
  return 0;
}

void print_record(const TuningRecord& r) {
  const TuningKey& k = r.key;
  fmt::print("digest         {}\n", k.digest());
  fmt::print("spec           {}\n", r.spec.empty() ? "(not stored)" : r.spec);
  fmt::print("op             {}\n", k.op);
  if (!r.problem_name.empty()) fmt::print("problem name   {}\n", r.problem_name);
  fmt::print("problem        {}\n", k.problem);
  fmt::print("candidate_set  {}\n", k.candidate_set);
  fmt::print("device         {}\n", k.device);
  fmt::print("toolchain      {}\n", k.toolchain);
  fmt::print("version        {}\n", k.version);
  fmt::print("winner         {}\n", r.winner);
  fmt::print("created        {} UTC ({})\n", utc_time(r.created_unix), r.created_unix);
  fmt::print("compile_s      {:.3f}\n", r.compile_s);
  fmt::print("bench_s        {:.3f}\n", r.bench_s);
  fmt::print("candidates     {}\n", r.candidates.size());
  fmt::print("measured with  {}\n",
             r.settings ? settings_as_flags(*r.settings) : std::string("(not stored)"));
  if (r.stand_in) fmt::print("reference      {}\n", no_reference_note(*r.stand_in));
  // What a lookup would say of it: a record that would not be served says why.
  if (Status s = check_record(r, r.key); !s) {
    fmt::print("not served     {}\n", s.error().message);
  }
  if (r.candidates.empty()) return;
  std::size_t name_width = 4;
  for (const CandidateRecord& c : r.candidates) name_width = std::max(name_width, c.name.size());
  fmt::print("  {:<{}}  {:<18}  {:>12}  {:>12}  {:>12}  {:>6}  {:>9}\n", "NAME", name_width + 1,
             "OUTCOME", "MEDIAN_US", "MIN_US", "MAX_US", "RUNS", "COMPILE_S");
  for (const CandidateRecord& c : r.candidates) {
    const std::string name = c.name == r.winner ? c.name + "*" : c.name;
    fmt::print("  {:<{}}  {:<18}  {:>12}  {:>12}  {:>12}  {:>6}  {:>9.3f}\n", name, name_width + 1,
               outcome_name(c.outcome), micros(c.stats, &BenchStats::median_ns),
               micros(c.stats, &BenchStats::min_ns), micros(c.stats, &BenchStats::max_ns),
               c.stats ? std::to_string(c.stats->runs) : std::string("-"), c.compile_s);
    if (!c.info.empty()) fmt::print("      info: {}\n", c.info);
    if (!c.artifact.empty()) fmt::print("      artifact: {}\n", c.artifact);
    // The spec's metrics at the stored median, as the AUTOTUNE table showed them.
    if (!c.metrics.empty()) {
      std::string line;
      for (const MetricValue& m : c.metrics) {
        line += fmt::format("{}{} {:.6g}", line.empty() ? "" : ", ", m.name, m.value);
      }
      fmt::print("      metrics: {}\n", line);
    }
    if (r.stand_in && c.name == *r.stand_in) {
      fmt::print("      comparison basis: stood in for the missing reference\n");
    }
    // Compiler messages span lines; indent each so that the table stays readable.
    std::size_t start = 0;
    while (start < c.message.size()) {
      std::size_t end = c.message.find('\n', start);
      if (end == std::string::npos) end = c.message.size();
      fmt::print("      | {}\n", std::string_view(c.message).substr(start, end - start));
      start = end + 1;
    }
  }
  fmt::print("(* winner; times in microseconds)\n");
}

// The one record that `prefix` names; else the error printed (no match; several, each listed)
// and nullopt.
std::optional<TuningRecord> one_record(TuningCache& cache, std::string_view verb,
                                       const std::string& prefix) {
  auto found = cache.find_prefix(prefix);
  if (!found) {
    fail(verb, found.error().message);
    return std::nullopt;
  }
  if (found->empty()) {
    fail(verb,
         fmt::format("no record matches '{}' ('ktune cache list' shows the digests)", prefix));
    return std::nullopt;
  }
  if (found->size() > 1) {
    std::string matches;
    for (const TuningRecord& r : *found) {
      matches += fmt::format("\n  {}  {}  {}  {}", r.key.digest(), r.spec.empty() ? "-" : r.spec,
                             cut(problem_label(r)), r.winner);
    }
    fail(verb, fmt::format("'{}' matches {} records; give more digits:{}", prefix, found->size(),
                           matches));
    return std::nullopt;
  }
  return std::move(found->front());
}

int run_show(const CliContext& ctx, const std::string& prefix, bool json) {
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  std::optional<TuningRecord> record = one_record(*cache, "show", prefix);
  if (!record) return kExitError;
  // The export's document with this one record: `ktune cache import` reads it back.
  if (json) {
    fmt::print("{}", export_json({*record}));
  } else {
    print_record(*record);
  }
  return 0;
}

int run_rm(const CliContext& ctx, const std::string& prefix) {
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  std::optional<TuningRecord> record = one_record(*cache, "rm", prefix);
  if (!record) return kExitError;
  const std::string digest = record->key.digest();
  auto removed = cache->remove(digest);
  if (!removed) return fail("rm", removed.error().message);
  if (!*removed) return fail("rm", fmt::format("record {} was removed meanwhile", digest));
  fmt::print("removed record {} ({} {}, winner {}) from {}\n", digest,
             record->spec.empty() ? record->key.op : record->spec, problem_label(*record),
             record->winner, ctx.cache_dir.string());
  return 0;
}

struct ExportArgs {
  std::string file;
  std::string format = "json";
  std::string problem;  // only the records of this problem key
};

int run_export(const CliContext& ctx, const ExportArgs& a) {
  const std::string& file = a.file;
  if (file.empty()) {
    fmt::print(stderr,
               "error: cache export: give the output file (FILE or -o FILE; - for stdout)\n");
    return kExitUsage;
  }
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  auto records = cache->list();
  if (!records) return fail("export", records.error().message);
  if (!a.problem.empty()) {
    std::erase_if(*records, [&](const TuningRecord& r) { return r.key.problem != a.problem; });
    if (records->empty()) {
      return fail("export", fmt::format("no record of problem '{}'", a.problem));
    }
  }
  // T4 holds one tuning's results: the newest record (of --problem), the others named.
  if (a.format == "t4" && records->size() > 1) {
    fmt::print(stderr,
               "ktune: warning: {} records match; exporting the newest ({}, {}); "
               "--problem picks another\n",
               records->size(), records->front().key.problem,
               records->front().key.digest().substr(0, kDigestShown));
    records->resize(1);
  }
  if (a.format == "t4" && records->empty()) return fail("export", "no tuning records to export");
  const std::string text = a.format == "t4" ? export_t4(records->front()) : export_json(*records);
  if (file == "-") {
    fmt::print("{}", text);
    return 0;
  }
  if (auto s = write_file_atomic(file, text); !s) return fail("export", s.error().message);
  fmt::print(stderr, "exported {} record(s) to {}\n", records->size(), file);
  return 0;
}

int run_import(const CliContext& ctx, const std::string& file) {
  std::string text;
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    auto read = read_file(file);
    if (!read) return fail("import", read.error().message);
    text = std::move(*read);
  }
  // The whole file is validated before anything is stored: bad input changes nothing.
  auto records = import_json(text);
  if (!records) return fail("import", fmt::format("{}: {}", file, records.error().message));
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  // A record that a lookup would refuse (its winner crashed, rows missing) is not stored: it
  // would only be tuned again, and it must not replace a good record of the same key.
  std::size_t stored = 0;
  for (std::size_t i = 0; i < records->size(); ++i) {
    const TuningRecord& r = (*records)[i];
    if (Status ok = check_record(r, r.key); !ok) {
      fmt::print(stderr, "ktune: warning: {}: records[{}] ({}) not imported: {}\n", file, i,
                 r.key.digest().substr(0, 12), ok.error().message);
      continue;
    }
    if (auto s = cache->store(r); !s) return fail("import", s.error().message);
    ++stored;
  }
  fmt::print("imported {} record(s) into {}\n", stored, cache_location(ctx));
  return 0;
}

int run_clear(const CliContext& ctx) {
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  auto removed = cache->clear();
  if (!removed) return fail("clear", removed.error().message);
  fmt::print("removed {} record(s) from {}\n", *removed, cache_location(ctx));
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, CliContext& ctx) {
  CLI::App* cache = app.add_subcommand(
      "cache",
      "Inspect, move and trim the tuning cache (tuning.sqlite3 in --cache-dir, or --cache) and "
      "the code cache (the code/ folder of --cache-dir)");
  cache->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = cache->add_subcommand(
      "list", "List tuning records, newest first: digest, spec, op, problem, winner, candidates");
  list->add_flag("--json", *list_json,
                 "Print one JSON document (format ktune-cache-list, docs/json.md): each record's "
                 "digest, key, spec, problem name, winner, created time and candidate count");
  list->callback([&ctx, list_json] { ctx.exit_code = run_list(ctx, *list_json); });

  auto prefix = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show =
      cache->add_subcommand("show", "Show one record with every candidate's outcome and timings");
  show->add_option("digest", *prefix, "Digest prefix (at least 4 hex digits)")->required();
  show->add_flag("--json", *show_json,
                 "Print the record as JSON: the document of `cache export` holding this one "
                 "record (docs/json.md), which `cache import` reads back");
  show->callback([&ctx, prefix, show_json] { ctx.exit_code = run_show(ctx, *prefix, *show_json); });

  auto rm_prefix = std::make_shared<std::string>();
  CLI::App* rm = cache->add_subcommand(
      "rm", "Remove one tuning record (and its partial rows): the next tuning of it tunes again");
  rm->add_option("digest", *rm_prefix,
                 "Digest prefix (at least 4 hex digits) naming exactly one record")
      ->required();
  rm->callback([&ctx, rm_prefix] { ctx.exit_code = run_rm(ctx, *rm_prefix); });

  add_prune_command(*cache, ctx);

  auto out = std::make_shared<ExportArgs>();
  CLI::App* exp = cache->add_subcommand(
      "export", "Write every record as JSON, or one record's candidates as T4 results");
  exp->add_option("file", out->file, "Output file, or - for stdout");
  exp->add_option("-o,--output", out->file, "Output file, or - for stdout (as FILE)");
  exp->add_option("--format", out->format,
                  "json (ktune's, every record; the default) or t4 (the T4 results schema of "
                  "Kernel Tuner and KTT: the newest record, or that of --problem)")
      ->check(CLI::IsMember({"json", "t4"}));
  exp->add_option("--problem", out->problem, "Only the records of this problem key");
  exp->callback([&ctx, out] { ctx.exit_code = run_export(ctx, *out); });

  auto in = std::make_shared<std::string>();
  CLI::App* imp = cache->add_subcommand(
      "import", "Merge records from a JSON export; a record with the same key is replaced");
  imp->add_option("file", *in, "Input file, or - for stdin")->required();
  imp->callback([&ctx, in] { ctx.exit_code = run_import(ctx, *in); });

  CLI::App* clear = cache->add_subcommand("clear", "Remove every tuning record");
  clear->callback([&ctx] { ctx.exit_code = run_clear(ctx); });
}

}  // namespace ktune::cli
