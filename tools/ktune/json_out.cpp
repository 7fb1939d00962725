// ResultDocument (json_out.h).
#include "json_out.h"

#include <fmt/format.h>

#include "cache/record_json.h"

namespace ktune::cli {

ResultDocument::ResultDocument(std::string command, std::string spec)
    : command_(std::move(command)), spec_(std::move(spec)) {}

void ResultDocument::add(const std::string& name, const Selection& selection) {
  std::lock_guard lock(mutex_);
  const TuningRecord& r = selection.record;
  problems_.push_back({{"name", name},
                       {"status", "ok"},
                       {"from_cache", selection.from_cache},
                       {"select_s", json_number(selection.select_s)},
                       {"digest", r.key.digest()},
                       {"pick", r.winner},
                       {"record", record_to_json(r)}});
  ++tuned_;
  hits_ += selection.from_cache ? 1 : 0;
}

void ResultDocument::add_failure(const std::string& name, const std::string& error) {
  std::lock_guard lock(mutex_);
  problems_.push_back({{"name", name}, {"status", "error"}, {"error", error}});
  ++failed_;
}

std::string ResultDocument::text(const std::optional<std::filesystem::path>& cache,
                                 const std::optional<std::string>& location, double seconds,
                                 int exit_code) const {
  std::lock_guard lock(mutex_);
  const OrderedJson doc{{"format", kResultFormat},
                        {"version", kResultVersion},
                        {"record_version", kRecordVersion},
                        {"command", command_},
                        {"spec", spec_.empty() ? OrderedJson(nullptr) : OrderedJson(spec_)},
                        {"cache_dir", cache ? OrderedJson(cache->string()) : OrderedJson(nullptr)},
                        {"cache", location ? OrderedJson(*location) : OrderedJson(nullptr)},
                        {"exit_code", exit_code},
                        {"seconds", json_number(seconds)},
                        {"tuned", tuned_},
                        {"from_cache", hits_},
                        {"failed", failed_},
                        {"problems", problems_}};
  // Compiler messages may hold bytes that are not UTF-8: json_dump replaces them.
  return json_dump(doc, 2) + "\n";
}

void add_json_flag(CLI::App& cmd, SelectorFlags& flags) {
  cmd.add_flag("--json", flags.json,
               "Print one JSON document on stdout (format ktune-result, docs/json.md): every "
               "problem's pick and record with each candidate's outcome, statistics and "
               "parameters; the tables and other lines go to stderr");
}

}  // namespace ktune::cli
