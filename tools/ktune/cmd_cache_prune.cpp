// `ktune cache prune`: removes compiled artifacts from the code cache (<cache dir>/code) that no
// tuning record references, that were not used for a number of days, or the least recently used
// beyond a size. Only what CodeCache names is touched (CodeCache::entries: regular files
// <key>.<ext> and their digest records, never through a link); temporaries are left to the sweep
// of a stale writer's files, and an artifact used within the last hour is kept, since a tuning
// running now may load it before its record is stored.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "ktune/backend/code_cache.h"

namespace ktune::cli {
namespace {

constexpr std::int64_t kInUseGraceS = 3600;
constexpr double kSecondsPerDay = 86'400;
constexpr double kBytesPerMb = 1024.0 * 1024.0;

struct PruneFlags {
  bool unreferenced = false;
  std::optional<double> older_than_days;
  std::optional<double> max_size_mb;
  bool dry_run = false;
  bool verbose = false;
};

std::string megabytes(std::uintmax_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (b < kBytesPerMb) return fmt::format("{:.1f} KB", b / 1024.0);
  return fmt::format("{:.1f} MB", b / kBytesPerMb);
}

std::string utc_time(std::int64_t unix_s) {
  return fmt::format("{:%Y-%m-%d %H:%M}", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

// The code cache keys that the tuning cache's records name (CandidateRecord::artifact), and how
// many records name none (stored before ktune kept them). Nullopt, with the error printed, when
// the tuning cache cannot be read.
struct References {
  std::set<std::string> keys;
  std::size_t records_without = 0;
};
std::optional<References> referenced(const CliContext& ctx) {
  auto cache = open_cache_in(ctx);  // the error is printed
  if (!cache) return std::nullopt;
  auto records = cache->list();
  if (!records) {
    fmt::print(stderr, "error: cache prune: {}\n", records.error().message);
    return std::nullopt;
  }
  References out;
  for (const TuningRecord& r : *records) {
    bool any = false;
    for (const CandidateRecord& c : r.candidates) {
      if (c.artifact.empty()) continue;
      out.keys.insert(c.artifact);
      any = true;
    }
    // Library calls compile nothing: only a record with parameters could have named some.
    const bool compiled = std::any_of(r.candidates.begin(), r.candidates.end(),
                                      [](const CandidateRecord& c) { return !c.params.empty(); });
    if (!any && compiled) ++out.records_without;
  }
  return out;
}

int run_prune(const CliContext& ctx, const PruneFlags& f) {
  if (!f.unreferenced && !f.older_than_days && !f.max_size_mb) {
    fmt::print(stderr,
               "error: cache prune: say what to remove: --unreferenced, --older-than DAYS "
               "and/or --max-size MB\n");
    return kExitUsage;
  }
  // Refuses a folder that others can write, and sweeps the temporaries of writers gone.
  if (!prepare_cache_dir(ctx)) return kExitError;
  const CodeCache code(ctx.cache_dir);
  const std::string where = (ctx.cache_dir / "code").string();
  // Never through a link, the folder itself included: what it points to is not known to be ours.
  std::error_code ec;
  if (std::filesystem::is_symlink(ctx.cache_dir / "code", ec)) {
    fmt::print(stderr,
               "error: cache prune: {} is a symbolic link; prune removes files only in the code "
               "cache's own folder (give --cache-dir the folder it points into instead)\n",
               where);
    return kExitError;
  }
  std::optional<References> refs;
  if (f.unreferenced) {
    refs = referenced(ctx);
    if (!refs) return kExitError;
    if (refs->records_without > 0) {
      fmt::print(stderr,
                 "ktune: note: {} tuning record(s) were stored before ktune kept their artifacts' "
                 "keys; their kernels count as unreferenced (a cache hit compiles nothing; a new "
                 "tuning compiles them again)\n",
                 refs->records_without);
    }
  }
  const std::vector<CodeCacheEntry> entries = code.entries();
  if (entries.empty()) {
    fmt::print("code cache {} holds no artifacts; nothing to prune\n", where);
    return 0;
  }
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  std::vector<std::string> why(entries.size());
  std::vector<std::size_t> candidates;  // may go: not used within the grace period
  std::size_t recent = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const CodeCacheEntry& e = entries[i];
    if (now - e.last_used_unix < kInUseGraceS) {
      ++recent;
      continue;
    }
    candidates.push_back(i);
    if (refs && !refs->keys.contains(e.key)) why[i] = "unreferenced";
    if (f.older_than_days &&
        static_cast<double>(now - e.last_used_unix) > *f.older_than_days * kSecondsPerDay) {
      why[i] += fmt::format("{}unused for {:.0f} days", why[i].empty() ? "" : ", ",
                            static_cast<double>(now - e.last_used_unix) / kSecondsPerDay);
    }
  }
  std::uintmax_t total = 0, staying = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    total += entries[i].bytes;
    if (why[i].empty()) staying += entries[i].bytes;
  }
  if (f.max_size_mb) {
    // Least recently used first, until what stays fits.
    const auto limit = static_cast<std::uintmax_t>(*f.max_size_mb * kBytesPerMb);
    std::vector<std::size_t> lru = candidates;
    std::stable_sort(lru.begin(), lru.end(), [&](std::size_t a, std::size_t b) {
      return entries[a].last_used_unix < entries[b].last_used_unix;
    });
    for (std::size_t i : lru) {
      if (staying <= limit) break;
      if (!why[i].empty()) continue;
      why[i] = fmt::format("least recently used beyond {}", megabytes(limit));
      staying -= entries[i].bytes;
    }
    if (staying > limit) {
      fmt::print(stderr,
                 "ktune: note: {} stay above --max-size: artifacts used within the last hour "
                 "are kept (a tuning may be loading them)\n",
                 megabytes(staying));
    }
  }
  std::size_t removed = 0, files = 0;
  std::uintmax_t freed = 0;
  const char* verb = f.dry_run ? "would remove" : "removed";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (why[i].empty()) continue;
    const CodeCacheEntry& e = entries[i];
    if (f.dry_run) {
      freed += e.bytes;
    } else {
      auto gone = code.remove(e);
      if (!gone) {
        fmt::print(stderr, "error: cache prune: {}\n", gone.error().message);
        fmt::print("removed {} artifact(s) before the error, freed {}\n", removed,
                   megabytes(freed));
        return kExitError;
      }
      freed += *gone;
    }
    ++removed;
    files += e.files.size();
    if (f.verbose || f.dry_run) {
      fmt::print("  {} {}  {}  last used {} UTC  ({})\n", verb, e.key, megabytes(e.bytes),
                 utc_time(e.last_used_unix), why[i]);
    }
  }
  fmt::print(
      "{} {} artifact(s) ({} files), {} {}; kept {} artifact(s), {} ({} used within the "
      "last hour), in {}\n",
      f.dry_run ? "Would remove" : "Removed", removed, files, f.dry_run ? "would free" : "freed",
      megabytes(freed), entries.size() - removed, megabytes(total - freed), recent, where);
  return 0;
}

}  // namespace

