// `--json` on tune, `cache list` and `cache show` (one document on stdout, parsed here with
// nlohmann), the spec's name in `cache list`, `cache rm` and `cache prune`, through the real CLI.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/subprocess.h"
#include "ktune/cache/tuning_cache.h"
#include "support/cli_run.h"

namespace ktune::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

struct Split {
  int exit_code = -1;
  std::string out;  // stdout alone
  std::string err;
};

// `ktune --cache-dir <dir>/cache args...` with stdout and stderr apart.
Split run_split(const fs::path& dir, const std::vector<std::string>& args) {
  const char* moved = std::getenv("KTUNE_TEST_CLI");
  std::vector<std::string> argv = {"sh",
                                   "-c",
                                   "exec \"$@\" 2>\"$KTUNE_TEST_ERR\"",
                                   "sh",
                                   moved && *moved ? moved : KTUNE_CLI,
                                   "--cache-dir",
                                   (dir / "cache").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const fs::path err = dir / "stderr.txt";
  ::setenv("KTUNE_TEST_ERR", err.c_str(), 1);
  ProcessOptions options;
  options.timeout = std::chrono::minutes(5);
  options.max_output_bytes = 8 << 20;
  auto r = run_process(argv, options);
  Split out;
  if (!r) {
    out.err = r.error().message;
    return out;
  }
  out.exit_code = r->timed_out ? -2 : r->exit_code;
  out.out = r->output;
  std::ifstream in(err);
  out.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

json parse(const Split& r) {
  json doc = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << "stdout is not one JSON document:\n" << r.out;
  return doc;
}

std::vector<std::string> tune_args(std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"tune", data_path("cli/mm.yaml"), "--budget-ms", "2", "--json"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// Sets the access and modification times of every file under `dir`/cache/code to `days` ago,
// as a code cache left alone that long would have (links themselves, not their targets).
void age_code_cache(const fs::path& dir, double days, const std::string& only_key = "") {
  const auto t = static_cast<std::time_t>(std::time(nullptr) - days * 86'400);
  const timespec times[2] = {{t, 0}, {t, 0}};
  for (const auto& e : fs::recursive_directory_iterator(dir / "cache" / "code")) {
    if (!only_key.empty() && !e.path().filename().string().starts_with(only_key)) continue;
    ASSERT_EQ(::utimensat(AT_FDCWD, e.path().c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << e.path();
  }
}

// The code cache's artifacts: key -> bytes of its files.
std::map<std::string, std::uintmax_t> artifacts(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  static const std::regex name(R"(([0-9a-f]{32})\.[a-z]+(\.sha256)?)");
  if (!fs::exists(dir / "cache" / "code")) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir / "cache" / "code")) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    if (!e.is_symlink() && e.is_regular_file() && std::regex_match(file, m, name)) {
      out[m[1]] += e.file_size();
    }
  }
  return out;
}

TEST(JsonCli, TuneJsonIsOneDocumentWithEveryCandidateAndMatchesTheCache) {
  ScratchDir dir("json-tune");
  Split first = run_split(dir.path(), tune_args());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json doc = parse(first);
  EXPECT_EQ(doc["format"], "ktune-result");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["record_version"], 2);
  EXPECT_EQ(doc["command"], "tune");
  EXPECT_EQ(doc["spec"], data_path("cli/mm.yaml"));
  EXPECT_EQ(doc["cache_dir"], (dir.path() / "cache").string());
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(doc["tuned"], 2);
  EXPECT_EQ(doc["from_cache"], 0);
  EXPECT_EQ(doc["failed"], 0);
  // The tables and the summary went to stderr, next to the progress.
  EXPECT_THAT(first.err, HasSubstr("AUTOTUNE mm(small)"));
  EXPECT_THAT(first.err, HasSubstr("Tuned 2 problem(s)"));
  EXPECT_THAT(first.out, Not(HasSubstr("AUTOTUNE")));

  ASSERT_EQ(doc["problems"].size(), 2u);
  const std::vector<std::string> names = {"small", "skinny"};
  for (std::size_t i = 0; i < 2; ++i) {
    const json& p = doc["problems"][i];
    SCOPED_TRACE(p.dump(1).substr(0, 2000));
    EXPECT_EQ(p["name"], names[i]);
    EXPECT_EQ(p["status"], "ok");
    EXPECT_EQ(p["from_cache"], false);
    EXPECT_TRUE(p["select_s"].is_number());
    const json& r = p["record"];
    EXPECT_EQ(p["pick"], r["winner"]);
    EXPECT_EQ(p["digest"], r["digest"]);
    EXPECT_EQ(r["spec"], "mm");
    EXPECT_EQ(r["problem_name"], names[i]);
    EXPECT_EQ(r["key"]["op"], "mm");
    EXPECT_THAT(r["key"]["problem"].get<std::string>(), HasSubstr("mm("));
    ASSERT_EQ(r["candidates"].size(), 4u);  // BLOCK 4, 8, 16 and openblas
    EXPECT_EQ(r["candidate_count"], 4);
    std::set<int> blocks;
    bool winner_seen = false;
    for (const json& c : r["candidates"]) {
      // Measured: to its budget, or abandoned as clearly slower (partial statistics).
      EXPECT_THAT(c["outcome"].get<std::string>(), ::testing::AnyOf("ok", "abandoned"));
      EXPECT_TRUE(c["message"].is_string());
      ASSERT_TRUE(c["stats"].is_object()) << c["name"];
      for (const char* f : {"median_ns", "min_ns", "max_ns"}) {
        EXPECT_GT(c["stats"][f].get<double>(), 0) << f;
      }
      // 0 when most runs of a microsecond kernel took the same nanoseconds (seen in CI).
      EXPECT_GE(c["stats"]["mad_ns"].get<double>(), 0);
      EXPECT_LE(c["stats"]["mad_ns"].get<double>(), c["stats"]["max_ns"].get<double>());
      EXPECT_GE(c["stats"]["runs"].get<int>(), 1);
      EXPECT_LE(c["stats"]["min_ns"].get<double>(), c["stats"]["median_ns"].get<double>());
      ASSERT_TRUE(c["params"].is_object());
      winner_seen = winner_seen || c["name"] == r["winner"];
      if (c["name"] == "openblas") {
        EXPECT_TRUE(c["params"].empty());
        EXPECT_TRUE(c["artifact"].is_null());
        continue;
      }
      // A number, not text, and no info string to parse.
      ASSERT_TRUE(c["params"]["BLOCK"].is_number_integer()) << c["params"];
      blocks.insert(c["params"]["BLOCK"].get<int>());
      EXPECT_TRUE(std::regex_match(c["artifact"].get<std::string>(), std::regex("[0-9a-f]{32}")));
    }
    EXPECT_TRUE(winner_seen);
    EXPECT_EQ(blocks, (std::set<int>{4, 8, 16}));
  }

  // Again: both from the cache, and the record is the one `cache show --json` prints.
  Split second = run_split(dir.path(), tune_args());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const json again = parse(second);
  EXPECT_EQ(again["from_cache"], 2);
  ASSERT_EQ(again["problems"].size(), 2u);
  for (const json& p : again["problems"]) EXPECT_EQ(p["from_cache"], true);
  const json& small = again["problems"][0];
  Split show = run_split(
      dir.path(), {"cache", "show", small["digest"].get<std::string>().substr(0, 12), "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json shown = parse(show);
  EXPECT_EQ(shown["format"], "ktune-tuning-cache");
  EXPECT_EQ(shown["version"], 2);
  ASSERT_EQ(shown["records"].size(), 1u);
  EXPECT_EQ(shown["records"][0], small["record"]);
  EXPECT_EQ(shown["records"][0], doc["problems"][0]["record"]);

  // `cache list --json`: the records' summaries, newest first, with the spec's name.
  Split list = run_split(dir.path(), {"cache", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json listed = parse(list);
  EXPECT_EQ(listed["format"], "ktune-cache-list");
  EXPECT_EQ(listed["version"], 1);
  ASSERT_EQ(listed["records"].size(), 2u);
  std::set<std::string> problems;
  for (const json& r : listed["records"]) {
    EXPECT_EQ(r["spec"], "mm");
    EXPECT_EQ(r["key"]["op"], "mm");
    EXPECT_EQ(r["candidate_count"], 4);
    EXPECT_TRUE(r["created_unix"].is_number_integer());
    EXPECT_TRUE(r["winner"].is_string());
    EXPECT_FALSE(r.contains("candidates"));
    problems.insert(r["problem_name"].get<std::string>());
  }
  EXPECT_EQ(problems, (std::set<std::string>{"small", "skinny"}));

  // The table shows them too.
  Split text = run_split(dir.path(), {"cache", "list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("SPEC"));
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(\n[0-9a-f]{12}  mm +mm +skinny +)")))
      << text.out;
}

// An error before tuning prints no document: stdout stays empty, stderr says why.
TEST(JsonCli, TuneJsonWithABadSpecPrintsNothingOnStdout) {
  ScratchDir dir("json-bad");
  Split r = run_split(dir.path(), {"tune", (dir.path() / "absent.yaml").string(), "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("absent.yaml"));
}

TEST(JsonCli, EmptyCacheListsAnEmptyDocument) {
  ScratchDir dir("json-empty");
  Split r = run_split(dir.path(), {"cache", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(parse(r)["records"].empty());
}

TEST(JsonCli, RmRemovesOneRecordAndRefusesWhatNamesNoneOrSeveral) {
  ScratchDir dir("json-rm");
  Split tuned = run_split(dir.path(), tune_args());
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const json doc = parse(tuned);
  const std::string small = doc["problems"][0]["digest"];
  const std::string skinny = doc["problems"][1]["digest"];

  Split rm = run_split(dir.path(), {"cache", "rm", small.substr(0, 10)});
  ASSERT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_THAT(rm.out, HasSubstr("removed record " + small));
  EXPECT_THAT(rm.out, HasSubstr("mm small"));
  json left = parse(run_split(dir.path(), {"cache", "list", "--json"}));
  ASSERT_EQ(left["records"].size(), 1u);
  EXPECT_EQ(left["records"][0]["digest"], skinny);

  // Gone: no match is an error, and so is a prefix that is not one.
  Split none = run_split(dir.path(), {"cache", "rm", small.substr(0, 10)});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("no record matches '" + small.substr(0, 10) + "'"));
  Split bad = run_split(dir.path(), {"cache", "rm", "zzzz"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("not hexadecimal"));
  Split shorter = run_split(dir.path(), {"cache", "rm", "ab"});
  EXPECT_EQ(shorter.exit_code, 1);
  EXPECT_THAT(shorter.err, HasSubstr("too short"));
  EXPECT_EQ(parse(run_split(dir.path(), {"cache", "list", "--json"}))["records"].size(), 1u);

  // Tuning again tunes the removed problem only.
  Split again = run_split(dir.path(), tune_args());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(parse(again)["from_cache"], 1);
}

// Two records whose digests share their first 4 digits: that prefix names both, and rm lists
// them and removes neither.
TEST(JsonCli, RmOfAnAmbiguousPrefixListsTheMatches) {
  ScratchDir dir("json-rm-ambiguous");
  std::map<std::string, TuningRecord> by_prefix;
  std::vector<TuningRecord> pair;
  for (int i = 0; pair.empty(); ++i) {
    TuningRecord r;
    r.key = {"op", "p" + std::to_string(i), "c", "d", "t", "v"};
    r.winner = "w";
    r.spec = "ambiguous_spec";
    r.candidates = {{"k", "w", "", Outcome::kOk, "", BenchStats{1, 1, 1, 0, 1}, 0}};
    const std::string prefix = r.key.digest().substr(0, 4);
    if (auto it = by_prefix.find(prefix); it != by_prefix.end()) {
      pair = {it->second, r};
    } else {
      by_prefix.emplace(prefix, r);
    }
  }
  const std::string file = write_text(dir.path(), "two.json", export_json(pair));
  Split imported = run_split(dir.path(), {"cache", "import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const std::string prefix = pair[0].key.digest().substr(0, 4);
  Split rm = run_split(dir.path(), {"cache", "rm", prefix});
  EXPECT_EQ(rm.exit_code, 1);
  EXPECT_THAT(rm.err, HasSubstr("'" + prefix + "' matches 2 records; give more digits"));
  EXPECT_THAT(rm.err, HasSubstr(pair[0].key.digest()));
  EXPECT_THAT(rm.err, HasSubstr(pair[1].key.digest()));
  EXPECT_THAT(rm.err, HasSubstr("ambiguous_spec"));
  EXPECT_EQ(parse(run_split(dir.path(), {"cache", "list", "--json"}))["records"].size(), 2u);
  // The whole digest names one.
  Split one = run_split(dir.path(), {"cache", "rm", pair[1].key.digest()});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(parse(run_split(dir.path(), {"cache", "list", "--json"}))["records"].size(), 1u);
}

TEST(JsonCli, PruneRemovesUnreferencedOldOrLeastRecentlyUsedArtifactsOnly) {
  ScratchDir dir("json-prune");
  // Nothing to prune yet, and no criterion is a usage error.
  Split empty = run_split(dir.path(), {"cache", "prune", "--unreferenced"});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_THAT(empty.out, HasSubstr("holds no artifacts; nothing to prune"));
  Split no_flag = run_split(dir.path(), {"cache", "prune"});
  EXPECT_EQ(no_flag.exit_code, 2);
  EXPECT_THAT(no_flag.err, HasSubstr("--unreferenced, --older-than DAYS and/or --max-size MB"));

  Split tuned = run_split(dir.path(), tune_args());
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const auto compiled = artifacts(dir.path());
  ASSERT_EQ(compiled.size(), 3u);
  // Not the code cache's: a file of another name and a link named like an artifact.
  const fs::path shard = dir.path() / "cache" / "code" / compiled.begin()->first.substr(0, 2);
  std::ofstream(shard / "notes.txt") << "mine";
  std::ofstream(dir.path() / "target.so") << "outside";
  const fs::path link =
      shard / (compiled.begin()->first.substr(0, 2) + std::string(30, 'e') + ".so");
  fs::create_symlink(dir.path() / "target.so", link);

  // Just used: kept whatever the flags say (a tuning may be loading them).
  Split fresh = run_split(dir.path(), {"cache", "prune", "--older-than", "0", "--max-size", "0"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_THAT(fresh.out, HasSubstr("Removed 0 artifact(s)"));
  EXPECT_THAT(fresh.out, HasSubstr("(3 used within the last hour)"));
  EXPECT_EQ(artifacts(dir.path()).size(), 3u);

  age_code_cache(dir.path(), 2);
  // Referenced by the records: --unreferenced keeps them.
  Split referenced = run_split(dir.path(), {"cache", "prune", "--unreferenced"});
  ASSERT_EQ(referenced.exit_code, 0) << referenced.err;
  EXPECT_THAT(referenced.out, HasSubstr("Removed 0 artifact(s)"));
  EXPECT_EQ(artifacts(dir.path()).size(), 3u);
  // Younger than 3 days: kept; older than 1 day: would go (dry run).
  Split young = run_split(dir.path(), {"cache", "prune", "--older-than", "3"});
  EXPECT_THAT(young.out, HasSubstr("Removed 0 artifact(s)"));
  Split dry = run_split(dir.path(), {"cache", "prune", "--older-than", "1", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("Would remove 3 artifact(s) (12 files)"));
  EXPECT_THAT(dry.out, HasSubstr("unused for 2 days"));
  EXPECT_EQ(artifacts(dir.path()).size(), 3u);

  // --max-size: the least recently used go first, until the rest fits.
  auto it = compiled.begin();
  const std::string oldest = it->first, middle = (++it)->first, newest = (++it)->first;
  age_code_cache(dir.path(), 5, oldest);
  age_code_cache(dir.path(), 4, middle);
  const double fits_mb = static_cast<double>(compiled.at(newest)) / (1024.0 * 1024.0) + 1e-9;
  Split lru = run_split(
      dir.path(), {"cache", "prune", "--max-size", fmt::format("{:.9f}", fits_mb), "--verbose"});
  ASSERT_EQ(lru.exit_code, 0) << lru.err;
  EXPECT_THAT(lru.out, HasSubstr("Removed 2 artifact(s)"));
  EXPECT_THAT(lru.out, HasSubstr("removed " + oldest));
  EXPECT_THAT(lru.out, HasSubstr("removed " + middle));
  auto left = artifacts(dir.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left.begin()->first, newest);

  // Records removed: their artifacts are unreferenced now.
  const json tuned_doc = parse(tuned);
  ASSERT_EQ(tuned_doc["problems"].size(), 2u);
  for (const json& p : tuned_doc["problems"]) {
    ASSERT_EQ(run_split(dir.path(), {"cache", "rm", p["digest"].get<std::string>()}).exit_code, 0);
  }
  Split unref = run_split(dir.path(), {"cache", "prune", "--unreferenced"});
  ASSERT_EQ(unref.exit_code, 0) << unref.err;
  EXPECT_THAT(unref.out, HasSubstr("Removed 1 artifact(s) (4 files)"));
  EXPECT_TRUE(artifacts(dir.path()).empty());
  // What was not the code cache's is untouched, the link not followed.
  EXPECT_TRUE(fs::exists(shard / "notes.txt"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(dir.path() / "target.so"));

  // And the next tuning compiles again what it needs.
  Split retuned = run_split(dir.path(), tune_args());
  ASSERT_EQ(retuned.exit_code, 0) << retuned.err;
  EXPECT_EQ(artifacts(dir.path()).size(), 3u);
}

// A code folder that is a link is not followed: prune refuses it and removes nothing.
TEST(JsonCli, PruneRefusesACodeFolderThatIsALink) {
  ScratchDir dir("json-prune-link");
  const fs::path elsewhere = dir.path() / "elsewhere" / "aa";
  fs::create_directories(elsewhere);
  const fs::path victim = elsewhere / ("aa" + std::string(30, '0') + ".so");
  std::ofstream(victim) << "not the cache's";
  fs::create_directories(dir.path() / "cache");
  ASSERT_EQ(::chmod((dir.path() / "cache").c_str(), 0700), 0);
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "cache" / "code");
  age_code_cache(dir.path(), 10);
  Split r = run_split(dir.path(), {"cache", "prune", "--older-than", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("is a symbolic link"));
  EXPECT_TRUE(fs::exists(victim));
}

}  // namespace
}  // namespace ktune::test
