// Flags mean what they say, and errors show where they happen (through the real CLI): --cxxflags
// adds to ktune's compiler flags and --cxxflags-replace replaces them; --json-log, the worker and
// --problem are checked before anything compiles; --trace writes one timeline; measurement flags
// that differ from a cached record's are said on the hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// test/data/cli/mm.yaml over a kernel that compiles only with -DMM_FLAG_SEEN, so that a tuning
// that succeeds shows the flag reached the compiler and the result still loaded.
class FlagsCli : public ::testing::Test {
 protected:
  FlagsCli() : cache_("flags-cache"), dir_("flags-specs") {
    std::ifstream src(data_path("cli/mm.cpp"));
    std::stringstream text;
    text << "#ifndef MM_FLAG_SEEN\n#error needs -DMM_FLAG_SEEN\n#endif\n" << src.rdbuf();
    write_text(dir_.path(), "mm.cpp", text.str());
    std::ifstream yaml(data_path("cli/mm.yaml"));
    std::stringstream spec;
    spec << yaml.rdbuf();
    spec_ = write_text(dir_.path(), "mm.yaml", spec.str());
  }
  CliResult tune(std::vector<std::string> extra) {
    std::vector<std::string> args = {"tune", spec_, "--budget-ms", "1", "--problem", "small"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(cache_.path(), args);
  }
  ScratchDir cache_;
  ScratchDir dir_;
  std::string spec_;
};

TEST_F(FlagsCli, CxxflagsAddToTheDefaults) {
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN -O2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Every template candidate compiled, loaded and verified: none failed.
  EXPECT_THAT(r.output, HasSubstr("mm_BLOCK16"));
  EXPECT_THAT(r.output, Not(HasSubstr("compile_error"))) << r.output;
  // Without the flag the kernel does not compile: the flag is what made it.
  CliResult without = tune({"--retune"});
  EXPECT_THAT(without.output, HasSubstr("compile_error"));
  EXPECT_THAT(without.output, HasSubstr("needs -DMM_FLAG_SEEN"));
}

TEST_F(FlagsCli, CxxflagsReplaceReplacesTheDefaults) {
  // Replacing with flags that still make a shared object works...
  CliResult r = tune({"--cxxflags-replace", "-O2 -shared -fPIC -DMM_FLAG_SEEN"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("compile_error"))) << r.output;
  // ...and without -shared the defaults are gone: no shared object, every template fails to
  // build (the library reference still competes).
  CliResult bare = tune({"--cxxflags-replace", "-DMM_FLAG_SEEN"});
  EXPECT_THAT(bare.output, HasSubstr("compile_error")) << bare.output;
  EXPECT_THAT(bare.output, Not(HasSubstr("needs -DMM_FLAG_SEEN")));
  // Both: replaced, then added to.
  CliResult both =
      tune({"--cxxflags-replace", "-O1 -shared -fPIC", "--cxxflags", "-DMM_FLAG_SEEN"});
  ASSERT_EQ(both.exit_code, 0) << both.output;
  EXPECT_THAT(both.output, Not(HasSubstr("compile_error"))) << both.output;
}

TEST_F(FlagsCli, UnwritableJsonLogFailsBeforeCompiling) {
  const std::string log = (dir_.path() / "no-such-folder" / "log.jsonl").string();
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN", "--json-log", log});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: --json-log " + log));
  EXPECT_THAT(r.output, Not(HasSubstr("compiling")));
  EXPECT_EQ(count_artifacts(cache_.path()), 0);
}

