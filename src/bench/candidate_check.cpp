// Verification of one run of a candidate (or the reference) on a problem's buffers.
#include "bench/candidate_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace ktune {
namespace {

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// Runs once and checks what does not need a reference. kOk when the run is sound.
CheckResult run_and_check_integrity(const KernelFn& fn, ProblemBuffers& buffers) {
  buffers.reset();
  if (Status s = fn(buffers.args()); !s) return {Outcome::kLaunchError, s.error().message};
  if (auto bad = buffers.redzone_violations(); !bad.empty()) {
    return {Outcome::kRedzoneViolation,
            fmt::format("wrote outside the buffer of {}", fmt::join(bad, ", "))};
  }
  if (auto name = buffers.modified_input()) {
    return {Outcome::kInputModified, fmt::format("wrote into input {}", *name)};
  }
  return {};
}

// Without a reference: every element written (no poison left) and finite. `data` is the start
// of the storage, as for compare().
CheckResult check_output_alone(const ProblemArg& arg, const std::byte* data) {
  const TensorSpec& spec = arg.tensor;
  const std::size_t size = dtype_size(spec.dtype);
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    const std::byte* p = data + spec.storage_index(i) * size;
    if (is_poison(spec.dtype, p)) {
      return {Outcome::kUnwrittenOutput,
              fmt::format("output {}: element {} was never written", arg.param.name, i)};
    }
    if (is_floating(spec.dtype) && !std::isfinite(load_element(spec.dtype, p))) {
      return {Outcome::kNanOutput, fmt::format("output {}: element {} is {}", arg.param.name, i,
                                               load_element(spec.dtype, p))};
    }
  }
  return {};
}

}  // namespace

Result<ReferenceOutputs> run_reference(const KernelFn& reference, ProblemBuffers& buffers,
                                       const Tolerance* tolerance) {
  CheckResult r = run_and_check_integrity(reference, buffers);
  const Problem& p = buffers.problem();
  if (r.outcome == Outcome::kOk) {
    // The reference must write every output and produce no NaN itself.
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      if (!is_output(p.args[i].param.role)) continue;
      r = check_output_alone(p.args[i], buffers.buffer(i).data());
      if (r.outcome != Outcome::kOk) break;
    }
  }
  if (r.outcome != Outcome::kOk) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("reference: {}: {}", outcome_name(r.outcome), r.message));
  }
  ReferenceOutputs ref;
  ref.outputs.resize(p.args.size());
  ref.tolerances.resize(p.args.size());
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (!is_output(p.args[i].param.role)) continue;
    ref.outputs[i] = buffers.buffer(i).clone();
    ref.tolerances[i] = tolerance ? *tolerance : default_tolerance(p.args[i].param.dtype);
  }
  return ref;
}

CheckResult check_candidate(const KernelFn& fn, ProblemBuffers& buffers,
                            const ReferenceOutputs* reference) {
  CheckResult r = run_and_check_integrity(fn, buffers);
  if (r.outcome != Outcome::kOk) return r;
  const Problem& p = buffers.problem();
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (!is_output(p.args[i].param.role)) continue;
    const std::byte* actual = buffers.buffer(i).data();
    if (!reference) {
      if (CheckResult c = check_output_alone(p.args[i], actual); c.outcome != Outcome::kOk)
        return c;
      continue;
    }
    Comparison c =
        compare(p.args[i].tensor, actual, reference->outputs[i].data(), reference->tolerances[i]);
    if (c.outcome != Outcome::kOk) {
      return {c.outcome, fmt::format("output {}: {}", p.args[i].param.name, c.message)};
    }
  }
  return {};
}

}  // namespace ktune
