// Test helper: the picks and outcomes that `ktune cache export` writes for a cache folder, per
// problem, for tests that compare two ways of tuning the same spec (MPI ranks, several devices)
// with a single run.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "support/cli_run.h"

namespace ktune::test {

// Per problem key: the winner and the "name=outcome" of every candidate.
struct Picks {
  std::map<std::string, std::string> winner;
  std::map<std::string, std::set<std::string>> outcomes;
};

inline Picks exported(const std::filesystem::path& cache) {
  const std::filesystem::path file = cache / "export.json";
  const CliResult r = run_cli(cache, {"cache", "export", file.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  Picks p;
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const auto& rec : doc.at("records")) {
    const std::string key = rec.at("key").at("problem").get<std::string>();
    p.winner[key] = rec.at("winner").get<std::string>();
    for (const auto& c : rec.at("candidates")) {
      p.outcomes[key].insert(c.at("name").get<std::string>() + "=" +
                             c.at("outcome").get<std::string>());
    }
  }
  return p;
}

}  // namespace ktune::test
