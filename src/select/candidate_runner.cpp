// CandidateRunner: requests for the candidates of one problem, answered in a worker or by this
// process's request flow.
#include "select/candidate_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/trace.h"
#include "core/utf8.h"
#include "device/cpu/cpu_device.h"
#include "worker/device_handler.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

// A directory only this user can enter, made afresh (mkdtemp): nobody else can plant a link or
// a file where the reference's outputs go.
Result<std::filesystem::path> private_directory() {
  std::string path = (std::filesystem::temp_directory_path() / "ktune-reference-XXXXXX").string();
  if (::mkdtemp(path.data()) == nullptr) {
    return make_error(ErrorCode::kIo, fmt::format("cannot create a private directory for the "
                                                  "reference's outputs in {}: {}",
                                                  std::filesystem::temp_directory_path().string(),
                                                  std::strerror(errno)));
  }
  return std::filesystem::path(path);
}

// The device of the problem's first buffer: where every buffer of a problem lives.
DeviceKind problem_device(const Problem& problem) {
  for (const ProblemArg& a : problem.args) {
    if (a.param.role != ArgRole::kScalar) return a.tensor.device.kind;
  }
  return DeviceKind::kCpu;
}

}  // namespace

CandidateRunner::CandidateRunner(const Backend& backend, const Problem& problem,
                                 const SelectorOptions& options, WorkerPool* pool)
    : backend_(backend),
      problem_(problem),
      options_(options),
      pool_(pool),
      device_(problem_device(problem)),
      local_(make_request_flow(device_)) {}

CandidateRunner::~CandidateRunner() { clear_reference(); }

Status CandidateRunner::prepare(Choice* reference) {
  // Called again without a reference, with a stand-in (the first valid candidate): whatever
  // the last call set up goes first, and a stand-in that fails leaves no reference behind.
  clear_reference();
  if (!reference) return {};
  reference_ = reference;
  Status s = prepare_reference(*reference);
  if (!s) clear_reference();
  return s;
}

Status CandidateRunner::adopt_stand_in(Choice& candidate) {
  if (Status s = prepare(&candidate); !s) return s;
  if (!on_device()) return {};  // prepare() ran it as the reference already (worker or here)
  // On a device prepare() only names the reference launch, which the flow runs before the next
  // candidate. A probe runs it now, so that a stand-in that cannot serve as a reference costs
  // itself rather than leaving every later candidate without one.
  BenchmarkRequest probe = request_for(candidate, false, options_.bench);
  probe.verify = false;
  RunResult r = run_request(candidate, probe, options_.bench);
  if (r.outcome == Outcome::kOk) return {};
  clear_reference();
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: {}", outcome_name(r.outcome), r.message));
}

void CandidateRunner::clear_reference() {
  reference_ = nullptr;
  prepared_here_ = false;
  reference_launch_.reset();
  if (!reference_file_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(reference_file_.parent_path(), ec);
    reference_file_.clear();
  }
}

Status CandidateRunner::prepare_reference(Choice& reference) {
  if (on_device() && reference.runs_on_host()) return prepare_on_host(reference);
  if (on_device()) {
    auto launch = reference.launch_spec(problem_);
    if (!launch) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("reference {} cannot run on the device: {}", reference.name(),
                                    launch.error().message));
    }
    reference_launch_ = std::move(*launch);
    return {};
  }
  if (pool_) {
    // Isolated: a reference that a worker can run never runs in this process (a swapped or
    // broken one costs a worker, not ktune), and its outputs never pass through a file.
    if (auto launch = reference.launch_spec(problem_)) return prepare_in_worker(reference, *launch);
  }
  if (Status s = prepare_here(reference); !s) return s;
  if (!pool_) return {};
  // Isolated, with a reference only this process can run (an extern followed by the host
  // epilogue pass): its outputs go to the workers in a file of a private directory.
  Result<std::filesystem::path> dir = private_directory();
  if (!dir) return std::unexpected(dir.error());
  reference_file_ = *dir / "reference.bin";
  return write_reference_file(reference_file_, problem_, *local_->reference());
}

Status CandidateRunner::prepare_in_worker(const Choice& reference, const LaunchSpec& launch) {
  reference_launch_ = launch;
  // The reference as a request that only prepares the problem: the worker runs the reference
  // on both data sets and answers how long one run took.
  BenchmarkRequest probe = request_for(reference, false, options_.bench);
  probe.verify = false;
  const std::chrono::milliseconds limit =
      options_.run_timeout.count() > 0 ? options_.run_timeout : options_.run_timeout_floor * 6;
  const auto start = std::chrono::steady_clock::now();
  Result<BenchmarkResponse> response = pool_->run(probe, limit);
  prepare_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!response) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("reference {}: {}", reference.name(), response.error().message));
  }
  if (response->outcome != Outcome::kOk) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("reference {} in a worker: {}: {}", reference.name(),
                                  outcome_name(response->outcome), response->message));
  }
  reference_ns_ = response->reference_ns;
  return {};
}

