// run_worker_loop driven in-process over two pipes (ping, real kernels compiled by CpuBackend that
// are right, wrong against a reference file, or missing; the module cache; end of stream and
// a broken frame), and the real ktune-worker binary spawned with its protocol descriptors.
#include "worker/worker_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/candidate_check.h"
#include "core/unique_fd.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/tensor/problem_buffers.h"
#include "support/temp_dir.h"
#include "worker/worker_protocol.h"

extern char** environ;

namespace ktune {
namespace {

constexpr std::uint64_t kSeed = 1234;

// "add" with an optional deliberate error at element 7.
KernelSource add_source(bool wrong) {
  KernelSource src;
  src.name = wrong ? "add_wrong" : "add";
  src.code = R"(
void add(float* out, const float* a, const float* b, long n) {
  for (long i = 0; i < n; ++i) out[i] = a[i] + b[i] + (WRONG && i == 7 ? 1.0f : 0.0f);
}
)";
  src.entry = "add";
  src.signature = {{"out", ArgRole::kOut, DType::kF32},
                   {"a", ArgRole::kIn, DType::kF32},
                   {"b", ArgRole::kIn, DType::kF32},
                   {"n", ArgRole::kScalar, DType::kI64}};
  src.defines = {{"WRONG", wrong ? "1" : "0"}};
  return src;
}

Problem add_problem() {
  Problem p;
  p.op = "add";
  p.name = "n=256";
  const auto spec = TensorSpec::contiguous(DType::kF32, {256});
  for (const KernelParam& param : add_source(false).signature) {
    ProblemArg arg;
    arg.param = param;
    if (param.role == ArgRole::kScalar) {
      arg.scalar = std::int64_t{256};
    } else {
      arg.tensor = spec;
    }
    p.args.push_back(arg);
  }
  return p;
}

BenchmarkRequest add_request(std::uint64_t id, std::filesystem::path artifact) {
  BenchmarkRequest q;
  q.id = id;
  q.candidate = artifact.filename().string();
  q.launch.artifact = std::move(artifact);
  q.problem = add_problem();
  q.seed = kSeed;
  q.bench.warmup_runs = 1;
  q.bench.budget_ms = 1;
  q.bench.min_runs = 2;
  q.bench.max_runs = 5;
  return q;
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int to[2], from[2];
    ASSERT_EQ(::pipe(to), 0);
    ASSERT_EQ(::pipe(from), 0);
    to_worker_.reset(to[1]);
    from_worker_.reset(from[0]);
    worker_in_.reset(to[0]);
    // The loop's output end is closed when it returns, so that a test waiting for an answer
    // sees end of stream instead of hanging.
    loop_ = std::thread([this, out = from[1]] {
      exit_code_ = run_worker_loop(worker_in_.get(), out);
      ::close(out);
    });
  }
  void TearDown() override {
    to_worker_.reset();
    if (loop_.joinable()) loop_.join();
  }
  // Closes the request pipe and returns the loop's exit code.
  int finish() {
    to_worker_.reset();
    loop_.join();
    return exit_code_;
  }
  WorkerMessage exchange(const std::string& payload) {
    EXPECT_TRUE(write_frame(to_worker_.get(), payload).has_value());
    auto frame = read_frame(from_worker_.get());
    EXPECT_TRUE(frame.has_value()) << frame.error().message;
    auto m = decode_message(frame.value_or(""));
    EXPECT_TRUE(m.has_value()) << m.error().message;
    return m.value_or(WorkerMessage{});
  }
  BenchmarkResponse run(const BenchmarkRequest& q) {
    WorkerMessage m = exchange(encode_request(q));
    EXPECT_TRUE(m.response.has_value());
    return m.response.value_or(BenchmarkResponse{});
  }
  Artifact compile(bool wrong) {
    CpuCompileOptions o;
    o.flags = {"-O1", "-shared", "-fPIC"};
    auto backend = CpuBackend::create(o, dir_.path() / "cache");
    EXPECT_TRUE(backend.has_value()) << backend.error().message;
    auto artifact = backend->compile(add_source(wrong));
    EXPECT_TRUE(artifact.has_value()) << artifact.error().message;
    return artifact.value_or(Artifact{});
  }
  // The parent's half: the reference run in this process, its outputs written to a file.
  std::filesystem::path reference_file(const Artifact& correct) {
    auto module = load_cpu_module(correct.path);
    EXPECT_TRUE(module.has_value()) << module.error().message;
    Module* m = module->get();
    ProblemBuffers buffers = ProblemBuffers::create(add_problem(), kSeed);
    auto ref = run_reference([m](void* const* args) { return m->launch(args); }, buffers, nullptr);
    EXPECT_TRUE(ref.has_value()) << ref.error().message;
    const auto path = dir_.path() / "reference.bin";
    EXPECT_TRUE(write_reference_file(path, add_problem(), *ref).has_value());
    return path;
  }

  test::TempDir dir_;
  UniqueFd to_worker_, from_worker_, worker_in_;
  std::thread loop_;
  int exit_code_ = -1;
};

