// RequestFlow: open, load, prepare, verify, measure (serve.h).
#include "device/serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "core/trace.h"
#include "device/timed_checks.h"

namespace ktune {
namespace {

bool is_output(ArgRole role) { return role == ArgRole::kOut || role == ArgRole::kInOut; }

// The prepared problem's identity: the problem, the seed and where its reference comes from.
std::string prepared_key(const BenchmarkRequest& request) {
  return fmt::format("{} seed={} expected={} reference={}", request.problem.key(), request.seed,
                     request.expected.string(),
                     request.reference ? launch_key(*request.reference) : "none");
}

}  // namespace

struct RequestFlow::Prepared {
  std::string key;
  std::unique_ptr<DeviceProblem> buffers;  // the uniform data set: verified and timed
  std::optional<ReferenceOutputs> reference;
  // The stress data set and the reference's outputs on it: with a reference launch that
  // computes it soundly; null otherwise (the second verification runs on `buffers` again).
  std::unique_ptr<DeviceProblem> stress;
  std::optional<ReferenceOutputs> stress_reference;
  // By argument: how much larger the reference's outputs are on the stress set than on the
  // uniform one (RMS ratio, at least 1); atol grows by it there (see verify()).
  std::vector<double> stress_scale;
  double reference_ns = 0;  // the reference's run on `buffers` here; 0 when none ran here
  bool reported = false;    // reference_ns went out in a response
};

RequestFlow::RequestFlow(std::unique_ptr<DeviceAdapter> device, ReferenceReader read_reference)
    : device_(std::move(device)), read_reference_(std::move(read_reference)) {}

RequestFlow::~RequestFlow() = default;

const ReferenceOutputs* RequestFlow::reference() const {
  return prepared_ && prepared_->reference ? &*prepared_->reference : nullptr;
}

BenchmarkResponse RequestFlow::serve(const BenchmarkRequest& request) {
  return answer(request, nullptr);
}

BenchmarkResponse RequestFlow::serve(const BenchmarkRequest& request,
                                     const DeviceLaunch& candidate) {
  return answer(request, &candidate);
}

BenchmarkResponse RequestFlow::answer(const BenchmarkRequest& request,
                                      const DeviceLaunch* candidate) {
  BenchmarkResponse response;
  response.id = request.id;
  trace::Span span("serve", "worker", request.candidate);
  Verdict v = run(request, candidate, &response);
  response.outcome = v.outcome;
  response.restart = v.restart;
  if (!v.ok()) {
    response.message = std::move(v.message);
    // An abandoned candidate keeps the statistics of the runs it made (its partial median).
    if (v.outcome != Outcome::kAbandoned) response.stats.reset();
  }
  return response;
}

RequestFlow::Verdict RequestFlow::failure(std::string message) {
  DeviceAdapter::Fault f = device_->fault(std::move(message));
  return {Outcome::kLaunchError, std::move(f.message), f.restart};
}

RequestFlow::Verdict RequestFlow::failure(const Error& error) { return failure(error.message); }

RequestFlow::Verdict RequestFlow::start(const BenchmarkRequest& request) {
  if (device_->lost()) {
    return {Outcome::kLaunchError,
            fmt::format("the {} context was lost to an earlier candidate's fault; the worker "
                        "restarts",
                        device_->name()),
            true};
  }
  if (Status s = device_->open(); !s) {
    return {Outcome::kUnsupported,
            fmt::format("{}: cannot run on the {} device: {}", request.candidate, device_->name(),
                        s.error().message)};
  }
  return {};
}

RequestFlow::Verdict RequestFlow::run(const BenchmarkRequest& request,
                                      const DeviceLaunch* candidate, BenchmarkResponse* response) {
  if (Verdict v = start(request); !v.ok()) return v;
  std::shared_ptr<const DeviceLaunch> loaded;
  if (!candidate) {
    trace::Span span("load", "worker", request.candidate);
    Result<std::shared_ptr<const DeviceLaunch>> l = device_->load(request.launch, request.problem);
    if (!l) {
      // A missing library is this machine's lack, and a library that cannot run the problem
      // (or has fewer heuristic algorithms than the choice's index) does not support it:
      // neither is a broken candidate.
      const ErrorCode code = l.error().code;
      const bool unsupported =
          code == ErrorCode::kUnavailable ||
          (is_library_launch(request.launch.kind) && code == ErrorCode::kInvalidArgument);
      return {unsupported ? Outcome::kUnsupported : Outcome::kLoadError, l.error().message};
    }
    loaded = std::move(*l);
    candidate = loaded.get();
  }
  if (Verdict v = prepare(request); !v.ok()) return v;

  Prepared& p = *prepared_;
  if (p.reference_ns > 0 && !p.reported) {
    response->reference_ns = p.reference_ns;
    p.reported = true;
  }
  if (request.verify) {
    trace::Span span("verify", "worker", request.candidate);
    if (Verdict v = verify(request, *candidate); !v.ok()) return v;
  }
  if (!request.measure) return {};
  trace::Span span("measure", "worker", request.candidate);
  return measure(request, *candidate, response);
}

// Two checked calls: the uniform data set, then the stress set (or the uniform set again).
RequestFlow::Verdict RequestFlow::verify(const BenchmarkRequest& request,
                                         const DeviceLaunch& candidate) {
  Prepared& p = *prepared_;
  // Per request: the tolerance may change while the prepared problem stays. A tolerance is
  // chosen for unit-scale data; on the stress set a correct kernel's round-off grows with the
  // magnitude of its values (a sum of products that cancels to a small element errs by the
  // products' scale), so atol grows by the outputs' scale there. A kernel right only for small
  // values errs by the values themselves, far beyond it.
  const Problem& problem = request.problem;
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    if (!is_output(problem.args[i].param.role)) continue;
    // The output's own tolerance (args[i].tolerance, nan_ok) before the request's.
    // Its allowance in units of the reference's RMS (rms_atol) is folded into atol here, once
    // per request, for the device's screen and the host's comparison alike.
    const Tolerance t = output_tolerance(problem.args[i], request.tolerance);
    const auto scaled = [&](Tolerance u, const ReferenceOutputs& reference) {
      return u.rms_atol > 0 ? scaled_to_rms(u, reference_rms(problem, reference, i)) : u;
    };
    if (p.reference) p.reference->tolerances[i] = scaled(t, *p.reference);
    if (p.stress_reference) {
      Tolerance s = t;
      s.atol *= p.stress_scale[i];
      p.stress_reference->tolerances[i] = scaled(s, *p.stress_reference);
    }
  }
  struct Call {
    DeviceProblem* buffers;
    const ReferenceOutputs* reference;
    const char* what;  // before the message of a failure
  };
  const ReferenceOutputs* uniform = p.reference ? &*p.reference : nullptr;
  const Call calls[2] = {
      {p.buffers.get(), uniform, ""},
      p.stress ? Call{p.stress.get(), &*p.stress_reference,
                      "on the stress data set (other magnitudes and signs): "}
               : Call{p.buffers.get(), uniform, "on its second call (the first was right): "},
  };
  for (const Call& call : calls) {
    DeviceProblem& b = *call.buffers;
    CheckResult c = check_candidate([&] { return b.enqueue(candidate); }, b, call.reference);
    if (c.outcome == Outcome::kLaunchError) return failure(std::move(c.message));
    if (c.outcome != Outcome::kOk) {
      return {c.outcome, fmt::format("{}{}", call.what, c.message)};
    }
  }
  return {};
}