Status CandidateRunner::prepare_here(Choice& reference) {
  auto fn = reference.load(backend_, problem_);
  if (!fn) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("reference {} does not load: {}", reference.name(), fn.error().message));
  }
  BenchmarkRequest request = request_for(reference, false, options_.bench);
  request.reference.reset();
  Result<double> ns = local_->prepare_reference(request, *make_cpu_launch(std::move(*fn)));
  if (!ns) return make_error(ErrorCode::kInvalidArgument, ns.error().message);
  reference_ns_ = *ns;
  prepared_here_ = true;
  return {};
}

Status CandidateRunner::prepare_on_host(Choice& reference) {
  // The same problem with every buffer on the CPU: same sizes, strides, seed and inits, so the
  // host's uniform data set is the device's, element for element (ProblemBuffers fills both).
  Problem host = problem_;
  for (ProblemArg& a : host.args) {
    if (a.param.role != ArgRole::kScalar) a.tensor.device = Device{};
  }
  auto fn = reference.load(backend_, host);
  if (!fn) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("reference {} does not load: {}", reference.name(), fn.error().message));
  }
  std::unique_ptr<RequestFlow> cpu = make_request_flow(DeviceKind::kCpu);
  BenchmarkRequest request = request_for(reference, false, options_.bench);
  request.problem = host;
  request.reference.reset();
  request.expected.clear();
  Result<double> ns = cpu->prepare_reference(request, *make_cpu_launch(std::move(*fn)));
  if (!ns) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("reference {} on the host: {}", reference.name(), ns.error().message));
  }
  reference_ns_ = *ns;
  // No stress data set: the file holds the uniform set's outputs only, and the device's flow
  // verifies each candidate on that set twice.
  Result<std::filesystem::path> dir = private_directory();
  if (!dir) return std::unexpected(dir.error());
  reference_file_ = *dir / "reference.bin";
  return write_reference_file(reference_file_, problem_, *cpu->reference());
}

bool CandidateRunner::isolated(const Choice& choice) const {
  if (on_device()) return pool_ != nullptr;
  return pool_ != nullptr && choice.launch_spec(problem_).has_value();
}

std::chrono::milliseconds CandidateRunner::deadline(const BenchOptions& bench) const {
  if (options_.run_timeout.count() > 0) return options_.run_timeout;
  // Room for a candidate `slow_factor` times slower than the reference through every run it
  // may make (warm-up, verification, the minimum count) plus the budget; without a reference,
  // only the floor.
  // Two verification calls; a fresh worker first runs the reference on both data sets.
  const double runs = bench.warmup_runs + 2 + bench.min_runs;
  const double reference_ms = reference_ns_ / 1e6;
  const double ms = reference_ms * (options_.slow_factor * runs + 2) + bench.budget_ms;
  const auto from_reference =
      options_.run_timeout_floor + std::chrono::milliseconds(static_cast<long>(ms));
  // Once a candidate has been measured, a hang costs a few of its requests rather than the
  // floor: the reference alone cannot tell a slow kernel from a stuck one, the best candidate's
  // time can. Never longer than before. On top, what a fresh worker spends before the
  // candidate's first call: the reference on both data sets, or what the reference's preparing
  // request took when it ran in a worker (allocating and filling the buffers too).
  const double prepare_ms = std::max(2 * reference_ms, prepare_ms_);
  if (auto from_best = best_.deadline(prepare_ms)) return std::min(from_reference, *from_best);
  return from_reference;
}

BenchmarkRequest CandidateRunner::request_for(const Choice& choice, bool measure,
                                              const BenchOptions& bench) {
  BenchmarkRequest r;
  r.id = next_id_++;
  r.candidate = choice.name();
  if (auto launch = choice.launch_spec(problem_)) r.launch = std::move(*launch);
  r.problem = problem_;
  r.seed = options_.seed;
  r.reference = reference_launch_;
  // A device problem's host reference reaches the device's flow, here or in a worker, as a file.
  if (on_device()) r.expected = reference_file_;
  r.tolerance = options_.tolerance;
  r.bench = bench;
  r.measure = measure;
  return r;
}

