// The --json documents of `ktune tune` and `ktune gemm` (docs/json.md): one JSON document on
// stdout, the tables and every other line on stderr. Each problem's record is the tuning cache
// export's record (cache/record_json.h), so that one layout serves every reader.
#pragma once

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "core/json_reader.h"
#include "ktune/select/selector.h"
#include "options.h"

namespace ktune::cli {

inline constexpr std::string_view kResultFormat = "ktune-result";
inline constexpr std::int64_t kResultVersion = 1;

class ResultDocument {
 public:
  // `command`: "tune" or "gemm"; `spec`: the spec file as given (empty: none).
  ResultDocument(std::string command, std::string spec);

  // A problem tuned or answered from the cache (`name`: Problem::name).
  void add(const std::string& name, const Selection& selection);
  // A problem that failed (`error`: what was printed on stderr).
  void add_failure(const std::string& name, const std::string& error);

  // The document: {"format": "ktune-result", "version": 1, ...}, with the run's totals. `cache`:
  // the tuning cache folder, unset with --no-cache; `location`: where the records went (that
  // folder's SQLite file or a Redis URL: cache_location()), unset with --no-cache.
  [[nodiscard]] std::string text(const std::optional<std::filesystem::path>& cache,
                                 const std::optional<std::string>& location, double seconds,
                                 int exit_code) const;

 private:
  std::string command_;
  std::string spec_;
  OrderedJson problems_ = OrderedJson::array();
  int tuned_ = 0, hits_ = 0, failed_ = 0;
  mutable std::mutex mutex_;
};

// Where a command's human-readable lines go: stderr with --json (stdout holds the document),
// else stdout.
[[nodiscard]] inline std::FILE* text_out(const SelectorFlags& flags) {
  return flags.json ? stderr : stdout;
}

// --json on `cmd`, bound to flags.json.
void add_json_flag(CLI::App& cmd, SelectorFlags& flags);

}  // namespace ktune::cli
