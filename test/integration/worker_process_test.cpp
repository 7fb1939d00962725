// Worker and WorkerPool with real processes: finding ktune-worker, start and stop, starts that
// fail (no answer, early exit, missing program), and every way a candidate can lose its worker
// (crash, hang, SIGSTOP, exit, a flood of output, runaway memory, CPU time, closed protocol
// pipes), each costing that candidate alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ktune/backend/cpu_backend.h"
#include "support/cli_run.h"
#include "worker/worker.h"

namespace ktune::test {
namespace {

using namespace std::chrono_literals;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// One kernel whose behaviour the `mode` argument picks, so that it is compiled once.
enum Mode { kCopy, kSegfault, kSpin, kStop, kExit, kFlood, kHog, kClosePipes };
constexpr const char* kKernel = R"(
#include <unistd.h>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
void k(float* out, const float* in, int n, int mode) {
  static volatile std::uintptr_t bad_address = 8;
  static bool flooded = false;
  static char line[1024];
  switch (mode) {
    case 1: *reinterpret_cast<volatile int*>(bad_address) = 1; break;
    case 2: for (volatile int i = 0;; i = i + 1) {} break;
    case 3: std::raise(SIGSTOP); break;
    case 4: std::exit(0);
    case 5:
      if (flooded) break;
      flooded = true;
      std::memset(line, 'x', sizeof line - 1);
      line[sizeof line - 1] = '\n';
      for (int i = 0; i < 20 * 1024; ++i) std::fwrite(line, 1, sizeof line, stdout);
      std::puts("flood done");
      break;
    case 6:  // 2 GiB at most, should the watchdog miss it
      for (int i = 0; i < 32; ++i) {
        char* p = static_cast<char*>(std::malloc(64 << 20));
        if (p != nullptr) std::memset(p, 1, 64 << 20);
      }
      break;
    case 7: close(3); close(4); break;
  }
  for (int i = 0; i < n; ++i) out[i] = in[i];
}
)";

// Sets (or unsets) an environment variable for one test, restoring it afterwards.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value != nullptr ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvGuard() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

WorkerOptions real_worker() {
  WorkerOptions o;
  o.executable = KTUNE_WORKER_EXE;
  return o;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// This process's children, from /proc (every thread's list: a child belongs to the thread that
// started it).
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "children");
    for (pid_t p = 0; in >> p;) out.push_back(p);
  }
  return out;
}