void add_prune_command(CLI::App& cache, CliContext& ctx) {
  auto f = std::make_shared<PruneFlags>();
  CLI::App* prune = cache.add_subcommand(
      "prune",
      "Remove compiled artifacts from the code cache (<cache-dir>/code): those no tuning record "
      "references, those unused for DAYS, or the least recently used beyond a size. An artifact "
      "used within the last hour is always kept; a removed one is compiled again when needed");
  prune->add_flag("--unreferenced", f->unreferenced,
                  "Remove artifacts that no candidate of a tuning record was compiled into (a "
                  "dispatch table written by --dispatch-table loads them: write it again after)");
  prune
      ->add_option("--older-than", f->older_than_days,
                   "Remove artifacts not used (compiled, or loaded where the file system "
                   "records reads) for more than DAYS days")
      ->check(CLI::Range(0.0, 1e6));
  prune
      ->add_option("--max-size", f->max_size_mb,
                   "Then remove the least recently used until the rest fits in MB megabytes "
                   "(MiB)")
      ->check(CLI::Range(0.0, 1e9));
  prune->add_flag("--dry-run,-n", f->dry_run, "Say what would be removed; remove nothing");
  prune->add_flag("--verbose,-v", f->verbose, "List each artifact removed, with why");
  prune->callback([&ctx, f] { ctx.exit_code = run_prune(ctx, *f); });
}

}  // namespace ktune::cli