RunResult CandidateRunner::in_worker(const BenchmarkRequest& request, const BenchOptions& bench) {
  trace::Span span(request.measure ? "measure request" : "verify request", "select",
                   request.candidate);
  BenchmarkRequest r = request;
  r.expected = reference_file_;
  auto response = pool_->run(r, deadline(bench));
  if (!response) return {Outcome::kLaunchError, response.error().message, std::nullopt};
  // Device problems learn the reference's time from the worker that first ran it.
  if (reference_ns_ == 0 && response->reference_ns > 0) reference_ns_ = response->reference_ns;
  RunResult result{response->outcome, response->message, response->stats};
  if (result.outcome == Outcome::kCrashed || result.outcome == Outcome::kTimedOut ||
      result.outcome == Outcome::kResourceExhausted) {
    // The last line the worker printed often says why (an assert, a sanitizer, an exception).
    std::string tail = response->output_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    if (const auto nl = tail.rfind('\n'); nl != std::string::npos) tail = tail.substr(nl + 1);
    if (!tail.empty()) result.message += fmt::format("; last output: {}", utf8_prefix(tail, 200));
  }
  return result;
}

RunResult CandidateRunner::in_process(Choice& choice, const BenchmarkRequest& request) {
  BenchmarkResponse response;
  if (on_device()) {
    if (!choice.launch_spec(problem_)) {
      return {Outcome::kLoadError, choice.launch_spec(problem_).error().message, std::nullopt};
    }
    response = local_->serve(request);
  } else {
    // The choice's own function, verified against the reference run here: when candidates are
    // isolated, only once a choice that runs here needs it.
    if (reference_ && !prepared_here_) {
      if (Status s = prepare_here(*reference_); !s) {
        return {Outcome::kUnsupported, s.error().message, std::nullopt};
      }
    }
    auto it = loaded_.find(&choice);
    if (it == loaded_.end()) {
      auto fn = choice.load(backend_, problem_);
      if (!fn) return {Outcome::kLoadError, fn.error().message, std::nullopt};
      it = loaded_.emplace(&choice, make_cpu_launch(std::move(*fn))).first;
    }
    // Verified against the reference prepared here, whatever the workers run.
    BenchmarkRequest here = request;
    here.reference.reset();
    response = local_->serve(here, *it->second);
  }
  if (response.restart) local_ = make_request_flow(device_);  // a fresh context
  return {response.outcome, response.message, response.stats};
}

RunResult CandidateRunner::run_request(Choice& choice, const BenchmarkRequest& request,
                                       const BenchOptions& bench) {
  if (isolated(choice)) {
    if (on_device() && !choice.launch_spec(problem_)) {
      return {Outcome::kLoadError, choice.launch_spec(problem_).error().message, std::nullopt};
    }
    return in_worker(request, bench);
  }
  return in_process(choice, request);
}

RunResult CandidateRunner::run(Choice& choice, bool measure) {
  BenchmarkRequest request = request_for(choice, measure, options_.bench);
  if (measure && options_.abandon) request.abandon_above_ns = best_.abandon_bound_ns();
  const auto start = std::chrono::steady_clock::now();
  RunResult r = run_request(choice, request, options_.bench);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (measure && r.outcome == Outcome::kOk && r.stats) best_.observe(*r.stats, took.count());
  return r;
}

Result<std::vector<BenchStats>> CandidateRunner::remeasure(
    const std::vector<Choice*>& choices, int rounds,
    const std::optional<BenchOptions>& round_options) {
  // One short measurement of each candidate per round, alternating, so that drift of the
  // machine's speed hits all of them alike; the median of the round medians decides.
  BenchOptions round_bench = options_.bench;
  round_bench.warmup_runs = 1;
  round_bench.min_runs = 3;
  round_bench.max_runs = 3;
  if (round_options) round_bench = *round_options;
  std::vector<std::vector<double>> samples(choices.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
      Choice& c = *choices[i];
      BenchmarkRequest request = request_for(c, true, round_bench);
      request.verify = false;  // it passed on this problem already
      RunResult run = run_request(c, request, round_bench);
      if (run.outcome != Outcome::kOk || !run.stats) {
        return make_error(ErrorCode::kInternal,
                          fmt::format("{}: re-measuring failed: {}: {}", c.name(),
                                      outcome_name(run.outcome), run.message));
      }
      samples[i].push_back(run.stats->median_ns);
    }
  }
  std::vector<BenchStats> out;
  out.reserve(samples.size());
  for (auto& s : samples) out.push_back(compute_stats(std::move(s)));
  return out;
}

}  // namespace ktune