// --trace: one Chrome trace-event array (without its optional closing bracket) that the tuning
// process and its worker both append to: compiles in the one, requests and their phases in the
// other, each event complete with a duration.
TEST_F(FlagsCli, TraceIsOneTimelineOfKtuneAndItsWorker) {
  const std::string trace = (dir_.path() / "run.trace.json").string();
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN", "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  std::string body = text.str();
  ASSERT_TRUE(body.starts_with("[\n")) << body.substr(0, 80);
  ASSERT_TRUE(body.ends_with(",\n"))
      << body.substr(body.size() - std::min<std::size_t>(80, body.size()));
  body.resize(body.size() - 2);
  const nlohmann::json events = nlohmann::json::parse(body + "]");
  std::map<std::string, std::set<long>> pids_of;  // event name -> processes that wrote it
  for (const nlohmann::json& e : events) {
    ASSERT_EQ(e.at("ph"), "X") << e.dump();
    EXPECT_GE(e.at("dur").get<long>(), 0) << e.dump();
    pids_of[e.at("name").get<std::string>()].insert(e.at("pid").get<long>());
  }
  for (const char* name :
       {"compile", "search", "measure request", "serve", "prepare", "verify", "measure", "check"}) {
    EXPECT_TRUE(pids_of.contains(name)) << name << " missing from " << body.substr(0, 400);
  }
  // The compiles are ktune's, the phases the worker's: two processes, one file.
  ASSERT_TRUE(pids_of.contains("compile") && pids_of.contains("serve"));
  EXPECT_NE(*pids_of["compile"].begin(), *pids_of["serve"].begin());
}

TEST_F(FlagsCli, UnwritableTraceIsAUsageErrorBeforeCompiling) {
  const std::string trace = (dir_.path() / "no-such-folder" / "t.json").string();
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN", "--trace", trace});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--trace"));
  EXPECT_THAT(r.output, HasSubstr(trace + ": cannot open for appending"));
  EXPECT_THAT(r.output, Not(HasSubstr("compiling")));
  EXPECT_EQ(count_artifacts(cache_.path()), 0);
}

TEST_F(FlagsCli, MissingWorkerIsFoundBeforeCompiling) {
  const std::string nowhere = (dir_.path() / "no-worker").string();
  ::setenv("KTUNE_WORKER", nowhere.c_str(), 1);
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN"});
  ::unsetenv("KTUNE_WORKER");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(nowhere));
  EXPECT_THAT(r.output, HasSubstr("--in-process"));
  EXPECT_THAT(r.output, Not(HasSubstr("compiling")));
  EXPECT_EQ(count_artifacts(cache_.path()), 0);
}

TEST_F(FlagsCli, ProblemThatMatchesNothingListsTheProblems) {
  CliResult r = run_cli(cache_.path(), {"tune", spec_, "--problem", "smal", "--problem", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--problem 'smal' matches no problem; the spec's problems are: "
                                  "small (0), skinny (1)"));
  EXPECT_THAT(r.output, Not(HasSubstr("compiling")));
}