// A fake worker: a shell script that ignores --in-fd/--out-fd.
std::filesystem::path write_script(const std::filesystem::path& dir, const std::string& body) {
  const std::filesystem::path path = dir / "fake-worker.sh";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(FindWorkerExecutable, FollowsKtuneWorker) {
  {
    EnvGuard env("KTUNE_WORKER", KTUNE_WORKER_EXE);
    Result<std::filesystem::path> found = find_worker_executable();
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(*found, std::filesystem::path(KTUNE_WORKER_EXE));
  }
  EnvGuard env("KTUNE_WORKER", "/nonexistent/ktune-worker");
  Result<std::filesystem::path> found = find_worker_executable();
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(found.error().message, HasSubstr("/nonexistent/ktune-worker"));
}

TEST(Worker, StartsTheRealWorkerAndStopsIt) {
  EnvGuard env("KTUNE_WORKER", KTUNE_WORKER_EXE);  // found, not given
  Result<Worker> worker = Worker::start({});
  ASSERT_TRUE(worker) << worker.error().message;
  const pid_t pid = worker->pid();
  EXPECT_GT(pid, 0);
  EXPECT_TRUE(worker->alive());
  worker->stop();
  EXPECT_FALSE(worker->alive());
  EXPECT_TRUE(process_gone(pid));

  pid_t dropped = -1;
  {
    Result<Worker> other = Worker::start(real_worker());
    ASSERT_TRUE(other) << other.error().message;
    Worker moved = std::move(*other);
    dropped = moved.pid();
    EXPECT_TRUE(moved.alive());
  }
  EXPECT_TRUE(process_gone(dropped));  // the destructor reaped it
}

TEST(Worker, StartGivesUpOnAWorkerThatNeverAnswers) {
  ScratchDir dir("fake-silent");
  WorkerOptions o;
  o.executable = write_script(dir.path(), "echo starting; exec sleep 30");
  o.start_timeout = 200ms;
  o.term_grace = 100ms;
  const auto t0 = std::chrono::steady_clock::now();
  Result<Worker> worker = Worker::start(o);
  ASSERT_FALSE(worker);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // not the script's 30 s
  EXPECT_EQ(worker.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(worker.error().message, HasSubstr("no answer within 200 ms"));
  EXPECT_THAT(worker.error().message, HasSubstr("starting"));  // its output
}

TEST(Worker, StartReportsAnEarlyExitWithWhatTheChildSaw) {
  ScratchDir dir("fake-exit");
  EnvGuard omp("OMP_WAIT_POLICY", nullptr);
  EnvGuard blas("OPENBLAS_THREAD_TIMEOUT", "7");  // the user's value wins
  WorkerOptions o;
  o.executable = write_script(dir.path(), R"(
echo "args: $*"
echo "env: OMP=$OMP_WAIT_POLICY OB=$OPENBLAS_THREAD_TIMEOUT X=$KTUNE_TEST_VAR"
if read -r line; then echo "stdin had data"; else echo "stdin is empty"; fi
[ -p /dev/fd/3 ] && [ -p /dev/fd/4 ] && echo "protocol fds are pipes"
for fd in 5 6 7 8 9; do [ -e /proc/$$/fd/$fd ] && echo "leaked fd $fd"; done
exit 1)");
  o.env = {{"KTUNE_TEST_VAR", "hello"}};
  Result<Worker> worker = Worker::start(o);
  ASSERT_FALSE(worker);
  const std::string& m = worker.error().message;
  EXPECT_EQ(worker.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(m, HasSubstr("exited with status 1 before the pong"));
  EXPECT_THAT(m, HasSubstr("args: --in-fd 3 --out-fd 4"));
  EXPECT_THAT(m, HasSubstr("env: OMP=passive OB=7 X=hello"));
  EXPECT_THAT(m, HasSubstr("stdin is empty"));
  EXPECT_THAT(m, HasSubstr("protocol fds are pipes"));
  EXPECT_THAT(m, Not(HasSubstr("leaked fd")));
}

TEST(Worker, StartNamesAProgramThatCannotRun) {
  ScratchDir dir("fake-missing");
  WorkerOptions o;
  o.executable = dir.path() / "missing";
  Result<Worker> worker = Worker::start(o);
  ASSERT_FALSE(worker);
  EXPECT_EQ(worker.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(worker.error().message, HasSubstr("missing: cannot execute it"));
  WorkerPool pool(o);
  Result<BenchmarkResponse> r = pool.run({}, 1s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
}

// Writes `payload` as one protocol frame (4-byte little-endian length, then the bytes).
void write_frame_file(const std::filesystem::path& path, const std::string& payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  const char length[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                          static_cast<char>((n >> 16) & 0xff), static_cast<char>(n >> 24)};
  std::ofstream(path, std::ios::binary).write(length, 4) << payload;
}

// A well-formed response that does not echo the request's nonce (here: written by a script that
// never read the request) is a forged answer, whatever it says.
TEST(Worker, AResponseWithoutTheNonceIsForged) {
  ScratchDir dir("fake-wrong-id");
  write_frame_file(dir.path() / "pong.bin", encode_pong(1));
  BenchmarkResponse wrong;
  wrong.id = 99;
  write_frame_file(dir.path() / "response.bin", encode_response(wrong));
  WorkerOptions o;
  o.term_grace = 100ms;
  o.executable = write_script(dir.path(), "cd " + dir.path().string() +
                                              " && cat pong.bin >&4 && head -c 1 <&3 >/dev/null"
                                              " && cat response.bin >&4 && exec sleep 30");
  Result<Worker> worker = Worker::start(o);
  ASSERT_TRUE(worker) << worker.error().message;
  BenchmarkRequest request;
  request.id = 7;
  BenchmarkResponse r = worker->run(request, 10s);
  EXPECT_EQ(r.outcome, Outcome::kCrashed);
  EXPECT_EQ(r.id, 7u);
  EXPECT_THAT(r.message, HasSubstr("forged worker answer"));
  EXPECT_THAT(r.message, HasSubstr("without this request's nonce"));
  EXPECT_FALSE(worker->alive());
}

// A fake worker that reads the ping (19 bytes) and the request, takes its nonce and answers with
// `response` (JSON with NONCE in place of the nonce), `times` times.
std::filesystem::path write_nonce_echoing_script(const ScratchDir& dir, const std::string& response,
                                                 int times) {
  write_frame_file(dir.path() / "pong.bin", encode_pong(1));
  std::ofstream(dir.path() / "response.json") << response;
  return write_script(dir.path(), "cd " + dir.path().string() +
                                      R"SH( && head -c 19 <&3 >/dev/null && cat pong.bin >&4
len=$(head -c 4 <&3 | od -An -tu4 | tr -d ' ')
nonce=$(head -c "$len" <&3 | sed -n 's/.*"nonce":"\([0-9a-f]*\)".*/\1/p')
body=$(sed "s/NONCE/$nonce/" response.json)
n=${#body}
lo=$(printf %03o $((n % 256)))
hi=$(printf %03o $((n / 256)))
times=$(seq )SH" + std::to_string(times) +
                                      R"SH()
# Builtins only from here: a command run as a child would be a process left behind.
for i in $times; do
  printf "\\$lo\\$hi\\000\\000" >&4
  printf '%s' "$body" >&4
done
exec sleep 30)SH");
}

// The nonce is right, but 100 runs of 1 s each cannot fit in the milliseconds the exchange took
// on the parent's clock.
TEST(Worker, TimesThatDoNotFitTheWallTimeAreForged) {
  ScratchDir dir("fake-impossible-times");
  WorkerOptions o;
  o.term_grace = 100ms;
  o.executable = write_nonce_echoing_script(
      dir,
      R"({"type":"response","id":7,"nonce":"NONCE","outcome":"ok","message":"",)"
      R"("output_tail":"","restart":false,"stats":{"median_ns":1e9,"min_ns":1e9,)"
      R"("max_ns":1e9,"mad_ns":0,"runs":100}})",
      1);
  Result<Worker> worker = Worker::start(o);
  ASSERT_TRUE(worker) << worker.error().message;
  BenchmarkRequest request;
  request.id = 7;
  BenchmarkResponse r = worker->run(request, 10s);
  EXPECT_EQ(r.outcome, Outcome::kCrashed) << r.message;
  EXPECT_THAT(r.message, HasSubstr("forged worker answer"));
  EXPECT_THAT(r.message, HasSubstr("of the parent's wall time")) << r.output_tail;
  EXPECT_FALSE(r.stats);
  EXPECT_FALSE(worker->alive());
}

// A second frame for one request (here: the same, echoing the nonce) is a forged answer of this
// request, not a protocol error charged to the next one.
TEST(Worker, ASecondAnswerToOneRequestIsForged) {
  ScratchDir dir("fake-second-answer");
  WorkerOptions o;
  o.term_grace = 100ms;
  o.executable = write_nonce_echoing_script(
      dir,
      R"({"type":"response","id":7,"nonce":"NONCE","outcome":"ok","message":"",)"
      R"("output_tail":"","restart":false})",
      2);
  Result<Worker> worker = Worker::start(o);
  ASSERT_TRUE(worker) << worker.error().message;
  BenchmarkRequest request;
  request.id = 7;
  BenchmarkResponse r = worker->run(request, 10s);
  // Both frames may arrive in one read or in two: either way the second is seen, at once or
  // before the next request.
  if (r.outcome == Outcome::kOk) {
    std::this_thread::sleep_for(100ms);
    std::string why;
    EXPECT_FALSE(worker->fit_for_next(&why));
    EXPECT_THAT(why, HasSubstr("between requests"));
  } else {
    EXPECT_EQ(r.outcome, Outcome::kCrashed);
    EXPECT_THAT(r.message, HasSubstr("forged worker answer"));
    EXPECT_THAT(r.message, HasSubstr("after its answer to one request"));
  }
}

// A worker of another build answers the ping with its own protocol version: the parent refuses
// it before any request, naming both versions, and stops it.
TEST(Worker, StartRefusesAWorkerOfAnotherProtocolVersion) {
  ScratchDir dir("fake-other-protocol");
  const struct {
    const char* pong;
    const char* names;
  } cases[] = {
      {R"({"type":"pong","pid":1,"protocol":999,"version":"9.9.9"})",
       "speaks worker protocol 999 (ktune 9.9.9)"},
      // From before the protocol was versioned: no "protocol" field at all.
      {R"({"type":"pong","pid":1,"version":"0.1.0"})", "speaks worker protocol 0 (ktune 0.1.0)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pong);
    write_frame_file(dir.path() / "pong.bin", c.pong);
    WorkerOptions o;
    o.term_grace = 100ms;
    o.executable = write_script(
        dir.path(), "cd " + dir.path().string() + " && cat pong.bin >&4 && exec sleep 30");
    const auto t0 = std::chrono::steady_clock::now();
    Result<Worker> worker = Worker::start(o);
    ASSERT_FALSE(worker);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // stopped, not waited for
    EXPECT_EQ(worker.error().code, ErrorCode::kUnavailable);
    EXPECT_THAT(worker.error().message, HasSubstr(c.names));
    EXPECT_THAT(worker.error().message,
                HasSubstr("this ktune speaks protocol " + std::to_string(kWorkerProtocolVersion) +
                          " (ktune "));
  }
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);  // both fake workers were reaped
  EXPECT_EQ(errno, ECHILD);
}

// Real requests to the real worker, with the test kernel compiled once into a shared code cache.
class WorkerRun : public ::testing::Test {
 protected:
  void SetUp() override {
    CpuCompileOptions o;
    o.flags = {"-O1", "-shared", "-fPIC"};
    Result<CpuBackend> backend = CpuBackend::create(o, KTUNE_BINARY_DIR "/test-worker-cache");
    ASSERT_TRUE(backend) << backend.error().message;
    KernelSource source;
    source.name = "worker_test_kernel";
    source.code = kKernel;
    source.entry = "k";
    source.signature = problem(kCopy).signature();
    Result<Artifact> artifact = backend->compile(source);
    ASSERT_TRUE(artifact) << artifact.error().message;
    artifact_ = artifact->path;
  }

  // Every worker, lost or stopped, has been reaped: this process has no child left.
  void TearDown() override {
    worker_.reset();
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
  }

  static Problem problem(Mode mode) {
    constexpr int kN = 1024;
    Problem p;
    p.op = "copy";
    p.name = "mode=" + std::to_string(mode);
    const TensorSpec vec = TensorSpec::contiguous(DType::kF32, {kN});
    p.args = {{{"out", ArgRole::kOut, DType::kF32}, vec, {}},
              {{"in", ArgRole::kIn, DType::kF32}, vec, {}},
              {{"n", ArgRole::kScalar, DType::kI32}, {}, std::int64_t{kN}},
              {{"mode", ArgRole::kScalar, DType::kI32}, {}, std::int64_t{mode}}};
    return p;
  }

  BenchmarkRequest request(Mode mode) {
    BenchmarkRequest r;
    r.id = next_id_++;
    r.candidate = "k_mode" + std::to_string(mode);
    r.launch.artifact = artifact_;
    r.problem = problem(mode);
    r.seed = 42;
    r.bench.budget_ms = 2;
    r.bench.max_runs = 5;
    return r;
  }

  // Runs one request on a fresh worker; the worker is left in `worker_`.
  BenchmarkResponse run_one(Mode mode, WorkerOptions o, std::chrono::milliseconds deadline) {
    Result<Worker> started = Worker::start(o);
    EXPECT_TRUE(started) << started.error().message;
    if (!started) return {};
    worker_ = std::move(*started);
    pid_ = worker_->pid();
    const BenchmarkRequest req = request(mode);
    BenchmarkResponse r = worker_->run(req, deadline);
    EXPECT_EQ(r.id, req.id);
    return r;
  }

  std::filesystem::path artifact_;
  std::uint64_t next_id_ = 1;
  std::optional<Worker> worker_;
  pid_t pid_ = -1;
};

TEST_F(WorkerRun, CorrectKernelIsVerifiedAndMeasured) {
  BenchmarkResponse r = run_one(kCopy, real_worker(), 30s);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  ASSERT_TRUE(r.stats.has_value());
  EXPECT_GE(r.stats->runs, 3);
  EXPECT_GT(r.stats->median_ns, 0);
  EXPECT_TRUE(worker_->alive());
  const BenchmarkRequest again = request(kCopy);  // the same worker answers again
  BenchmarkResponse second = worker_->run(again, 30s);
  EXPECT_EQ(second.outcome, Outcome::kOk) << second.message;
  EXPECT_EQ(second.id, again.id);
  EXPECT_EQ(worker_->pid(), pid_);
}

TEST_F(WorkerRun, SegfaultIsACrashNamingTheSignal) {
  BenchmarkResponse r = run_one(kSegfault, real_worker(), 30s);
  EXPECT_EQ(r.outcome, Outcome::kCrashed);
  EXPECT_THAT(r.message, HasSubstr("killed by SIGSEGV"));
  EXPECT_THAT(r.message, HasSubstr("k_mode1"));
  EXPECT_FALSE(worker_->alive());
  EXPECT_TRUE(process_gone(pid_));
  EXPECT_EQ(worker_->run(request(kCopy), 30s).outcome, Outcome::kCrashed);  // no worker left
}

TEST_F(WorkerRun, PoolReplacesALostWorkerForTheNextCandidate) {
  WorkerPool pool(real_worker());
  Result<BenchmarkResponse> crashed = pool.run(request(kSegfault), 30s);
  ASSERT_TRUE(crashed) << crashed.error().message;
  EXPECT_EQ(crashed->outcome, Outcome::kCrashed);
  EXPECT_EQ(pool.restarts(), 0);
  const BenchmarkRequest next = request(kCopy);
  Result<BenchmarkResponse> ok = pool.run(next, 30s);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->outcome, Outcome::kOk) << ok->message;
  EXPECT_EQ(ok->id, next.id);
  EXPECT_EQ(pool.restarts(), 1);
  ASSERT_TRUE(pool.run(request(kCopy), 30s));
  EXPECT_EQ(pool.restarts(), 1);  // a live worker is kept
  pool.shutdown();
}

TEST_F(WorkerRun, InfiniteLoopTimesOutAndIsKilled) {
  WorkerOptions o = real_worker();
  o.term_grace = 200ms;
  const auto t0 = std::chrono::steady_clock::now();
  BenchmarkResponse r = run_one(kSpin, o, 300ms);
  // A bound on liveness, not a speed: deadline + grace, with slack for a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 300ms + 200ms + 5s);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_THAT(r.message, HasSubstr("no answer within 300 ms"));
  EXPECT_FALSE(worker_->alive());
  EXPECT_TRUE(process_gone(pid_));
}

TEST_F(WorkerRun, StoppedWorkerTimesOutAndIsKilled) {
  BenchmarkResponse r = run_one(kStop, real_worker(), 300ms);
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_FALSE(worker_->alive());
  EXPECT_TRUE(process_gone(pid_));
}

TEST_F(WorkerRun, ExitInTheKernelIsACrash) {
  BenchmarkResponse r = run_one(kExit, real_worker(), 30s);
  EXPECT_EQ(r.outcome, Outcome::kCrashed);
  EXPECT_THAT(r.message, HasSubstr("exited with status 0 during the run"));
  EXPECT_FALSE(worker_->alive());
}

TEST_F(WorkerRun, FloodOfOutputKeepsOnlyTheTail) {
  WorkerOptions o = real_worker();
  o.output_tail_bytes = 4096;
  BenchmarkResponse r = run_one(kFlood, o, 60s);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_LE(r.output_tail.size(), 4096u);
  EXPECT_THAT(r.output_tail, HasSubstr("flood done"));
  EXPECT_TRUE(worker_->alive());
}

TEST_F(WorkerRun, MemoryWatchdogKillsARunawayKernel) {
  WorkerOptions o = real_worker();
  o.memory_limit_bytes = std::size_t{512} << 20;
  BenchmarkResponse r = run_one(kHog, o, 60s);
  EXPECT_EQ(r.outcome, Outcome::kResourceExhausted) << r.message;
  EXPECT_THAT(r.message, HasSubstr("limit 512 MiB"));
  EXPECT_FALSE(worker_->alive());
  EXPECT_TRUE(process_gone(pid_));
}

TEST_F(WorkerRun, CpuTimeLimitEndsASpinningKernel) {
  WorkerOptions o = real_worker();
  o.cpu_limit_s = 1;
  BenchmarkResponse r = run_one(kSpin, o, 30s);
  EXPECT_EQ(r.outcome, Outcome::kResourceExhausted) << r.message;
  EXPECT_THAT(r.message, HasSubstr("SIGXCPU"));
}

// Released (WorkerOptions::wait_at_shutdown false, as the CLI does): not waited for, the
// worker ends by itself once its input is closed, with a normal exit.
bool exits_normally_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  return got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(WorkerRun, AReleasedWorkerExitsByItself) {
  BenchmarkResponse r = run_one(kCopy, real_worker(), 30s);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  worker_->release();
  EXPECT_FALSE(worker_->alive());
  EXPECT_EQ(worker_->pid(), -1);
  EXPECT_TRUE(exits_normally_within(pid_, 20s));
}

// The pool's shutdown releases an idle, clean worker: not waited for, it exits by itself.
TEST_F(WorkerRun, PoolShutdownWithoutWaitingLeavesNothingRunning) {
  WorkerOptions o = real_worker();
  o.wait_at_shutdown = false;
  WorkerPool pool(o);
  Result<BenchmarkResponse> ok = pool.run(request(kCopy), 30s);
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->outcome, Outcome::kOk) << ok->message;
  const std::vector<pid_t> children = own_children();
  ASSERT_EQ(children.size(), 1u);
  pool.shutdown();
  EXPECT_TRUE(exits_normally_within(children[0], 20s));
}

TEST_F(WorkerRun, ClosingTheProtocolPipesIsACrash) {
  BenchmarkResponse r = run_one(kClosePipes, real_worker(), 30s);
  EXPECT_EQ(r.outcome, Outcome::kCrashed);
  // The protocol's descriptors are no longer 3 and 4: the candidate closed the decoys.
  EXPECT_THAT(r.message, HasSubstr("tampered with the worker's descriptors"));
  EXPECT_FALSE(worker_->alive());
  EXPECT_TRUE(process_gone(pid_));
}

}  // namespace
}  // namespace ktune::test
