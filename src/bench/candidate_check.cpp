// Verification of one run of a candidate (or the reference) on a problem's buffers, wherever
// they are (candidate_check.h).
#include "bench/candidate_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/parallel_for.h"
#include "core/trace.h"

namespace ktune {
namespace {

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

CheckResult device_error(const Error& e) { return {Outcome::kLaunchError, e.message}; }

// Checks what does not need the outputs: redzones and (with `inputs`) inputs. kOk when the run
// is sound.
CheckResult check_integrity(CheckedBuffers& b, bool inputs = true) {
  Result<std::vector<std::string>> bad = b.redzone_violations();
  if (!bad) return device_error(bad.error());
  if (!bad->empty()) {
    return {Outcome::kRedzoneViolation,
            fmt::format("wrote outside the buffer of {}", fmt::join(*bad, ", "))};
  }
  if (!inputs) return {};
  Result<std::optional<std::string>> input = b.modified_input();
  if (!input) return device_error(input.error());
  if (*input) return {Outcome::kInputModified, fmt::format("wrote into input {}", **input)};
  return {};
}

// Runs once on reset buffers and checks what does not need a reference.
CheckResult run_and_check_integrity(const Enqueue& enqueue, CheckedBuffers& b) {
  if (Status s = b.reset(); !s) return device_error(s.error());
  if (Status s = enqueue(); !s) return device_error(s.error());
  if (Status s = b.finish(); !s) return device_error(s.error());
  return check_integrity(b);
}

// The storage around each output's view (read back) must still hold the poison it was given.
CheckResult check_outside_views(const CheckedBuffers& b) {
  const Problem& p = b.problem();
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (!is_output(p.args[i].param.role)) continue;
    const std::int64_t at = first_write_outside_view(p.args[i].tensor, b.output(i));
    if (at >= 0) {
      return {Outcome::kRedzoneViolation,
              fmt::format("wrote outside the view of {}: storage element {}, which the view "
                          "(sizes, strides, offset {}) does not address",
                          p.args[i].param.name, at, p.args[i].tensor.offset)};
    }
  }
  return {};
}

// Without a reference: every element written (no poison left) and finite, unless the output
// allows NaN (nan_ok): then infinities too, which come with it (log(x) is NaN below 0 and -inf
// at 0) and which compare() passes when the reference has the same. `data` is the start of the
// storage, as for compare().
CheckResult check_output_alone(const ProblemArg& arg, const std::byte* data) {
  const TensorSpec& spec = arg.tensor;
  const auto sound_value = [&](const std::byte* p) {
    if (!is_floating(spec.dtype)) return true;
    const double v = load_element(spec.dtype, p);
    return arg.nan_ok || std::isfinite(v);
  };
  const std::size_t size = dtype_size(spec.dtype);
  if (view_is_dense(spec)) {
    // A dense view addresses every storage element: a walk of the storage in order passes the
    // common case without the index arithmetic; the walk below names the element that fails.
    // On every usable core: a reference output of 8192^2 elements takes half a second on one.
    std::atomic<bool> sound = true;
    parallel_for(spec.numel(), std::int64_t{1} << 18, [&](std::int64_t b, std::int64_t e, int) {
      for (std::int64_t i = b; i < e && sound.load(std::memory_order_relaxed); ++i) {
        const std::byte* p = data + static_cast<std::size_t>(i) * size;
        if (is_poison(spec.dtype, p) || !sound_value(p)) sound = false;
      }
    });
    if (sound) return {};
  }
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    const std::byte* p = data + spec.storage_index(i) * size;
    if (is_poison(spec.dtype, p)) {
      return {Outcome::kUnwrittenOutput,
              fmt::format("output {}: element {} was never written", arg.param.name, i)};
    }
    if (!sound_value(p)) {
      return {Outcome::kNanOutput, fmt::format("output {}: element {} is {}", arg.param.name, i,
                                               load_element(spec.dtype, p))};
    }
  }
  return {};
}

}  // namespace

