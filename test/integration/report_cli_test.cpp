// `ktune report` over real tunings: the file it writes, the filters, and bad input (an empty
// cache, a filter that matches nothing, an output that cannot be written): a clear error, exit 1,
// and nothing written or left half-written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// One cache for the suite, tuned once: mm.yaml (two problems, a parameter, OpenBLAS) and
// hostile.yaml (compile errors carrying a script, a wrong result, markup in a parameter value).
class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = std::make_unique<ScratchDir>("report-cache");
    for (const char* spec : {"cli/mm.yaml", "report/hostile.yaml"}) {
      CliResult r = run_cli(cache_->path(), {"tune", data_path(spec), "--budget-ms", "2", "-q"});
      ASSERT_EQ(r.exit_code, 0) << r.output;
    }
  }
  static void TearDownTestSuite() { cache_.reset(); }
  static const fs::path& cache() { return cache_->path(); }

  ScratchDir out_{"report-out"};

 private:
  static inline std::unique_ptr<ScratchDir> cache_;
};

TEST_F(ReportCli, WritesEveryRecordWithItsFigures) {
  const fs::path file = out_.path() / "report.html";
  CliResult r = run_cli(cache(), {"report", "-o", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote the report of 3 record(s) to"), std::string::npos) << r.output;
  const std::string html = read_all(file);
  EXPECT_NE(html.find("3 records, 16 candidates"), std::string::npos);
  // mm: the BLOCK chart, OpenBLAS in the table; hostile_add: its failures by outcome.
  EXPECT_NE(html.find("<figcaption>BLOCK</figcaption>"), std::string::npos);
  EXPECT_NE(html.find("<title>BLOCK=8: median"), std::string::npos);
  EXPECT_NE(html.find(">compile_error</span> 2 candidates"), std::string::npos);
  EXPECT_NE(html.find(">wrong_result</span> 2 candidates, 1 distinct message"), std::string::npos);
  EXPECT_NE(html.find("elements differ"), std::string::npos);
  EXPECT_NE(html.find("<h3>Confidence</h3>"), std::string::npos);
  // The compile error's script and the parameter's markup are text, never markup.
  EXPECT_NE(html.find("#error &quot;&lt;script&gt;document.body.setAttribute(&#39;data-pwned"),
            std::string::npos);
  EXPECT_NE(html.find("TAG=&lt;b onmouseover=alert(2)&gt;bold&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>document"), std::string::npos);
  EXPECT_EQ(html.find("<b onmouseover"), std::string::npos);
  // Written in place by rename: the report is all the folder holds.
  EXPECT_EQ(entries(out_.path()), 1U);
}

TEST_F(ReportCli, FiltersByProblemAndDigest) {
  const fs::path file = out_.path() / "r.html";
  // By op (the spec's name): both mm problems.
  CliResult op = run_cli(cache(), {"report", "--problem", "mm", "-o", file.string()});
  ASSERT_EQ(op.exit_code, 0) << op.output;
  EXPECT_NE(op.output.find("report of 2 record(s)"), std::string::npos) << op.output;
  EXPECT_EQ(read_all(file).find("hostile_add"), std::string::npos);
  // By part of a problem key: mm's skinny problem (M=2) alone.
  CliResult part = run_cli(cache(), {"report", "--problem", "scalar M i32=2,", "-o", "-"});
  ASSERT_EQ(part.exit_code, 0) << part.output;
  EXPECT_NE(part.output.find("1 record, 4 candidates"), std::string::npos);
  // By digest prefix, as `cache list` prints it.
  CliResult list = run_cli(cache(), {"cache", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const std::string digest = list.output.substr(list.output.find('\n') + 1, 12);  // first record
  CliResult one = run_cli(cache(), {"report", "--digest", digest, "-o", file.string()});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("report of 1 record(s)"), std::string::npos) << one.output;
  EXPECT_NE(read_all(file).find("<code>" + digest), std::string::npos);
}

TEST_F(ReportCli, FilterMatchingNothingListsWhatExistsAndWritesNothing) {
  const fs::path file = out_.path() / "report.html";
  write(file, "an earlier report");
  CliResult r = run_cli(cache(), {"report", "--problem", "conv2d", "-o", file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: report: no record of problem 'conv2d'; the tuning cache holds:"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  hostile_add  hostile_add(out C f32[4096]"), std::string::npos);
  EXPECT_NE(r.output.find("  mm  mm(out C f32[16,32]"), std::string::npos);
  EXPECT_EQ(read_all(file), "an earlier report");

  CliResult d = run_cli(cache(), {"report", "--digest", "00000000000000", "-o", file.string()});
  EXPECT_EQ(d.exit_code, 1) << d.output;
  EXPECT_NE(d.output.find("no record's digest starts with '00000000000000'; the tuning cache "
                          "holds:"),
            std::string::npos)
      << d.output;
  CliResult bad = run_cli(cache(), {"report", "--digest", "xyz!", "-o", file.string()});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("error: report: --digest: "), std::string::npos) << bad.output;
  EXPECT_EQ(read_all(file), "an earlier report");
  EXPECT_EQ(entries(out_.path()), 1U);
}

TEST_F(ReportCli, UnwritableOutputIsAnErrorAndLeavesNothing) {
  // Under a regular file: no folder can be made there.
  write(out_.path() / "plain", "x");
  CliResult under = run_cli(cache(), {"report", "-o", (out_.path() / "plain" / "r.html").string()});
  EXPECT_EQ(under.exit_code, 1) << under.output;
  EXPECT_NE(under.output.find("error: report: "), std::string::npos) << under.output;
  EXPECT_NE(under.output.find("(nothing written)"), std::string::npos) << under.output;
  // Onto a folder: the rename fails, and the temporary written first is removed.
  fs::create_directory(out_.path() / "folder");
  CliResult onto = run_cli(cache(), {"report", "-o", (out_.path() / "folder").string()});
  EXPECT_EQ(onto.exit_code, 1) << onto.output;
  EXPECT_NE(onto.output.find("cannot rename into place"), std::string::npos) << onto.output;
  EXPECT_EQ(entries(out_.path()), 2U);  // plain and folder, no temporary
  EXPECT_EQ(entries(out_.path() / "folder"), 0U);
  // A folder this user cannot write (meaningless for root, who can).
  if (::geteuid() != 0) {
    fs::create_directory(out_.path() / "ro");
    fs::permissions(out_.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CliResult ro = run_cli(cache(), {"report", "-o", (out_.path() / "ro" / "r.html").string()});
    EXPECT_EQ(ro.exit_code, 1) << ro.output;
    EXPECT_EQ(entries(out_.path() / "ro"), 0U);
    fs::permissions(out_.path() / "ro", fs::perms::owner_all);
  }
  // No output given: a usage error.
  EXPECT_EQ(run_cli(cache(), {"report"}).exit_code, 2);
}

TEST(ReportCliEmpty, EmptyCacheSaysSoAndWritesNothing) {
  ScratchDir cache("report-empty");
  ScratchDir out("report-empty-out");
  const fs::path file = out.path() / "report.html";
  CliResult r = run_cli(cache.path(), {"report", "-o", file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: report: no tuning records in " + cache.path().string() +
                          ": nothing to report"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(file));
}

TEST(ReportCliHelp, HelpNamesEveryOption) {
  ScratchDir cache("report-help");
  CliResult r = run_cli(cache.path(), {"report", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* s : {"-o,--output", "--problem", "--digest", "--title", "self-contained HTML",
                        "Exit 1 when the cache is empty"}) {
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  }
}

}  // namespace
}  // namespace ktune::test
