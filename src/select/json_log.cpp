// JsonLog: JSON lines through nlohmann::json.
#include "select/json_log.h"

#include <nlohmann/json.hpp>

namespace ktune {

JsonLog::JsonLog(const std::filesystem::path& path) {
  if (!path.empty()) f_ = std::fopen(path.c_str(), "a");
}

JsonLog::~JsonLog() {
  if (f_) std::fclose(f_);
}

void JsonLog::candidate(const std::string& problem, const CandidateRecord& c) {
  if (!f_) return;
  nlohmann::json j = {{"event", "candidate"},
                      {"problem", problem},
                      {"name", c.name},
                      {"info", c.info},
                      {"outcome", outcome_name(c.outcome)},
                      {"message", c.message},
                      {"compile_s", c.compile_s}};
  if (c.stats) {
    j["median_ns"] = c.stats->median_ns;
    j["min_ns"] = c.stats->min_ns;
    j["max_ns"] = c.stats->max_ns;
    j["mad_ns"] = c.stats->mad_ns;
    j["runs"] = c.stats->runs;
  }
  // An object, by name (unique: the spec refuses duplicates); the record keeps the spec order.
  if (!c.metrics.empty()) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const MetricValue& m : c.metrics) metrics[m.name] = m.value;
    j["metrics"] = std::move(metrics);
  }
  std::fputs((j.dump() + "\n").c_str(), f_);
  std::fflush(f_);
}

void JsonLog::selection(const std::string& problem, const TuningRecord& r, bool from_cache,
                        double select_s) {
  if (!f_) return;
  nlohmann::json j = {
      {"event", "selection"},     {"problem", problem},    {"winner", r.winner},
      {"from_cache", from_cache}, {"key", r.key.digest()}, {"candidates", r.candidates.size()},
      {"compile_s", r.compile_s}, {"bench_s", r.bench_s},  {"select_s", select_s}};
  if (r.stand_in) j["stand_in"] = *r.stand_in;  // no reference: compared with this candidate
  if (const auto& c = r.confidence) {
    j["confidence"] = {{"runner_up", c->runner_up},       {"runner_up_ratio", c->runner_up_ratio},
                       {"ratio_low", c->ratio_low},       {"ratio_high", c->ratio_high},
                       {"ratio_rounds", c->ratio_rounds}, {"spread", c->spread},
                       {"others_load", c->others_load},   {"cores", c->cores},
                       {"reverified", c->reverified},     {"trusted", c->trusted}};
  }
  std::fputs((j.dump() + "\n").c_str(), f_);
  std::fflush(f_);
}

}  // namespace ktune