CheckResult run_reference(const Enqueue& reference, CheckedBuffers& buffers,
                          const std::optional<Tolerance>& tolerance, ReferenceOutputs* out) {
  trace::Span run_span("run reference", "worker");
  CheckResult r = run_and_check_integrity(reference, buffers);
  run_span.end();
  if (r.outcome != Outcome::kOk) return r;
  const Problem& p = buffers.problem();
  std::vector<double> rms;
  // Written and finite, checked where the outputs are (reference_passes): kept there, no host
  // copy. Else read back and checked here, and the host keeps a copy.
  Result<bool> screened = buffers.reference_passes(&rms);
  if (!screened) return device_error(screened.error());
  if (!*screened) {
    trace::Span read_span("read back", "worker");
    if (Status s = buffers.read_outputs(); !s) return device_error(s.error());
    read_span.end();
    trace::Span screen_span("screen reference", "worker");
    if (r = check_outside_views(buffers); r.outcome != Outcome::kOk) return r;
    // The reference must write every output and produce no NaN itself.
    for (std::size_t i = 0; i < p.args.size(); ++i) {
      if (!is_output(p.args[i].param.role)) continue;
      if (r = check_output_alone(p.args[i], buffers.output(i)); r.outcome != Outcome::kOk) {
        return r;
      }
    }
  }
  trace::Span keep_span("keep reference", "worker");
  if (Status s = buffers.keep_outputs_as_reference(); !s) return device_error(s.error());
  ReferenceOutputs ref;
  ref.outputs.resize(p.args.size());
  ref.tolerances.resize(p.args.size());
  if (*screened) ref.rms = std::move(rms);
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (!is_output(p.args[i].param.role)) continue;
    ref.tolerances[i] = output_tolerance(p.args[i], tolerance);
    if (*screened) continue;
    const std::size_t bytes = p.args[i].tensor.storage_bytes();
    ref.outputs[i] = HostBuffer::allocate(bytes);
    if (bytes > 0) std::memcpy(ref.outputs[i].data(), buffers.output(i), bytes);
  }
  *out = std::move(ref);
  return {};
}

double reference_rms(const Problem& problem, const ReferenceOutputs& reference, std::size_t arg) {
  if (arg < reference.rms.size()) return reference.rms[arg];
  return view_rms(problem.args[arg].tensor, reference.outputs[arg].data());
}

CheckResult check_candidate(const Enqueue& candidate, CheckedBuffers& buffers,
                            const ReferenceOutputs* reference) {
  if (Status s = buffers.reset(); !s) return device_error(s.error());
  if (Status s = candidate(); !s) return device_error(s.error());
  if (Status s = buffers.finish(); !s) return device_error(s.error());
  return check_run(buffers, reference);
}

CheckResult check_run(CheckedBuffers& buffers, const ReferenceOutputs* reference, bool inputs) {
  CheckResult r = check_integrity(buffers, inputs);
  if (r.outcome != Outcome::kOk) return r;
  if (reference) {
    Result<bool> passed = buffers.outputs_pass(*reference);
    if (!passed) return device_error(passed.error());
    if (*passed) return {};
  }
  // Nothing screened (a device screens only dense views, which have no storage around them),
  // or something differs: the host comparison says what.
  if (Status s = buffers.read_outputs(); !s) return device_error(s.error());
  if (r = check_outside_views(buffers); r.outcome != Outcome::kOk) return r;
  const Problem& p = buffers.problem();
  for (std::size_t i = 0; i < p.args.size(); ++i) {
    if (!is_output(p.args[i].param.role)) continue;
    const std::byte* actual = buffers.output(i);
    if (!reference) {
      if (CheckResult c = check_output_alone(p.args[i], actual); c.outcome != Outcome::kOk)
        return c;
      continue;
    }
    // The reference kept on the device comes to the host only now, for the message.
    const HostBuffer* expected = &reference->outputs[i];
    HostBuffer kept;
    if (expected->bytes() < p.args[i].tensor.storage_bytes()) {
      if (Status s = buffers.read_reference(i, &kept); !s) return device_error(s.error());
      expected = &kept;
    }
    Comparison c = compare(p.args[i].tensor, actual, expected->data(), reference->tolerances[i]);
    if (c.outcome != Outcome::kOk) {
      return {c.outcome, fmt::format("output {}: {}", p.args[i].param.name, c.message)};
    }
  }
  return {};
}

Status HostCheckedBuffers::reset() {
  buffers_.reset();
  return {};
}

Status HostCheckedBuffers::reset_outputs() {
  buffers_.reset_outputs();
  return {};
}

Result<std::vector<std::string>> HostCheckedBuffers::redzone_violations() {
  return buffers_.redzone_violations();
}

Result<std::optional<std::string>> HostCheckedBuffers::modified_input() {
  return buffers_.modified_input();
}

Result<ReferenceOutputs> run_reference(const KernelFn& reference, ProblemBuffers& buffers,
                                       const Tolerance* tolerance) {
  HostCheckedBuffers host(buffers);
  ReferenceOutputs out;
  const std::optional<Tolerance> tol =
      tolerance ? std::optional<Tolerance>(*tolerance) : std::nullopt;
  CheckResult r = run_reference([&] { return reference(buffers.args()); }, host, tol, &out);
  if (r.outcome != Outcome::kOk) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("reference: {}: {}", outcome_name(r.outcome), r.message));
  }
  return out;
}

CheckResult check_candidate(const KernelFn& fn, ProblemBuffers& buffers,
                            const ReferenceOutputs* reference) {
  HostCheckedBuffers host(buffers);
  return check_candidate([&] { return fn(buffers.args()); }, host, reference);
}

}  // namespace ktune
