// Errors where they happen, through the real CLI: a compiler message names the user's file and
// line (a parameter's name in the source included); a reference in the kernel's file is told why
// it does not compile; a header beside the kernel is found, and an edited header (beside it or in a
// -I folder) re-tunes and recompiles; a restriction set that leaves no config names the
// restriction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spill(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// A copy of compile_errors/deps (the test edits its headers), with the spec's -I pointing at the
// copy's inc/.
std::filesystem::path copy_deps(const ScratchDir& dir) {
  const std::filesystem::path to = dir.path() / "deps";
  std::filesystem::copy(data_path("compile_errors/deps"), to,
                        std::filesystem::copy_options::recursive);
  std::string spec = slurp(to / "mm.yaml");
  spec.replace(spec.find("@INC@", spec.find("kernel:")), 5, (to / "inc").string());
  spill(to / "mm.yaml", spec);
  return to;
}

CliResult tune(const ScratchDir& cache, const std::filesystem::path& spec,
               std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"tune", spec.string(), "--budget-ms", "2", "-q"};
  args.insert(args.end(), more.begin(), more.end());
  return run_cli(cache.path(), args);
}

// A test file by the absolute name compilers print in their messages.
std::string absolute_data(const std::string& relative) {
  return std::filesystem::absolute(data_path(relative)).lexically_normal().string();
}

TEST(CompileErrorsCli, CompilerMessageNamesTheUsersFileAndLine) {
  ScratchDir cache("errors-cache");
  const std::string source = absolute_data("compile_errors/bad/bad.cpp");
  CliResult r = tune(cache, data_path("compile_errors/bad/bad.yaml"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  // bad.cpp has `undeclared_name = 1;` at line 6, column 5.
  EXPECT_THAT(r.output, HasSubstr(source + ":6:5: error:")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("undeclared_name")) << r.output;
}

// A section left out removes four lines; the message still names the template's own line.
TEST(CompileErrorsCli, MustacheRenderingKeepsTheTemplatesLineNumbers) {
  ScratchDir cache("errors-cache");
  const std::string source = absolute_data("compile_errors/bad/bad_mustache.cpp");
  CliResult r = tune(cache, data_path("compile_errors/bad/bad_mustache.yaml"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(source + ":11:5: error:")) << r.output;
}

// `template <int U>` beside a parameter U: the #define's line has a name of its own, the
// compiler's note points at the user's line rather than at a temporary file, and ktune's note
// says why (NVRTC's message shows the line only).
TEST(CompileErrorsCli, AParameterNameInTheSourceIsReportedAtTheUsersLine) {
  ScratchDir cache("errors-cache");
  const std::string source = absolute_data("compile_errors/clash/clash.cpp");
  CliResult r = tune(cache, data_path("compile_errors/clash/clash.yaml"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("<tuning parameters>:1:11: error:")) << r.output;
  EXPECT_THAT(r.output, HasSubstr(source + ":4:15: note: in expansion of macro")) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr(".ktune-tmp."))) << r.output;
  // The whole message of the first failure, and ktune's note after the compiler's.
  EXPECT_THAT(r.output, HasSubstr("note: U is a tuning parameter, #defined as its value for every "
                                  "candidate, and clash.cpp declares a name U at line 4"))
      << r.output;
}

// A reference kept in the kernel's file is compiled without the parameters; the error says so
// and what to do, after the compiler's own message.
TEST(CompileErrorsCli, AReferenceInTheKernelsFileIsToldWhyItDoesNotCompile) {
  ScratchDir cache("errors-cache");
  CliResult r = tune(cache, data_path("compile_errors/same_file/scale.yaml"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("reference scale_reference does not compile")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("scale.cpp:5:14: error:")) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("note: the reference is compiled from the kernel's file, scale.cpp, "
                        "without the tuning parameters' #defines (UNROLL); guard the "
                        "candidates' code with `#ifdef UNROLL`"))
      << r.output;
}

TEST(CompileErrorsCli, HeaderBesideTheKernelIsFoundAndItsEditRetunesAndRecompiles) {
  ScratchDir cache("errors-cache"), dir("errors-src");
  const std::filesystem::path deps = copy_deps(dir);
  CliResult first = tune(cache, deps / "mm.yaml");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, Not(HasSubstr("compile_error"))) << first.output;
  EXPECT_THAT(first.output, HasSubstr("(0 from the tuning cache)")) << first.output;
  const int artifacts = count_artifacts(cache.path());
  EXPECT_EQ(artifacts, 2);

  CliResult same = tune(cache, deps / "mm.yaml");
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("(1 from the tuning cache)")) << same.output;

  // Same behaviour, other bytes: the identity is the content, not what it computes.
  spill(deps / "helper.h", slurp(deps / "helper.h") + "// edited\n");
  CliResult edited = tune(cache, deps / "mm.yaml");
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_THAT(edited.output, HasSubstr("(0 from the tuning cache)")) << edited.output;
  EXPECT_EQ(count_artifacts(cache.path()), artifacts + 2);
}

