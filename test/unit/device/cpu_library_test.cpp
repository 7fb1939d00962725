// OpenBLAS as a CPU library launch (LaunchKind::kCpuLibrary): the extern choice's LaunchSpec runs
// on the CPU device through the request flow, as a worker runs it, and gives what the choice's
// own function gives in ktune's process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "choice/openblas_library.h"
#include "device/cpu/cpu_device.h"
#include "device/serve.h"
#include "ktune/choice/extern_choice.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using Bind = std::vector<std::pair<std::string, std::string>>;

// C[m,n] = alpha A[m,k] op(B), B stored [n,k] when transposed; m, n, k = 5, 7, 3.
Problem gemm_problem(bool tb) {
  const DType f32 = DType::kF32;
  const std::vector<std::int64_t> b_sizes =
      tb ? std::vector<std::int64_t>{7, 3} : std::vector<std::int64_t>{3, 7};
  Problem p{"gemm", tb ? "nt" : "nn", {}};
  p.args = {{{"C", ArgRole::kOut, f32}, TensorSpec::contiguous(f32, {5, 7}), {}},
            {{"A", ArgRole::kIn, f32}, TensorSpec::contiguous(f32, {5, 3}), {}},
            {{"B", ArgRole::kIn, f32}, TensorSpec::contiguous(f32, b_sizes), {}}};
  for (auto [name, value] : {std::pair{"M", 5}, {"N", 7}, {"K", 3}}) {
    p.args.push_back({{name, ArgRole::kScalar, DType::kI64}, {}, ScalarValue{std::int64_t{value}}});
  }
  return p;
}

LaunchSpec openblas_launch(const Problem& problem, bool tb, const std::string& alpha) {
  Bind bind = {{"c", "C"},
               {"a", "A"},
               {"b", "B"},
               {"m", "M"},
               {"n", "N"},
               {"k", "K"},
               {"trans_b", tb ? "1" : "0"},
               {"alpha", alpha}};
  Result<ChoicePtr> choice = make_extern_choice({"openblas", "openblas.gemm", std::move(bind)});
  KTUNE_CHECK(choice.has_value());
  Result<LaunchSpec> spec = (*choice)->launch_spec(problem);
  KTUNE_CHECK(spec.has_value());
  return *spec;
}

class CpuLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Result<const OpenBlasLibrary*> lib = openblas_library(); !lib) {
      GTEST_SKIP() << "[SKIP] " << lib.error().message;
    }
  }
  static BenchmarkRequest request(const Problem& problem, LaunchSpec candidate,
                                  LaunchSpec reference) {
    BenchmarkRequest r;
    r.candidate = "openblas";
    r.launch = std::move(candidate);
    r.reference = std::move(reference);
    r.problem = problem;
    r.seed = 11;
    r.measure = false;
    return r;
  }
  RequestFlow flow_{make_cpu_device(), nullptr};
};

TEST_F(CpuLibraryTest, TheLaunchSpecNamesTheCallItsScalarsAndTheArguments) {
  const Problem p = gemm_problem(true);
  const LaunchSpec spec = openblas_launch(p, true, "0.5");
  EXPECT_EQ(spec.kind, LaunchKind::kCpuLibrary);
  EXPECT_EQ(spec.library, "openblas");
  EXPECT_EQ(spec.entry, "gemm NT alpha=0.5 beta=0");
  EXPECT_EQ(spec.bind, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST_F(CpuLibraryTest, ScalarsAndTransposesTravelInTheSpec) {
  for (bool tb : {false, true}) {
    const Problem p = gemm_problem(tb);
    // The same call verifies against itself; alpha = 2 against alpha = 1 does not.
    BenchmarkResponse r =
        flow_.serve(request(p, openblas_launch(p, tb, "1"), openblas_launch(p, tb, "1")));
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
    r = flow_.serve(request(p, openblas_launch(p, tb, "2"), openblas_launch(p, tb, "1")));
    EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  }
}

TEST_F(CpuLibraryTest, ASpecThatDoesNotFitTheProblemIsUnsupported) {
  const Problem p = gemm_problem(false);
  LaunchSpec bad = openblas_launch(p, false, "1");
  bad.bind.pop_back();
  BenchmarkResponse r = flow_.serve(request(p, bad, openblas_launch(p, false, "1")));
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("bind has 5 arguments; expected 6"));
  bad = openblas_launch(p, false, "1");
  bad.library = "mkl";
  r = flow_.serve(request(p, bad, openblas_launch(p, false, "1")));
  EXPECT_EQ(r.outcome, Outcome::kUnsupported) << r.message;
  EXPECT_THAT(r.message, HasSubstr("CPU library 'mkl': unknown"));
}

}  // namespace
}  // namespace ktune
