// Flags mean what they say, and errors show where they happen (through the real CLI): --cxxflags
// adds to ktune's compiler flags and --cxxflags-replace replaces them; --json-log, the worker and
// --problem are checked before anything compiles; measurement flags that differ from a cached
// record's are said on the hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
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
  CliResult both = tune({"--cxxflags-replace", "-O1 -shared -fPIC", "--cxxflags", "-DMM_FLAG_SEEN"});
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

}  // namespace
}  // namespace ktune::test