TEST(CompileErrorsCli, EditedHeaderInAnIncludeFolderRetunesAndRecompiles) {
  ScratchDir cache("errors-cache"), dir("errors-src");
  const std::filesystem::path deps = copy_deps(dir);
  ASSERT_EQ(tune(cache, deps / "mm.yaml").exit_code, 0);
  const int artifacts = count_artifacts(cache.path());

  spill(deps / "inc" / "scale.h", slurp(deps / "inc" / "scale.h") + "// edited\n");
  CliResult edited = tune(cache, deps / "mm.yaml");
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_THAT(edited.output, HasSubstr("(0 from the tuning cache)")) << edited.output;
  EXPECT_EQ(count_artifacts(cache.path()), artifacts + 2);

  // --retune with nothing edited compiles nothing new: the code cache still answers.
  CliResult retune = tune(cache, deps / "mm.yaml", {"--retune"});
  ASSERT_EQ(retune.exit_code, 0) << retune.output;
  EXPECT_EQ(count_artifacts(cache.path()), artifacts + 2);
}

// The include folder given on the command line (--cxxflags -I...) rather than in the spec: an
// edited header there is a new tuning too, not an answer from the tuning cache.
TEST(CompileErrorsCli, EditedHeaderInACxxflagsIncludeFolderRetunes) {
  ScratchDir cache("errors-cache"), dir("errors-src");
  const std::filesystem::path deps = copy_deps(dir);
  std::string spec = slurp(deps / "mm.yaml");
  spec.replace(spec.find(", flags: [-I"),
               spec.find("]}", spec.find(", flags: [-I")) + 1 - spec.find(", flags: [-I"), "");
  spill(deps / "mm.yaml", spec);
  const std::vector<std::string> flags = {"--cxxflags", "-I" + (deps / "inc").string()};
  ASSERT_EQ(tune(cache, deps / "mm.yaml", flags).exit_code, 0);
  CliResult same = tune(cache, deps / "mm.yaml", flags);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, HasSubstr("(1 from the tuning cache)")) << same.output;

  spill(deps / "inc" / "scale.h", slurp(deps / "inc" / "scale.h") + "// edited\n");
  CliResult edited = tune(cache, deps / "mm.yaml", flags);
  ASSERT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_THAT(edited.output, HasSubstr("(0 from the tuning cache)")) << edited.output;
}

TEST(CompileErrorsCli, EmptySpaceNamesTheRestrictionThatRemovedTheLastConfigs) {
  ScratchDir cache("errors-cache");
  const std::string spec = data_path("compile_errors/empty/empty.yaml");
  // restrictions[2] (line 19) is reached with 4 of the 8 configs left.
  const std::string message =
      spec + ":19: restrictions[2] (`BLOCK > 16`) removed the last 4 configs";

  CliResult space = run_cli(cache.path(), {"space", spec});
  EXPECT_EQ(space.exit_code, 1) << space.output;
  EXPECT_THAT(space.output, HasSubstr("0 valid configs")) << space.output;
  EXPECT_THAT(space.output, HasSubstr(message)) << space.output;

  CliResult tuned = tune(cache, spec);
  EXPECT_EQ(tuned.exit_code, 1) << tuned.output;
  EXPECT_THAT(tuned.output, HasSubstr(message)) << tuned.output;
  EXPECT_EQ(count_artifacts(cache.path()), 0);
}

}  // namespace
}  // namespace ktune::test