RequestFlow::Verdict RequestFlow::prepare(const BenchmarkRequest& request) {
  const std::string key = prepared_key(request);
  if (prepared_ && prepared_->key == key) return {};
  trace::Span span("prepare", "worker", key);
  prepared_.reset();  // free the last problem's memory first
  auto no_reference = [&](const std::string& why) {
    return Verdict{Outcome::kUnsupported,
                   fmt::format("{}: no reference to verify against: {}", request.candidate, why)};
  };

  auto p = std::make_unique<Prepared>();
  p->key = key;
  trace::Span allocate_span("allocate", "worker", "uniform");
  Result<std::unique_ptr<DeviceProblem>> buffers =
      device_->allocate(request.problem, request.seed, DataSet::kUniform);
  allocate_span.end();
  if (!buffers) {
    const ErrorCode code = buffers.error().code;
    if (code != ErrorCode::kInvalidArgument) {
      Verdict v = failure(buffers.error());
      if (v.restart) return v;
    }
    return {
        code == ErrorCode::kResourceExhausted ? Outcome::kResourceExhausted : Outcome::kUnsupported,
        fmt::format("{}: cannot put the problem on the {} device: {}", request.candidate,
                    device_->name(), buffers.error().message)};
  }
  p->buffers = std::move(*buffers);

  if (!request.expected.empty()) {
    Result<ReferenceOutputs> ref =
        read_reference_(request.expected, request.problem, request.tolerance);
    if (!ref) return no_reference(ref.error().message);
    p->reference = std::move(*ref);
  } else if (request.reference) {
    Result<std::shared_ptr<const DeviceLaunch>> ref =
        device_->load(*request.reference, request.problem);
    if (!ref) return no_reference(fmt::format("reference does not load: {}", ref.error().message));
    if (Verdict v = reference_runs(request, *p, **ref); !v.ok()) {
      Verdict r = no_reference(v.message);
      r.restart = v.restart;
      return r;
    }
  }
  prepared_ = std::move(p);
  return {};
}

