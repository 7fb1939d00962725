// The request flow on the CUDA device: without a GPU, a clear kUnsupported answer and a worker that
// keeps serving; with one, planted kernels (test/data/cuda/) for each outcome the handler must tell
// apart: a correct kernel timed (with and without a CUDA graph), a write past the end of C, a
// write into an input, half of C unwritten, a bad launch configuration, an illegal address
// (through a worker, whose context it destroys), and a cuBLAS reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "core/cuda_driver.h"
#include "device/cuda/cuda_check.h"
#include "ktune/backend/cuda_backend.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"
#include "worker/device_handler.h"
#include "worker/worker.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kN = 1000;  // not a multiple of the block, so the bound check matters
constexpr std::chrono::milliseconds kDeadline{60'000};

// C[n] = A[n] + B[n] in f32 on the GPU, then N.
Problem add_problem(std::int64_t n = kN) {
  const Device gpu{DeviceKind::kCuda, 0};
  Problem p;
  p.op = "add";
  p.name = "N=" + std::to_string(n);
  p.args.push_back({KernelParam{"C", ArgRole::kOut, DType::kF32},
                    TensorSpec::contiguous(DType::kF32, {n}, gpu), std::int64_t{0}});
  p.args.push_back({KernelParam{"A", ArgRole::kIn, DType::kF32},
                    TensorSpec::contiguous(DType::kF32, {n}, gpu), std::int64_t{0}});
  p.args.push_back({KernelParam{"B", ArgRole::kIn, DType::kF32},
                    TensorSpec::contiguous(DType::kF32, {n}, gpu), std::int64_t{0}});
  p.args.push_back({KernelParam{"N", ArgRole::kScalar, DType::kI32}, TensorSpec{}, n});
  return p;
}

BenchOptions quick_bench() {
  BenchOptions b;
  b.warmup_runs = 1;
  b.budget_ms = 5;
  b.min_runs = 3;
  b.max_runs = 20;
  return b;
}

BenchmarkRequest request_for(LaunchSpec launch, std::optional<LaunchSpec> reference = {},
                             std::int64_t n = kN) {
  BenchmarkRequest r;
  r.id = 7;
  r.candidate = launch.entry.empty() ? launch.library : launch.entry;
  r.launch = std::move(launch);
  r.problem = add_problem(n);
  r.seed = 42;
  r.reference = std::move(reference);
  r.bench = quick_bench();
  return r;
}

LaunchSpec missing_cubin() {
  LaunchSpec l;
  l.kind = LaunchKind::kCudaCubin;
  l.artifact = "/nonexistent/ktune-test.cubin";
  l.entry = "add";
  return l;
}

WorkerOptions worker_options() {
  WorkerOptions o;
  o.executable = worker_exe();
  return o;
}

TEST(CudaHandler, WithoutAGpuEveryRequestIsUnsupportedAndSaysWhy) {
  Result<const CudaDriver*> driver = cuda_driver();
  if (driver) GTEST_SKIP() << "[SKIP] a GPU is present: the no-GPU answer cannot be seen here";
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);

  BenchmarkResponse r = handler->serve(request_for(missing_cubin()));
  EXPECT_EQ(r.id, 7u);
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("add: cannot run on the CUDA device: "));
  EXPECT_THAT(r.message, HasSubstr(driver.error().message));
  EXPECT_FALSE(r.restart);
  EXPECT_FALSE(r.stats);

  // The same answer for a library call, and again: the handler keeps serving.
  LaunchSpec cublas;
  cublas.kind = LaunchKind::kCudaLibrary;
  cublas.library = "cublas";
  cublas.bind = {0, 1, 2, 3, 3, 3};
  r = handler->serve(request_for(cublas, missing_cubin()));
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr(driver.error().message));
  EXPECT_FALSE(r.restart);
}

// The kernels that check large problems on the GPU compile for Ampere and Hopper (no GPU needed).
TEST(CudaHandler, CheckingKernelsCompileForSm80AndSm90a) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    Result<std::string> cubin = CudaChecker::compile(arch);
    ASSERT_TRUE(cubin) << arch << ": " << cubin.error().message;
    EXPECT_GT(cubin->size(), 1000u) << arch;
  }
}

TEST(CudaHandler, CreatedAndDestroyedUnusedTouchesNothing) {
  // The handler opens the driver on its first request only; unused, it has nothing to release.
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  handler.reset();
  SUCCEED();
}

