// ktune's side of bench/space_build.sh: for each space of a spaces.json (name, params, restrictions
// in syntax both muparser and Python read), the time to count the valid configs
// (SearchSpace::stats, which multiplies where no restriction is left), to build the valid set
// (SearchSpace::enumerate_indices: every valid config listed, as value indices) and to build it as
// Config objects (SearchSpace::enumerate: names and values per config), limits raised so that no
// space is cut short. One JSON line per space, best of --repeats; the valid counts let the script
// check that both tools built the same set.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/json_reader.h"
#include "ktune/space/search_space.h"

namespace {

using ktune::Json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// This process's CPU time: on a machine shared with other jobs the wall time is mostly waiting
// for a core, so both tools report both.
double cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int run(const std::string& file, int repeats, const std::string& only) {
  std::ifstream in(file);
  const Json spaces = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!spaces.is_array()) {
    fmt::print(stderr, "space_build: {} is not a JSON array of spaces\n", file);
    return 1;
  }
  ktune::SpaceLimits limits;
  limits.max_evaluations = std::numeric_limits<std::uint64_t>::max();
  limits.max_configs = std::numeric_limits<std::uint64_t>::max();
  for (const Json& s : spaces) {
    const std::string name = s.value("name", "");
    if (!only.empty() && name != only) continue;
    std::vector<ktune::Param> params;
    for (const auto& [pname, values] : s.at("params").items()) {
      ktune::Param p{pname, {}};
      for (const Json& v : values) p.values.emplace_back(v.get<std::int64_t>());
      params.push_back(std::move(p));
    }
    std::vector<std::string> restrictions;
    for (const Json& r : s.at("restrictions")) restrictions.push_back(r.get<std::string>());
    // Creating the space (parsing the restrictions) is part of each, as in Kernel Tuner's
    // Searchspace constructor. [0] count, [1] build (indices), [2] build (Configs).
    // Best and worst of the repeats, for the spread.
    double wall[3], cpu[3], worst_wall[3] = {}, worst_cpu[3] = {};
    std::fill(std::begin(wall), std::end(wall), std::numeric_limits<double>::infinity());
    std::fill(std::begin(cpu), std::end(cpu), std::numeric_limits<double>::infinity());
    std::uint64_t total = 0, counted = 0, built = 0, configs = 0;
    for (int r = 0; r < repeats; ++r) {
      for (int what = 0; what < 3; ++what) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_seconds();
        auto space = ktune::SearchSpace::create(params, restrictions);
        if (!space) {
          fmt::print(stderr, "space_build: {}: {}\n", name, space.error().message);
          return 1;
        }
        ktune::Status ok;
        if (what == 0) {
          auto stats = space->stats(limits);
          if (stats) total = stats->total, counted = stats->valid;
          ok = stats ? ktune::Status{} : ktune::Status(std::unexpected(stats.error()));
        } else if (what == 1) {
          auto indices = space->enumerate_indices(limits);
          if (indices) built = indices->size();
          ok = indices ? ktune::Status{} : ktune::Status(std::unexpected(indices.error()));
        } else {
          auto list = space->enumerate(limits);
          if (list) configs = list->size();
          ok = list ? ktune::Status{} : ktune::Status(std::unexpected(list.error()));
        }
        const double w = seconds_since(t0), c = cpu_seconds() - c0;
        wall[what] = std::min(wall[what], w);
        cpu[what] = std::min(cpu[what], c);
        worst_wall[what] = std::max(worst_wall[what], w);
        worst_cpu[what] = std::max(worst_cpu[what], c);
        if (!ok) {
          fmt::print(stderr, "space_build: {}: {}\n", name, ok.error().message);
          return 1;
        }
      }
    }
    fmt::print(
        R"({{"name": "{}", "product": {}, "valid": {}, "enumerated": {}, "configs": {}, )"
        R"("count_seconds": {:.6f}, "enumerate_seconds": {:.6f}, "configs_seconds": {:.6f}, )"
        R"("count_cpu_seconds": {:.6f}, "enumerate_cpu_seconds": {:.6f}, )"
        R"("configs_cpu_seconds": {:.6f}, "enumerate_worst_seconds": {:.6f}, )"
        R"("enumerate_worst_cpu_seconds": {:.6f}}})"
        "\n",
        name, total, counted, built, configs, wall[0], wall[1], wall[2], cpu[0], cpu[1], cpu[2],
        worst_wall[1], worst_cpu[1]);
    std::fflush(stdout);
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: space_build SPACES.json [REPEATS] [ONLY]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  return run(argv[1], repeats, argc > 3 ? argv[3] : "");
}