// Runs `reference` on p's buffers into p.reference (timed into p.reference_ns), then on the
// stress data set into p.stress and p.stress_reference; the verdict's message says what failed.
// A reference that cannot compute the stress set soundly (values that overflow it: an
// exponential, say) leaves the stress set out rather than the problem; only a device fault there
// fails.
RequestFlow::Verdict RequestFlow::reference_runs(const BenchmarkRequest& request, Prepared& p,
                                                 const DeviceLaunch& reference) {
  auto run_on = [&](DeviceProblem& b, ReferenceOutputs* out) -> Verdict {
    CheckResult c = run_reference([&] { return b.enqueue(reference); }, b, request.tolerance, out);
    if (c.outcome == Outcome::kOk) return {};
    Verdict v{c.outcome, std::move(c.message)};
    if (c.outcome == Outcome::kLaunchError) v = failure(std::move(v.message));
    v.message = fmt::format("reference: {}: {}", outcome_name(c.outcome), v.message);
    return v;
  };
  trace::Span span("reference", "worker", request.candidate);
  ReferenceOutputs uniform;
  const auto t0 = std::chrono::steady_clock::now();
  if (Verdict v = run_on(*p.buffers, &uniform); !v.ok()) return v;
  p.reference_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  p.reference = std::move(uniform);

  trace::Span allocate_span("allocate", "worker", "stress");
  Result<std::unique_ptr<DeviceProblem>> stress =
      device_->allocate(request.problem, request.seed, DataSet::kStress);
  allocate_span.end();
  if (!stress) return {};  // no room for a second set: verified on the uniform set twice
  ReferenceOutputs out;
  if (Verdict v = run_on(**stress, &out); !v.ok()) {
    if (v.outcome == Outcome::kLaunchError) return v;
    return {};
  }
  trace::Span scale_span("stress scale", "worker");
  const Problem& problem = request.problem;
  p.stress_scale.assign(problem.args.size(), 1.0);
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    if (!is_output(problem.args[i].param.role)) continue;
    const double uniform_rms = reference_rms(problem, *p.reference, i);
    const double stress_rms = reference_rms(problem, out, i);
    p.stress_scale[i] = std::max(1.0, uniform_rms > 0 ? stress_rms / uniform_rms : stress_rms);
  }
  p.stress = std::move(*stress);
  p.stress_reference = std::move(out);
  return {};
}

Result<double> RequestFlow::prepare_reference(const BenchmarkRequest& request,
                                              const DeviceLaunch& reference) {
  if (Verdict v = start(request); !v.ok()) return make_error(ErrorCode::kUnavailable, v.message);
  BenchmarkRequest plain = request;  // the key of requests that name no reference
  plain.expected.clear();
  plain.reference.reset();
  prepared_.reset();
  if (Verdict v = prepare(plain); !v.ok()) return make_error(ErrorCode::kUnavailable, v.message);
  Verdict v = reference_runs(plain, *prepared_, reference);
  if (!v.ok()) {
    prepared_.reset();
    return make_error(ErrorCode::kInvalidArgument, std::move(v.message));
  }
  prepared_->reported = true;  // the caller has the time
  return prepared_->reference_ns;
}

RequestFlow::Verdict RequestFlow::measure(const BenchmarkRequest& request,
                                          const DeviceLaunch& candidate,
                                          BenchmarkResponse* response) {
  Prepared& p = *prepared_;
  DeviceProblem& b = *p.buffers;
  if (Status s = b.reset(); !s) return failure(s.error());
  Result<std::unique_ptr<SampleSource>> source = b.timer(candidate, request.bench);
  if (!source) return failure(source.error());
  // A request that does not verify is a round of the decide stage (verified already, measured
  // in many short rounds): its first and last runs are checked.
  TimedChecks checked(**source, b, p.reference ? &*p.reference : nullptr,
                      request.verify ? TimedChecks::kAlwaysChecked : 1);
  Result<Measurement> m = measure_or_abandon(request.bench, checked, request.abandon_above_ns);
  if (checked.failed().outcome != Outcome::kOk) {
    return {checked.failed().outcome, checked.failed().message};
  }
  if (!m) return failure(m.error());
  // A fault of the last sample shows here at the latest, and no response is ok while one is
  // pending.
  if (Status s = b.finish(); !s) return failure(s.error());
  response->stats = m->stats;
  response->message = (*source)->note();
  if (m->abandoned) {
    return {Outcome::kAbandoned,
            fmt::format("fastest of the first {} runs {:.4g} ms is above the bound {:.4g} ms "
                        "from the best so far",
                        m->stats.runs, m->stats.min_ns / 1e6, request.abandon_above_ns / 1e6)};
  }
  return {};
}

}  // namespace ktune