// Measurement flags are not in the tuning-cache key (an earlier tuning still answers a tweaked
// --budget-ms), so the hit says which stored settings answered when the flags given differ.
TEST_F(FlagsCli, CacheHitSaysWhenTheMeasurementFlagsGivenDiffer) {
  auto run = [&](std::vector<std::string> flags) {
    std::vector<std::string> args = {"tune",  spec_,        "--problem",
                                     "small", "--cxxflags", "-DMM_FLAG_SEEN"};
    args.insert(args.end(), flags.begin(), flags.end());
    return run_cli(cache_.path(), args);
  };
  ASSERT_EQ(run({"--budget-ms", "1", "--min-runs", "2"}).exit_code, 0);
  // The same flags: a plain hit.
  CliResult same = run({"--budget-ms", "1", "--min-runs", "2"});
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(same.output, Not(HasSubstr("the flags given differ")));
  // No measurement flag given: nothing to contradict.
  CliResult none = run({});
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_THAT(none.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(none.output, Not(HasSubstr("the flags given differ")));
  // Another budget and --no-flush: still a hit, and it says so.
  CliResult other = run({"--budget-ms", "7", "--min-runs", "2", "--no-flush"});
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(other.output,
              HasSubstr("[tuning cache] stored with --budget-ms 1 --min-runs 2 --max-runs 200 "
                        "--warmup-runs 1 --close-call-band 0.1 --decide-rounds 15; the flags "
                        "given differ (--budget-ms 7 --no-flush); --retune to tune with them"));
  // --retune measures with them, and then they answer without a note.
  ASSERT_EQ(run({"--budget-ms", "7", "--no-flush", "--retune"}).exit_code, 0);
  CliResult after = run({"--budget-ms", "7", "--no-flush"});
  EXPECT_THAT(after.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(after.output, Not(HasSubstr("the flags given differ"))) << after.output;
  // `ktune cache show` says them too.
  const std::string::size_type key = after.output.find("(key ");
  ASSERT_NE(key, std::string::npos) << after.output;
  CliResult show = run_cli(cache_.path(), {"cache", "show", after.output.substr(key + 5, 12)});
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_THAT(show.output, HasSubstr("measured with  --budget-ms 7 --min-runs 3"));
  EXPECT_THAT(show.output, HasSubstr("--no-flush"));
}

// A record stored before ktune kept its settings (an export without them, imported): the hit
// cannot tell whether the flags given differ, and says so.
TEST_F(FlagsCli, CacheHitOnARecordWithoutSettingsSaysTheyAreUnknown) {
  ASSERT_EQ(tune({"--cxxflags", "-DMM_FLAG_SEEN"}).exit_code, 0);
  const std::string file = (dir_.path() / "export.json").string();
  ASSERT_EQ(run_cli(cache_.path(), {"cache", "export", file}).exit_code, 0);
  std::ifstream in(file);
  nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_TRUE(doc["records"][0]["settings"].is_object()) << doc.dump();
  for (auto& r : doc["records"]) r.erase("settings");
  write_text(dir_.path(), "export.json", doc.dump());
  ASSERT_EQ(run_cli(cache_.path(), {"cache", "clear"}).exit_code, 0);
  CliResult imported = run_cli(cache_.path(), {"cache", "import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  CliResult r = tune({"--cxxflags", "-DMM_FLAG_SEEN"});  // --budget-ms 1, as stored
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(r.output, HasSubstr("[tuning cache] stored by an older ktune without its "
                                  "measurement settings; the flags given (--budget-ms 1) may "
                                  "differ; --retune to tune with them"));
}

// A spec with one candidate (one config, no extern): nothing competes, but its time is still
// measured, shown in the table and logged.
TEST_F(FlagsCli, ASingleCandidateIsTimed) {
  std::ifstream yaml(data_path("cli/mm.yaml"));
  std::stringstream text;
  text << yaml.rdbuf();
  std::string one = text.str();
  one.replace(one.find("BLOCK: [4, 8, 16, 32]"), 21, "BLOCK: [8]");
  one.erase(one.find("restrictions:"));  // and the extern with its reference role
  const std::string spec = write_text(dir_.path(), "one.yaml", one);
  const std::string log = (dir_.path() / "one.jsonl").string();
  CliResult r = run_cli(cache_.path(), {"tune", spec, "--problem", "small", "--budget-ms", "1",
                                        "--cxxflags", "-DMM_FLAG_SEEN", "--json-log", log});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("mm_BLOCK8"));
  EXPECT_THAT(r.output, HasSubstr("100.0%")) << r.output;  // its time, as the best
  std::ifstream in(log);
  std::stringstream lines;
  lines << in.rdbuf();
  EXPECT_THAT(lines.str(), HasSubstr("\"median_ns\"")) << lines.str();
}

// `ktune space` on an op: spec shows its op's templates' spaces (no GPU needed): each template
// with its parameters, and --list prints as many configs as the valid counts add up to.
TEST(SpaceCli, OpSpecShowsEachTemplatesSpace) {
  ScratchDir cache("space-op");
  CliResult r = run_cli(cache.path(),
                        {"space", data_path("../../examples/cuda_gemm/gemm_bf16.yaml"), "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("op cuda.gemm (bf16)"));
  // Every template of any GPU, each saying where it is tuned (Hopper has its own).
  EXPECT_THAT(r.output, HasSubstr("template cuda_gemm_mma_bf16 (not on sm_90a):"));
  EXPECT_THAT(r.output, HasSubstr("template cuda_gemm_wgmma_bf16 (sm_90a only):"));
  EXPECT_THAT(r.output, HasSubstr("template cuda_gemm_tma_bf16 (sm_90a only):"));
  EXPECT_THAT(r.output, HasSubstr("template cuda_gemm_simt_bf16:"));
  EXPECT_THAT(r.output, HasSubstr("param BLOCK_M: ["));
  long valid = 0, listed = 0;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (const auto at = line.find(" valid configs"); at != std::string::npos) {
      valid += std::stol(line.substr(0, at));
    } else if (line.starts_with("  BLOCK_M=")) {
      ++listed;
    }
  }
  EXPECT_GT(valid, 0);
  EXPECT_EQ(listed, valid) << r.output;
}

}  // namespace
}  // namespace ktune::test
