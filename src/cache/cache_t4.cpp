// export_t4 / import_t4 (ktune/cache/t4.h).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ktune/cache/t4.h"
#include "ktune/core/outcome.h"

namespace ktune {
namespace {

using OJson = nlohmann::ordered_json;

// T4's invalidity categories. Only a candidate measured to its budget is "correct": an abandoned
// one has partial times (a median of its first runs, not a measurement another tuner can rank)
// and one never evaluated has none, so both are "runtime", the category of "no valid time"; the
// `ktune_outcome` measurement says which, and import_t4 restores it.
std::string_view invalidity(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "correct";
    case Outcome::kCompileError:
    case Outcome::kLoadError:
      return "compile";
    case Outcome::kTimedOut:
      return "timeout";
    case Outcome::kWrongResult:
    case Outcome::kNanOutput:
    case Outcome::kUnwrittenOutput:
    case Outcome::kRedzoneViolation:
    case Outcome::kInputModified:
      return "correctness";
    case Outcome::kUnsupported:
      return "constraints";
    default:
      return "runtime";
  }
}

Outcome outcome_of(std::string_view invalidity) {
  if (invalidity == "correct") return Outcome::kOk;
  if (invalidity == "compile") return Outcome::kCompileError;
  if (invalidity == "timeout") return Outcome::kTimedOut;
  if (invalidity == "correctness") return Outcome::kWrongResult;
  if (invalidity == "constraints") return Outcome::kUnsupported;
  return Outcome::kLaunchError;
}

// A parameter's text as a JSON number when it is one whole, so that other tuners see numbers.
OJson param_value(const std::string& text) {
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && p == text.data() + text.size()) return i;
  double d = 0;
  auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec2 == std::errc() && q == text.data() + text.size() && std::isfinite(d)) return d;
  return text;
}

std::string param_text(const OJson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return v.dump();  // booleans and anything else, as JSON text
}

}  // namespace

std::string export_t4(const TuningRecord& record) {
  OJson results = OJson::array();
  for (const CandidateRecord& c : record.candidates) {
    OJson config = OJson::object();
    for (const auto& [name, value] : c.params) config[name] = param_value(value);
    OJson runtimes = OJson::array();
    if (c.stats) runtimes.push_back(c.stats->median_ns / 1e6);
    OJson measurements = OJson::array();
    measurements.push_back({{"name", "ktune_name"}, {"value", c.name}, {"unit", ""}});
    measurements.push_back(
        {{"name", "ktune_outcome"}, {"value", outcome_name(c.outcome)}, {"unit", ""}});
    if (c.stats) {
      measurements.push_back({{"name", "runs"}, {"value", c.stats->runs}, {"unit", ""}});
      measurements.push_back(
          {{"name", "min_time"}, {"value", c.stats->min_ns / 1e6}, {"unit", "ms"}});
      measurements.push_back(
          {{"name", "max_time"}, {"value", c.stats->max_ns / 1e6}, {"unit", "ms"}});
      measurements.push_back(
          {{"name", "mad_time"}, {"value", c.stats->mad_ns / 1e6}, {"unit", "ms"}});
    }
    const std::string_view inv = invalidity(c.outcome);
    results.push_back({{"configuration", std::move(config)},
                       {"times", {{"compilation_time", c.compile_s * 1e3}, {"runtimes", runtimes}}},
                       {"invalidity", inv},
                       {"correctness", inv == "correctness" ? 0 : 1},
                       {"measurements", std::move(measurements)},
                       {"objectives", OJson::array({"time"})}});
  }
  OJson out{{"schema_version", "1.0.0"},
            {"metadata",
             {{"timeunit", "milliseconds"},
              {"problem", record.key.problem},
              {"device", record.key.device}}},
            {"results", std::move(results)}};
  return out.dump(1) + "\n";
}

Result<std::vector<CandidateRecord>> import_t4(std::string_view text) {
  const OJson doc = OJson::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [](const std::string& path, std::string_view what) {
    return make_error(ErrorCode::kParse, fmt::format("T4 results: {}: {}", path, what));
  };
  if (doc.is_discarded()) return bad("$", "not JSON");
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    return bad("$.results", "missing or not an array");
  }
  std::vector<CandidateRecord> out;
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const OJson& r = doc["results"][i];
    const std::string at = fmt::format("$.results[{}]", i);
    if (!r.is_object()) return bad(at, "not an object");
    for (const char* key : {"configuration", "times", "invalidity"}) {
      if (!r.contains(key)) return bad(at, fmt::format("no '{}' (required by T4)", key));
    }
    if (!r["configuration"].is_object()) return bad(at + ".configuration", "not an object");
    if (!r["times"].is_object()) return bad(at + ".times", "not an object");
    if (!r["invalidity"].is_string()) return bad(at + ".invalidity", "not a string");
    CandidateRecord c;
    std::string config_text;
    for (const auto& [name, value] : r["configuration"].items()) {
      c.params.emplace_back(name, param_text(value));
      config_text +=
          fmt::format("{}{}={}", config_text.empty() ? "" : " ", name, c.params.back().second);
    }
    c.name = config_text.empty() ? fmt::format("result{}", i) : config_text;
    c.info = config_text;
    c.outcome = outcome_of(r["invalidity"].get<std::string>());
    const OJson& times = r["times"];
    for (const char* key : {"compilation_time", "compilation"}) {  // Kernel Tuner writes the second
      if (times.contains(key) && times[key].is_number()) {
        c.compile_s = times[key].get<double>() / 1e3;
        break;
      }
    }
    std::vector<double> ms;
    if (times.contains("runtimes")) {
      if (!times["runtimes"].is_array()) return bad(at + ".times.runtimes", "not an array");
      for (const OJson& t : times["runtimes"]) {
        if (!t.is_number()) return bad(at + ".times.runtimes", "holds a non-number");
        ms.push_back(t.get<double>());
      }
    }
    int runs = static_cast<int>(ms.size());
    std::optional<double> min_ms, max_ms, mad_ms;
    if (r.contains("measurements") && r["measurements"].is_array()) {
      for (const OJson& m : r["measurements"]) {
        if (!m.is_object() || !m.contains("name") || !m.contains("value")) continue;
        const OJson& v = m["value"];
        if (m["name"] == "ktune_name" && v.is_string()) c.name = v.get<std::string>();
        if (m["name"] == "ktune_outcome" && v.is_string()) {
          // ktune's own outcome is finer than T4's category (and tells abandoned apart).
          if (auto o = parse_outcome(v.get<std::string>())) c.outcome = *o;
        }
        if (m["name"] == "runs" && v.is_number_integer()) runs = v.get<int>();
        if (m["name"] == "min_time" && v.is_number()) min_ms = v.get<double>();
        if (m["name"] == "max_time" && v.is_number()) max_ms = v.get<double>();
        if (m["name"] == "mad_time" && v.is_number()) mad_ms = v.get<double>();
      }
    }
    const bool timed = c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned;
    if (!ms.empty() && timed) {
      std::sort(ms.begin(), ms.end());
      const std::size_t n = ms.size();
      const double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
      c.stats =
          BenchStats{median * 1e6, min_ms.value_or(ms.front()) * 1e6,
                     max_ms.value_or(ms.back()) * 1e6, mad_ms.value_or(0) * 1e6, std::max(runs, 1)};
    } else if (c.outcome == Outcome::kOk) {
      c.outcome = Outcome::kLaunchError;  // "correct" without a time: nothing to replay
      c.message = "T4 result without runtimes";
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ktune
