// `ktune report`: the tuning cache of --cache-dir as one self-contained HTML file
// (ktune/report/html_report.h), every record or those of --problem / --digest.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "core/file_util.h"
#include "ktune/report/html_report.h"

namespace ktune::cli {
namespace {

constexpr std::size_t kListed = 30;  // records named when a filter matches nothing

struct ReportArgs {
  std::string output;
  std::string problem;  // an op, a problem key, or part of a problem key
  std::string digest;   // a digest prefix
  std::string title = "ktune tuning report";
};

int fail(std::string_view what) {
  fmt::print(stderr, "error: report: {}\n", what);
  return kExitError;
}

// What the cache holds, one line per record, for an error whose filter matched nothing.
std::string holdings(const std::vector<TuningRecord>& all) {
  std::string out = "; the tuning cache holds:";
  for (std::size_t i = 0; i < all.size() && i < kListed; ++i) {
    const TuningRecord& r = all[i];
    out += fmt::format("\n  {}  {}  {}", r.key.digest().substr(0, 12), r.key.op, r.key.problem);
  }
  if (all.size() > kListed) {
    out += fmt::format("\n  ... and {} more (ktune cache list)", all.size() - kListed);
  }
  return out;
}

// --problem: the records whose op or problem key is `name`, else those whose problem key contains
// it.
std::vector<TuningRecord> of_problem(const std::vector<TuningRecord>& records,
                                     const std::string& name) {
  std::vector<TuningRecord> exact;
  std::vector<TuningRecord> part;
  for (const TuningRecord& r : records) {
    if (r.key.op == name || r.key.problem == name) {
      exact.push_back(r);
    } else if (r.key.problem.find(name) != std::string::npos) {
      part.push_back(r);
    }
  }
  return exact.empty() ? part : exact;
}

int run_report(const CliContext& ctx, const ReportArgs& a) {
  if (a.output.empty()) {
    fmt::print(stderr, "error: report: give the output file (-o FILE; - for stdout)\n");
    return kExitUsage;
  }
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return kExitError;
  auto all = cache->list();
  if (!all) return fail(all.error().message);
  if (all->empty()) {
    return fail(
        fmt::format("no tuning records in {}: nothing to report (tune first; nothing "
                    "written)",
                    cache_location(ctx)));
  }
  std::vector<TuningRecord> records = *all;
  if (!a.digest.empty()) {
    auto found = cache->find_prefix(a.digest);
    if (!found) return fail(fmt::format("--digest: {}", found.error().message));
    if (found->empty()) {
      return fail(fmt::format("no record's digest starts with '{}'{}", a.digest, holdings(*all)));
    }
    records = std::move(*found);
  }
  if (!a.problem.empty()) {
    records = of_problem(records, a.problem);
    if (records.empty()) {
      return fail(fmt::format("no record of problem '{}'{}{}", a.problem,
                              a.digest.empty() ? "" : " with --digest " + a.digest,
                              holdings(*all)));
    }
  }
  ReportOptions options;
  options.title = a.title;
  options.source = sqlite_cache_file(ctx.cache_dir).string();
  options.generated_unix = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const std::string html = render_html_report(records, options);
  if (a.output == "-") {
    fmt::print("{}", html);
    return 0;
  }
  // A temporary in the same folder renamed into place: an earlier report stays whole until the
  // new one is complete, and a failed write leaves nothing behind.
  if (Status s = write_file_atomic(a.output, html); !s) {
    return fail(fmt::format("{} (nothing written)", s.error().message));
  }
  fmt::print(stderr, "wrote the report of {} record(s) to {} ({} KiB)\n", records.size(), a.output,
             (html.size() + 1023) / 1024);
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CliContext& ctx) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand(
      "report",
      "Write the tuning cache as one self-contained HTML file: per record the pick and its "
      "confidence, the candidates' times, the time by parameter value and the failures grouped "
      "by outcome. No network is needed to view it. Exit 1 when the cache is empty or a filter "
      "matches nothing (the records that exist are listed; nothing is written)");
  report
      ->add_option("-o,--output", a->output,
                   "Output file (written whole or not at all), or - "
                   "for stdout")
      ->required();
  report->add_option("--problem", a->problem,
                     "Only the records whose op (spec name) or problem key is this, else whose "
                     "problem key contains it");
  report->add_option("--digest", a->digest,
                     "Only the records whose digest starts with this (at least 4 hex digits, as "
                     "`ktune cache list` prints them)");
  report->add_option("--title", a->title, "The page's title")->capture_default_str();
  report->callback([&ctx, a] { ctx.exit_code = run_report(ctx, *a); });
}

}  // namespace ktune::cli
