// `mpirun -n R ktune tune SPEC --distributed` through the real mpirun (Open MPI) and the real CLI:
// the picks and every record's candidates (names, outcomes) must equal a single-process run's;
// a rank that dies mid-run leaves the others' problems stored whole and the missing ones named.
// Skipped when mpirun is absent, except under CI=true, where that fails.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "support/cli_run.h"
#include "support/exported_picks.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

std::string find_mpirun() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::filesystem::path p = std::filesystem::path(d) / "mpirun";
    if (!d.empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

#define REQUIRE_MPIRUN(var)                                                               \
  const std::string var = find_mpirun();                                                  \
  if (var.empty()) {                                                                      \
    const char* ci = std::getenv("CI");                                                   \
    if (ci && std::string(ci) == "true") FAIL() << "CI=true but mpirun is not installed"; \
    GTEST_SKIP() << "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)";      \
  }

// Cheap measurement settings; --no-abandon: whether a slow candidate is abandoned depends on the
// best time seen so far, which differs between a share and the whole set.
std::vector<std::string> tune_args(const std::string& spec) {
  return {"tune", data_path(spec), "--no-abandon", "--budget-ms", "5"};
}

// mpirun -n `ranks` of `ktune --cache-dir cache args...`; each rank's exit status is appended to
// the output as "rank R exit N" (with --enable-recovery, mpirun itself exits 0 whatever the ranks
// return).
CliResult run_mpi(const std::string& mpirun, int ranks, const std::filesystem::path& cache,
                  const std::vector<std::string>& args, bool recovery = false) {
  std::vector<std::string> argv = {mpirun, "--oversubscribe", "--allow-run-as-root", "-n",
                                   std::to_string(ranks)};
  if (recovery) argv.push_back("--enable-recovery");
  const char* moved = std::getenv("KTUNE_TEST_CLI");
  argv.insert(argv.end(),
              {"/bin/sh", "-c",
               "\"$0\" \"$@\"; code=$?; echo \"rank $OMPI_COMM_WORLD_RANK exit $code\"; "
               "exit $code",
               moved && *moved ? moved : KTUNE_CLI, "--cache-dir", cache.string()});
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--distributed");
  ProcessOptions options;
  options.timeout = std::chrono::minutes(3);
  options.max_output_bytes = 4 << 20;
  auto r = run_process(argv, options);
  if (!r) return {-1, r.error().message};
  return {r->timed_out ? -2 : r->exit_code, r->output};
}

void expect_same(const Picks& single, const Picks& distributed) {
  EXPECT_EQ(distributed.winner, single.winner);
  EXPECT_EQ(distributed.outcomes, single.outcomes);
}

TEST(MpiTune, ProblemsShardedOverTwoRanksEqualASingleRun) {
  REQUIRE_MPIRUN(mpirun);
  ScratchDir one, two;
  const CliResult single = run_cli(one.path(), tune_args("mpi/problems.yaml"));
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const CliResult r = run_mpi(mpirun, 2, two.path(), tune_args("mpi/problems.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("problems sharded over the ranks"));
  EXPECT_THAT(r.output, HasSubstr("tuned on rank 1"));
  EXPECT_THAT(r.output, HasSubstr("Tuned 4 problem(s)"));
  EXPECT_THAT(r.output, HasSubstr("rank 0 exit 0"));
  EXPECT_THAT(r.output, HasSubstr("rank 1 exit 0"));
  // Every rank ends with rank 0's picks.
  EXPECT_THAT(r.output, HasSubstr("ktune: rank 1: the picks from rank 0 (4): scale_WORK1_WRONG0, "
                                  "scale_WORK1_WRONG0, scale_WORK1_WRONG0, scale_WORK1_WRONG0"));
  const Picks s = exported(one.path());
  ASSERT_EQ(s.winner.size(), 4u);
  expect_same(s, exported(two.path()));
  // The second run is answered by rank 0 from the tuning cache.
  const CliResult again = run_mpi(mpirun, 2, two.path(), tune_args("mpi/problems.yaml"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("(4 from the tuning cache)"));
}

TEST(MpiTune, CandidatesOfOneProblemShardedOverFourRanksEqualASingleRun) {
  REQUIRE_MPIRUN(mpirun);
  ScratchDir one, four;
  const CliResult single = run_cli(one.path(), tune_args("mpi/candidates.yaml"));
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const CliResult r = run_mpi(mpirun, 4, four.path(), tune_args("mpi/candidates.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("each problem's candidates sharded over the ranks"));
  // Rank 0 resumed every rank's rows and decided between the close candidates itself.
  EXPECT_THAT(r.output, HasSubstr("resuming: 14 of 14 candidates already measured"));
  EXPECT_THAT(r.output, HasSubstr("decided on rank 0"));
  for (int rank = 1; rank < 4; ++rank) {
    EXPECT_THAT(r.output, HasSubstr(fmt::format("ktune: rank {}: the picks from rank 0 (1): "
                                                "scale_WORK1_WRONG0",
                                                rank)));
  }
  const Picks s = exported(one.path());
  ASSERT_EQ(s.winner.size(), 1u);
  ASSERT_EQ(s.outcomes.begin()->second.size(), 14u);
  expect_same(s, exported(four.path()));
}

TEST(MpiTune, ARankThatDiesLeavesTheOthersStoredAndNamesTheMissing) {
  REQUIRE_MPIRUN(mpirun);
  ScratchDir cache;
  ::setenv("KTUNE_TEST_MPI_DIE_RANK", "1", 1);
  const CliResult r =
      run_mpi(mpirun, 2, cache.path(), tune_args("mpi/problems.yaml"), /*recovery=*/true);
  ::unsetenv("KTUNE_TEST_MPI_DIE_RANK");
  // Rank 1 owned n16k and n256k (problems 1 and 3 of 4).
  EXPECT_THAT(r.output, HasSubstr("problems not tuned: n16k, n256k"));
  EXPECT_THAT(r.output, HasSubstr("rank 0 exit 1"));
  EXPECT_THAT(r.output, HasSubstr("rank 1 exit 3"));  // the test hook's _exit(3)
  // Rank 0's problems are stored whole; nothing of the others.
  // (The first run's output with any failure below: once in CI (2026-11-25) only one of rank 0's
  // two problems was found stored, and the output that would say why was not printed.)
  const Picks p = exported(cache.path());
  EXPECT_EQ(p.winner.size(), 2u) << r.output;
  for (const auto& [key, outcomes] : p.outcomes) EXPECT_EQ(outcomes.size(), 4u) << key;
  // The rerun (all ranks alive) tunes only the missing two.
  const CliResult again = run_mpi(mpirun, 2, cache.path(), tune_args("mpi/problems.yaml"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("2 problem(s) to tune, 2 from the tuning cache"))
      << "the first run:\n"
      << r.output;
  EXPECT_EQ(exported(cache.path()).winner.size(), 4u);
}

}  // namespace
}  // namespace ktune::test