TEST_F(WorkerLoopTest, PingGetsPongWithOurPid) {
  WorkerMessage m = exchange(encode_ping());
  EXPECT_EQ(m.pong_pid, static_cast<int>(::getpid()));
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, CorrectKernelIsOkWithStats) {
  const Artifact good = compile(false);
  BenchmarkRequest q = add_request(7, good.path);
  q.expected = reference_file(good);
  BenchmarkResponse r = run(q);
  EXPECT_EQ(r.id, 7u);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  ASSERT_TRUE(r.stats.has_value());
  EXPECT_GE(r.stats->runs, 2);
  EXPECT_LE(r.stats->runs, 5);
  EXPECT_GT(r.stats->median_ns, 0);

  q.measure = false;  // verify only
  q.id = 8;
  r = run(q);
  EXPECT_EQ(r.id, 8u);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_FALSE(r.stats.has_value());
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, WrongKernelAgainstReferenceIsWrongResult) {
  const Artifact good = compile(false);
  const Artifact bad = compile(true);
  BenchmarkRequest q = add_request(9, bad.path);
  q.expected = reference_file(good);
  BenchmarkResponse r = run(q);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  EXPECT_TRUE(r.message.starts_with("output out: ")) << r.message;
  EXPECT_FALSE(r.stats.has_value());

  // Re-measuring skips the verification calls, but every timed run is still checked.
  q.verify = false;
  BenchmarkResponse unverified = run(q);
  EXPECT_EQ(unverified.outcome, Outcome::kWrongResult) << unverified.message;
  EXPECT_TRUE(
      unverified.message.starts_with("changed behaviour under timing: timed run 1 was "
                                     "wrong: output out: "))
      << unverified.message;
  EXPECT_FALSE(unverified.stats.has_value());

  q.verify = true;
  q.expected.clear();  // without a reference the error cannot be seen
  q.measure = false;
  EXPECT_EQ(run(q).outcome, Outcome::kOk);
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, MissingArtifactIsLoadError) {
  const auto missing = dir_.path() / "missing.so";
  BenchmarkResponse r = run(add_request(1, missing));
  EXPECT_EQ(r.outcome, Outcome::kLoadError);
  EXPECT_NE(r.message.find(missing.string()), std::string::npos) << r.message;
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, UnreadableReferenceIsUnsupportedNotTheCandidatesFault) {
  BenchmarkRequest q = add_request(2, compile(false).path);
  q.expected = dir_.path() / "no-reference.bin";
  BenchmarkResponse r = run(q);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported);
  EXPECT_NE(r.message.find("no-reference.bin"), std::string::npos) << r.message;
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, LoadedModulesAreKeptForTheProcess) {
  // A private copy, so that nothing else holds it open; once loaded, deleting the file must not
  // matter, because the worker does not open it again.
  const auto copy = dir_.path() / "copy.so";
  const auto original = compile(false).path;
  std::filesystem::copy_file(original, copy);
  // With its digest record: an artifact is loaded only when it matches one.
  std::filesystem::copy_file(original.string() + ".sha256", copy.string() + ".sha256");
  BenchmarkRequest q = add_request(3, copy);
  q.measure = false;
  ASSERT_EQ(run(q).outcome, Outcome::kOk);
  std::filesystem::remove(copy);
  BenchmarkResponse r = run(q);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(finish(), 0);
}

TEST_F(WorkerLoopTest, UndecodableFrameEndsTheLoopWith3) {
  ASSERT_TRUE(write_frame(to_worker_.get(), "{not json").has_value());
  auto frame = read_frame(from_worker_.get());  // no answer: end of stream
  EXPECT_FALSE(frame.has_value());
  EXPECT_EQ(finish(), 3);
}

TEST_F(WorkerLoopTest, EndOfStreamEndsTheLoopWith0) { EXPECT_EQ(finish(), 0); }

TEST(WorkerBinaryTest, SpawnedWorkerAnswersPingAndExitsOnEndOfStream) {
  int to[2], from[2];
  ASSERT_EQ(::pipe2(to, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(from, O_CLOEXEC), 0);
  UniqueFd to_worker(to[1]), from_worker(from[0]), child_in(to[0]), child_out(from[1]);
  // The child's ends are inherited under the same numbers; ours stay close-on-exec.
  ASSERT_EQ(::fcntl(child_in.get(), F_SETFD, 0), 0);
  ASSERT_EQ(::fcntl(child_out.get(), F_SETFD, 0), 0);
  const std::string in = std::to_string(child_in.get());
  const std::string out = std::to_string(child_out.get());
  std::vector<char*> argv = {const_cast<char*>(KTUNE_WORKER_EXE), const_cast<char*>("--in-fd"),
                             const_cast<char*>(in.c_str()),       const_cast<char*>("--out-fd"),
                             const_cast<char*>(out.c_str()),      nullptr};
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, KTUNE_WORKER_EXE, nullptr, nullptr, argv.data(), environ), 0);
  child_in.reset();
  child_out.reset();

  ASSERT_TRUE(write_frame(to_worker.get(), encode_ping()).has_value());
  auto frame = read_frame(from_worker.get());
  ASSERT_TRUE(frame.has_value()) << frame.error().message;
  auto m = decode_message(*frame);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->pong_pid, pid);

  to_worker.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(WorkerBinaryTest, BadUsageExits2) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--in-fd", "x", "--out-fd", "1"},
        std::vector<std::string>{"--in-fd", "0"}, std::vector<std::string>{"--frobnicate"}}) {
    std::vector<char*> argv = {const_cast<char*>(KTUNE_WORKER_EXE)};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    ASSERT_EQ(::posix_spawn(&pid, KTUNE_WORKER_EXE, nullptr, nullptr, argv.data(), environ), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << args[0];
  }
}

}  // namespace
}  // namespace ktune
