// check_candidate: runs a candidate once on reset buffers and checks everything ktune promises
// about a result: no write outside its buffers nor into the storage around an output's view
// (the gaps of a strided view, the prefix before its offset), inputs unchanged, every output
// element written, no NaN, and agreement with the reference within tolerance. check_run is the
// same checks of a run already made (the request flow's timed runs). The one verification of every
// device: a device supplies its buffers as CheckedBuffers (host memory, or a device's with
// redzones and pristine copies; src/device/), and may screen outputs where they are.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/core/outcome.h"
#include "ktune/tensor/compare.h"
#include "ktune/tensor/host_buffer.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {

struct CheckResult {
  Outcome outcome = Outcome::kOk;
  std::string message;
};

// The reference's outputs: one buffer per argument (empty for in and scalar arguments, and for
// an output that the device screened and keeps: CheckedBuffers::reference_passes, read back by
// read_reference() only when a comparison on the host needs it).
struct ReferenceOutputs {
  std::vector<HostBuffer> outputs;
  // By argument index; the worker folds each one's rms_atol into atol once per request
  // (scaled_to_rms, device/serve.cpp), so that a device's screen needs no RMS of its own.
  std::vector<Tolerance> tolerances;
  // By argument index: each output's RMS (view_rms) when the device measured it; empty when the
  // host copies in `outputs` are all there is (reference_rms() measures them).
  std::vector<double> rms;
};

// Output `arg`'s RMS over its finite elements (view_rms), where the device measured it or from
// the host copy.
[[nodiscard]] double reference_rms(const Problem& problem, const ReferenceOutputs& reference,
                                   std::size_t arg);

// One problem's buffers wherever they live. A failing call is the device's error (the run's
// outcome becomes kLaunchError with its message).
class CheckedBuffers {
 public:
  virtual ~CheckedBuffers() = default;
  [[nodiscard]] virtual const Problem& problem() const = 0;
  // Inputs seeded, outputs poisoned, redzones refilled: ready for one run.
  [[nodiscard]] virtual Status reset() = 0;
  // Outputs poisoned and in-outs back to their seeded contents, inputs and redzones as they
  // are: what each timed run starts from, so that its outputs are its own work. A device that
  // queues its work may only enqueue it, in order with the runs (finish() waits for it). Devices
  // whose reset() costs little more need not override.
  [[nodiscard]] virtual Status reset_outputs() { return reset(); }
  // Waits for what was enqueued since reset() (and brings back what the checks below read).
  [[nodiscard]] virtual Status finish() = 0;
  // "C (after the end)": each damaged redzone.
  [[nodiscard]] virtual Result<std::vector<std::string>> redzone_violations() = 0;
  // The first kIn argument whose bytes differ from its seeded contents.
  [[nodiscard]] virtual Result<std::optional<std::string>> modified_input() = 0;
  // An optional screen of every output against `reference` where the outputs are (CUDA: on the
  // GPU): true when all pass. False sends check_candidate to the host comparison, which finds
  // the first bad element for the message.
  [[nodiscard]] virtual Result<bool> outputs_pass(const ReferenceOutputs& reference) {
    (void)reference;
    return false;
  }
  // After a sound reference run: keeps what outputs_pass() compares with.
  [[nodiscard]] virtual Status keep_outputs_as_reference() { return {}; }
  // An optional screen of the reference's outputs where they are, just after its run: true
  // when every output passes check_output_alone()'s rules there (written, finite), with each
  // output's RMS in (*rms)[arg]; run_reference then keeps them there and makes no host copy.
  // False: the host reads them back and checks them.
  [[nodiscard]] virtual Result<bool> reference_passes(std::vector<double>* rms) {
    (void)rms;
    return false;
  }
  // Output `arg` of the reference kept by keep_outputs_as_reference(), read back into *out:
  // for a comparison on the host when reference_passes() left no host copy.
  [[nodiscard]] virtual Status read_reference(std::size_t arg, HostBuffer* out) {
    (void)arg, (void)out;
    return make_error(ErrorCode::kInternal, "these buffers keep no reference to read back");
  }
  // Makes output(arg) hold the last run's outputs on the host.
  [[nodiscard]] virtual Status read_outputs() = 0;
  // Argument `arg`'s storage start on the host (as compare() takes it), after read_outputs().
  [[nodiscard]] virtual const std::byte* output(std::size_t arg) const = 0;
};

// Enqueues one run of a candidate on the buffers (the device's own launch; the buffers are the
// arguments).
using Enqueue = std::function<Status()>;

// Runs the reference on reset buffers; its outputs must pass the same integrity checks and be
// written and finite. Tolerances from `tolerance`, else default_tolerance() per dtype. On
// failure the result's outcome says what went wrong (kLaunchError: the device's error).
[[nodiscard]] CheckResult run_reference(const Enqueue& reference, CheckedBuffers& buffers,
                                        const std::optional<Tolerance>& tolerance,
                                        ReferenceOutputs* out);
// `reference` null: outputs are checked only for poison, NaN, redzones and modified inputs.
[[nodiscard]] CheckResult check_candidate(const Enqueue& candidate, CheckedBuffers& buffers,
                                          const ReferenceOutputs* reference);
// The checks of check_candidate on the run the buffers hold now (finish() first). `inputs`
// false leaves out the comparison of the inputs with their seeded contents (the costliest part
// for a problem with large inputs), for timed runs between two checks that include it.
[[nodiscard]] CheckResult check_run(CheckedBuffers& buffers, const ReferenceOutputs* reference,
                                    bool inputs = true);

// Host memory as CheckedBuffers: a ProblemBuffers, which the CPU device runs on directly.
class HostCheckedBuffers final : public CheckedBuffers {
 public:
  explicit HostCheckedBuffers(ProblemBuffers& buffers) : buffers_(buffers) {}
  const Problem& problem() const override { return buffers_.problem(); }
  Status reset() override;
  Status reset_outputs() override;
  Status finish() override { return {}; }
  Result<std::vector<std::string>> redzone_violations() override;
  Result<std::optional<std::string>> modified_input() override;
  Status read_outputs() override { return {}; }
  const std::byte* output(std::size_t arg) const override { return buffers_.buffer(arg).data(); }

 private:
  ProblemBuffers& buffers_;
};

// The host forms: a function called on the buffers' arguments. run_reference fails with
// kInvalidArgument ("reference: <outcome>: ...").
[[nodiscard]] Result<ReferenceOutputs> run_reference(const KernelFn& reference,
                                                     ProblemBuffers& buffers,
                                                     const Tolerance* tolerance);
[[nodiscard]] CheckResult check_candidate(const KernelFn& fn, ProblemBuffers& buffers,
                                          const ReferenceOutputs* reference);

}  // namespace ktune
