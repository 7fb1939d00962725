// A device that screens the reference's outputs where they are (CheckedBuffers::
// reference_passes) keeps them there: run_reference makes no host copy, the RMS comes from the
// device, and a candidate that fails the device's screen is compared on the host against the
// kept reference read back then (read_reference), with the usual message. Host memory stands in
// for the device here; the CUDA device is tested on the GPU machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "bench/candidate_check.h"
#include "device/host_problem.h"
#include "ktune/tensor/compare.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;

// Y[i] = 2 * X[i] over 1000 f32 elements; `wrong` writes element 7 off by 1.
Problem doubling() {
  Problem p{"double", "n=1000", {}};
  p.args = {{{"Y", ArgRole::kOut, DType::kF32}, TensorSpec::contiguous(DType::kF32, {1000}), {}},
            {{"X", ArgRole::kIn, DType::kF32}, TensorSpec::contiguous(DType::kF32, {1000}), {}}};
  return p;
}

Status run_doubling(ProblemBuffers& b, bool wrong) {
  auto* y = static_cast<float*>(b.args()[0]);
  const auto* x = static_cast<const float*>(b.args()[1]);
  for (int i = 0; i < 1000; ++i) y[i] = 2 * x[i] + (wrong && i == 7 ? 1.0f : 0.0f);
  return {};
}

// Host buffers that behave like a device keeping the reference: it screens the reference
// alone, keeps its outputs, compares candidates against them, and reads them back on demand.
class KeepingBuffers final : public HostProblem {
 public:
  KeepingBuffers(const Problem& problem, bool screens)
      : HostProblem(ProblemBuffers::create(problem, 3)), screens_(screens) {}
  ProblemBuffers& data() { return buffers(); }
  Status enqueue(const DeviceLaunch&) override { return {}; }
  Result<std::unique_ptr<SampleSource>> timer(const DeviceLaunch&, const BenchOptions&) override {
    return make_error(ErrorCode::kUnavailable, "not timed here");
  }

  Result<bool> reference_passes(std::vector<double>* rms) override {
    if (!screens_) return false;
    rms->assign(problem().args.size(), 0.0);
    (*rms)[0] = view_rms(problem().args[0].tensor, output(0));
    return true;
  }
  Status keep_outputs_as_reference() override {
    kept_ = data().buffer(0).clone();
    return {};
  }
  Result<bool> outputs_pass(const ReferenceOutputs& reference) override {
    if (kept_.bytes() == 0) return false;
    return compare(problem().args[0].tensor, output(0), kept_.data(), reference.tolerances[0])
               .outcome == Outcome::kOk;
  }
  Status read_reference(std::size_t arg, HostBuffer* out) override {
    EXPECT_EQ(arg, 0u);
    ++reads;
    *out = kept_.clone();
    return {};
  }
  int reads = 0;

 private:
  bool screens_;
  HostBuffer kept_;
};

TEST(KeptReference, ScreenedOnTheDeviceItStaysThereAndItsRmsComesFromThere) {
  KeepingBuffers device(doubling(), true);
  ProblemBuffers& b = device.data();
  ReferenceOutputs ref;
  CheckResult r = run_reference([&] { return run_doubling(b, false); }, device, std::nullopt, &ref);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  ASSERT_EQ(ref.outputs.size(), 2u);
  EXPECT_EQ(ref.outputs[0].bytes(), 0u) << "no host copy of a reference the device keeps";
  const double rms = view_rms(b.problem().args[0].tensor, b.buffer(0).data());
  EXPECT_GT(rms, 0.1);
  EXPECT_DOUBLE_EQ(reference_rms(b.problem(), ref, 0), rms);

  // A right candidate passes the device's screen: the reference never comes back.
  r = check_candidate([&] { return run_doubling(b, false); }, device, &ref);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(device.reads, 0);

  // A wrong one is compared on the host against the reference read back, and named.
  r = check_candidate([&] { return run_doubling(b, true); }, device, &ref);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  EXPECT_THAT(r.message, HasSubstr("output Y"));
  EXPECT_THAT(r.message, HasSubstr("7"));
  EXPECT_EQ(device.reads, 1);
}

TEST(KeptReference, WithoutTheDevicesScreenTheHostKeepsACopyAsBefore) {
  KeepingBuffers device(doubling(), false);
  ProblemBuffers& b = device.data();
  ReferenceOutputs ref;
  CheckResult r = run_reference([&] { return run_doubling(b, false); }, device, std::nullopt, &ref);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_EQ(ref.outputs[0].bytes(), b.buffer(0).bytes());
  EXPECT_TRUE(ref.rms.empty());
  EXPECT_DOUBLE_EQ(reference_rms(b.problem(), ref, 0),
                   view_rms(b.problem().args[0].tensor, b.buffer(0).data()));
  r = check_candidate([&] { return run_doubling(b, true); }, device, &ref);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.message;
  EXPECT_EQ(device.reads, 0) << "the host copy serves the comparison";
}

}  // namespace
}  // namespace ktune