TEST(CudaHandler, TheWorkerAnswersAMissingCubinAndStaysAlive) {
  // Without a GPU: kUnsupported naming the driver; with one: kLoadError naming the cubin.
  // Either way the worker answers (no crash) and serves the next request.
  Result<Worker> worker = Worker::start(worker_options());
  ASSERT_TRUE(worker) << worker.error().message;
  const bool gpu = cuda_driver().has_value();
  for (int i = 0; i < 2; ++i) {
    BenchmarkResponse r = worker->run(request_for(missing_cubin()), kDeadline);
    EXPECT_EQ(r.outcome, gpu ? Outcome::kLoadError : Outcome::kUnsupported) << r.message << "\n"
                                                                            << r.output_tail;
    EXPECT_THAT(r.message,
                HasSubstr(gpu ? "cannot load the cubin" : "cannot run on the CUDA device"));
    EXPECT_FALSE(r.restart);
    EXPECT_TRUE(worker->alive());
  }
}

// Tests that need a GPU: the planted kernels, compiled by NVRTC for the GPU's architecture.
class CudaHandlerGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<const CudaDriver*> driver = cuda_driver();
    if (!driver) GTEST_SKIP() << "[SKIP] no GPU: " << driver.error().message;
    Result<CudaBackend> backend = CudaBackend::create({.arch = ""}, cache_.path());
    ASSERT_TRUE(backend) << backend.error().message;
    backend_.emplace(std::move(*backend));
  }

  // test/data/cuda/<entry>.cu compiled, launched over n elements in blocks of 256 (one more
  // thread than elements, at least: the past-the-end writer needs it).
  LaunchSpec kernel(const std::string& entry, std::int64_t n = kN) {
    const std::filesystem::path file = data_path("cuda/" + entry + ".cu");
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    KernelSource source;
    source.name = entry;
    source.code = text.str();
    source.entry = entry;
    source.signature = add_problem().signature();
    Result<Artifact> artifact = backend_->compile(source);
    EXPECT_TRUE(artifact) << artifact.error().message;
    LaunchSpec l;
    l.kind = LaunchKind::kCudaCubin;
    l.artifact = artifact ? artifact->path : std::filesystem::path();
    l.entry = entry;
    l.grid = {static_cast<std::uint64_t>((n + 1 + 255) / 256), 1, 1};
    l.block = {256, 1, 1};
    return l;
  }

  TempDir cache_{"cuda-handler"};
  std::optional<CudaBackend> backend_;
};

TEST_F(CudaHandlerGpu, CorrectKernelPassesAgainstACubinReferenceAndIsTimed) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  const LaunchSpec add = kernel("add");
  BenchmarkResponse r = handler->serve(request_for(add, add));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_FALSE(r.restart);
  ASSERT_TRUE(r.stats);
  EXPECT_GE(r.stats->runs, 3);
  EXPECT_LE(r.stats->runs, 20);
  EXPECT_GT(r.stats->median_ns, 0);
  EXPECT_LE(r.stats->min_ns, r.stats->median_ns);
  std::printf("add N=%lld: median %.2f us over %d runs\n", static_cast<long long>(kN),
              r.stats->median_ns / 1e3, r.stats->runs);

  // A graph of 8 calls per sample: captured (no fallback note), timed per call.
  BenchmarkRequest graphed = request_for(add, add);
  graphed.bench.graph_calls = 8;
  r = handler->serve(graphed);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(r.message, "");
  ASSERT_TRUE(r.stats);
  EXPECT_GT(r.stats->median_ns, 0);
  std::printf("add N=%lld, graph of 8: median %.2f us a call over %d runs\n",
              static_cast<long long>(kN), r.stats->median_ns / 1e3, r.stats->runs);

  // Verify only, and with no reference at all (poison and NaN checks alone).
  BenchmarkRequest verify_only = request_for(add);
  verify_only.measure = false;
  r = handler->serve(verify_only);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_FALSE(r.stats);
}

