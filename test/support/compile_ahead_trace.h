// What a CLI run compiled and when, for the tests of compiling ahead of the driver
// (tuning/cuda_compile_ahead.h): the NVRTC runs per kernel from `-v`'s lines, and the kernels
// compiled ahead from a `--trace` file.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace ktune::test {

// A trace's events, one per line ("{...},"). A line cut short is skipped: the worker, not waited
// for at the CLI's exit, may still be appending its own.
inline std::vector<nlohmann::json> trace_events(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && line.back() == ',') line.pop_back();
    nlohmann::json e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (e.is_object()) events.push_back(std::move(e));
  }
  return events;
}

// NVRTC runs per kernel, from `-v`'s "compile NAME: nvrtc ..." lines.
inline std::map<std::string, int> nvrtc_runs_of(const std::string& output) {
  std::map<std::string, int> runs;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("compile ");
    const auto colon = line.find(": nvrtc ");
    if (at != std::string::npos && colon != std::string::npos && at < colon) {
      ++runs[line.substr(at + 8, colon - at - 8)];
    }
  }
  return runs;
}

// The trace's "compile ahead" compiles, per kernel.
inline std::map<std::string, int> compiled_ahead(const std::filesystem::path& trace) {
  std::map<std::string, int> ahead;
  for (const nlohmann::json& e : trace_events(trace)) {
    if (e["name"] == "compile ahead" && e["cat"] == "compile") ++ahead[e["args"]["detail"]];
  }
  return ahead;
}

}  // namespace ktune::test