TEST_F(CudaHandlerGpu, WritePastTheEndIsARedzoneViolationAndTheContextSurvives) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  const LaunchSpec add = kernel("add");
  BenchmarkResponse r = handler->serve(request_for(kernel("add_past_end"), add));
  EXPECT_EQ(r.outcome, Outcome::kRedzoneViolation) << r.message;
  EXPECT_EQ(r.message, "wrote outside the buffer of C (after the end)");
  EXPECT_FALSE(r.restart);
  EXPECT_FALSE(r.stats);

  r = handler->serve(request_for(add, add));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
}

TEST_F(CudaHandlerGpu, WriteIntoAnInputIsInputModified) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  BenchmarkResponse r = handler->serve(request_for(kernel("add_writes_input"), kernel("add")));
  EXPECT_EQ(r.outcome, Outcome::kInputModified) << r.message;
  EXPECT_EQ(r.message, "wrote into input A");
}

TEST_F(CudaHandlerGpu, HalfWrittenOutputIsUnwritten) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  // Against the reference: compare() sees the poison first.
  BenchmarkResponse r = handler->serve(request_for(kernel("add_half_written"), kernel("add")));
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_THAT(r.message, HasSubstr("output C: "));
  // Without one: the poison check alone, with candidate_check's message.
  r = handler->serve(request_for(kernel("add_half_written")));
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  EXPECT_EQ(r.message, "output C: element 500 was never written");
}

// Past 4 MiB of buffers the handler checks inputs and outputs on the GPU (device/cuda/cuda_check.h)
// and reads back only to explain a failure: the verdicts and messages are those of the host.
TEST_F(CudaHandlerGpu, LargeProblemsAreCheckedOnTheGpuWithTheHostsVerdicts) {
  constexpr std::int64_t n = (std::int64_t{1} << 20) + 3;  // 4 MiB a buffer, and a ragged end
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  const LaunchSpec add = kernel("add", n);
  BenchmarkResponse r = handler->serve(request_for(add, add, n));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  r = handler->serve(request_for(kernel("add_wrong_last", n), add, n));
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  EXPECT_THAT(r.message, HasSubstr("output C: 1 of 1048579 elements differ"));
  EXPECT_THAT(r.message, HasSubstr("first at [1048578]"));
  r = handler->serve(request_for(kernel("add_half_written", n), add, n));
  EXPECT_EQ(r.outcome, Outcome::kUnwrittenOutput) << r.message;
  r = handler->serve(request_for(kernel("add_writes_input", n), add, n));
  EXPECT_EQ(r.outcome, Outcome::kInputModified) << r.message;
  EXPECT_EQ(r.message, "wrote into input A");
  r = handler->serve(request_for(kernel("add_past_end", n), add, n));
  EXPECT_EQ(r.outcome, Outcome::kRedzoneViolation) << r.message;
  r = handler->serve(request_for(add, add, n));  // and the right one still passes after them
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
}

TEST_F(CudaHandlerGpu, BadLaunchConfigurationIsALaunchErrorWithoutRestart) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  LaunchSpec add = kernel("add");
  LaunchSpec too_wide = add;
  too_wide.block = {4096, 1, 1};  // more threads than a block may have
  BenchmarkResponse r = handler->serve(request_for(too_wide, add));
  EXPECT_EQ(r.outcome, Outcome::kLaunchError) << r.message;
  EXPECT_THAT(r.message, HasSubstr("cuLaunchKernel: CUDA_ERROR_INVALID_VALUE"));
  EXPECT_FALSE(r.restart);
  r = handler->serve(request_for(add, add));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
}

TEST_F(CudaHandlerGpu, MissingCubinIsALoadError) {
  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  BenchmarkResponse r = handler->serve(request_for(missing_cubin(), kernel("add")));
  EXPECT_EQ(r.outcome, Outcome::kLoadError) << r.message;
  EXPECT_THAT(r.message, HasSubstr("cannot load the cubin"));
}

TEST_F(CudaHandlerGpu, IllegalAddressRestartsTheWorkerAndTheNextOneServes) {
  // In a worker: the fault destroys the context of the process it happens in.
  WorkerPool pool(worker_options());
  const LaunchSpec add = kernel("add");
  Result<BenchmarkResponse> r =
      pool.run(request_for(kernel("add_illegal_address"), add), kDeadline);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->outcome, Outcome::kLaunchError) << r->message << "\n" << r->output_tail;
  EXPECT_THAT(r->message, HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(r->message, HasSubstr("the worker restarts"));
  EXPECT_TRUE(r->restart);

  r = pool.run(request_for(add, add), kDeadline);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->outcome, Outcome::kOk) << r->message << "\n" << r->output_tail;
  EXPECT_EQ(pool.restarts(), 1);

  // A fault while measuring (no verification first) restarts the worker too.
  BenchmarkRequest unverified = request_for(kernel("add_illegal_address"), add);
  unverified.verify = false;
  r = pool.run(unverified, kDeadline);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->outcome, Outcome::kLaunchError) << r->message << "\n" << r->output_tail;
  EXPECT_THAT(r->message, HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_TRUE(r->restart);
  r = pool.run(request_for(add, add), kDeadline);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->outcome, Outcome::kOk) << r->message << "\n" << r->output_tail;
  EXPECT_EQ(pool.restarts(), 2);
}

// Row-major C[m,n] = A[m,k] B[k,n]: C, A, B, M, N, K.
Problem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
  const Device gpu{DeviceKind::kCuda, 0};
  auto scalar = [](const char* name, std::int64_t v) {
    return ProblemArg{KernelParam{name, ArgRole::kScalar, DType::kI32}, TensorSpec{}, v};
  };
  Problem p;
  p.op = "matmul";
  p.name = "M=" + std::to_string(m) + ",N=" + std::to_string(n) + ",K=" + std::to_string(k);
  p.args.push_back({KernelParam{"C", ArgRole::kOut, dtype},
                    TensorSpec::contiguous(dtype, {m, n}, gpu), std::int64_t{0}});
  p.args.push_back({KernelParam{"A", ArgRole::kIn, dtype},
                    TensorSpec::contiguous(dtype, {m, k}, gpu), std::int64_t{0}});
  p.args.push_back({KernelParam{"B", ArgRole::kIn, dtype},
                    TensorSpec::contiguous(dtype, {k, n}, gpu), std::int64_t{0}});
  p.args.push_back(scalar("M", m));
  p.args.push_back(scalar("N", n));
  p.args.push_back(scalar("K", k));
  return p;
}

TEST_F(CudaHandlerGpu, CublasReferenceChecksCublasLtCandidates) {
  LaunchSpec cublas;
  cublas.kind = LaunchKind::kCudaLibrary;
  cublas.library = "cublas";
  cublas.bind = {0, 1, 2, 3, 4, 5};
  LaunchSpec lt = cublas;
  lt.library = "cublaslt";
  lt.algo = 0;

  std::unique_ptr<RequestFlow> handler = make_request_flow(DeviceKind::kCuda);
  struct Shape {
    std::int64_t m, n, k;
    DType dtype;
  };
  for (const Shape& s : {Shape{64, 48, 32, DType::kF32}, Shape{4096, 4096, 4096, DType::kBF16}}) {
    for (int graph_calls : {0, 4}) {
      BenchmarkRequest request = request_for(lt, cublas);
      request.problem = gemm_problem(s.m, s.n, s.k, s.dtype);
      request.bench.graph_calls = graph_calls;
      request.bench.budget_ms = 20;
      BenchmarkResponse r = handler->serve(request);
      if (r.outcome == Outcome::kUnsupported &&
          r.message.find("no reference") == std::string::npos) {
        GTEST_SKIP() << "[SKIP] cuBLASLt unavailable: " << r.message;
      }
      ASSERT_EQ(r.outcome, Outcome::kOk) << request.problem.name << ": " << r.message;
      ASSERT_TRUE(r.stats);
      EXPECT_GT(r.stats->median_ns, 0);
      // A note, if any, only says that the graph was not used.
      if (!r.message.empty()) {
        EXPECT_THAT(r.message, HasSubstr("without a CUDA graph"));
      }
      // For the reader of the GPU machine's log; never asserted.
      std::printf(
          "%s %s graph_calls=%d: median %.1f us (min %.1f, mad %.2f, %d runs), %.0f "
          "TFLOP/s%s%s\n",
          request.problem.name.c_str(), std::string(dtype_name(s.dtype)).c_str(), graph_calls,
          r.stats->median_ns / 1e3, r.stats->min_ns / 1e3, r.stats->mad_ns / 1e3, r.stats->runs,
          2.0 * s.m * s.n * s.k / r.stats->median_ns / 1e3, r.message.empty() ? "" : "; ",
          r.message.c_str());
    }
  }
}

}  // namespace
}  // namespace ktune::test
