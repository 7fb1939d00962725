// CandidateRunner: in-process and isolated verification and measurement of candidates.
#include "select/candidate_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

std::filesystem::path reference_file_path() {
  static std::atomic<unsigned> counter{0};
  return std::filesystem::temp_directory_path() /
         fmt::format("ktune-reference-{}-{}.bin", ::getpid(), counter.fetch_add(1));
}

// The device of the problem's first buffer: where every buffer of a problem lives.
DeviceKind problem_device(const Problem& problem) {
  for (const ProblemArg& a : problem.args) {
    if (a.param.role != ArgRole::kScalar) return a.tensor.device.kind;
  }
  return DeviceKind::kCpu;
}

// The in-process handler of device problems run without a worker pool.
std::unique_ptr<DeviceHandler> make_device_handler(DeviceKind kind) {
  return kind == DeviceKind::kOpenCL ? make_opencl_handler() : make_cuda_handler();
}

}  // namespace

CandidateRunner::CandidateRunner(const Backend& backend, const Problem& problem,
                                 const SelectorOptions& options, WorkerPool* pool)
    : backend_(backend),
      problem_(problem),
      options_(options),
      pool_(pool),
      device_(problem_device(problem)),
      bench_(options.bench) {
  if (!on_device()) {
    buffers_.emplace(ProblemBuffers::create(problem, options.seed));
    bench_.set_flush_ranges(buffers_->data_ranges());
  } else if (!pool_) {
    local_handler_ = make_device_handler(device_);
  }
}

CandidateRunner::~CandidateRunner() {
  if (!reference_file_.empty()) {
    std::error_code ec;
    std::filesystem::remove(reference_file_, ec);
  }
}

Status CandidateRunner::prepare(Choice* reference) {
  if (!reference) return {};
  if (on_device()) {
    auto launch = reference->launch_spec(problem_);
    if (!launch) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("reference {} cannot run on the device: {}", reference->name(),
                                    launch.error().message));
    }
    reference_launch_ = std::move(*launch);
    return {};
  }
  auto fn = reference->load(backend_, problem_);
  if (!fn) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("reference {} does not load: {}", reference->name(), fn.error().message));
  }
  const Tolerance* tol = options_.tolerance ? &*options_.tolerance : nullptr;
  const auto t0 = Clock::now();
  auto out = run_reference(*fn, *buffers_, tol);
  reference_ns_ = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  if (!out) return std::unexpected(out.error());
  reference_ = std::move(*out);
  if (pool_) {
    reference_file_ = reference_file_path();
    if (Status s = write_reference_file(reference_file_, problem_, *reference_); !s) return s;
  }
  return {};
}

bool CandidateRunner::isolated(const Choice& choice) const {
  if (on_device()) return true;  // through the pool or the local handler
  return pool_ != nullptr && choice.launch_spec(problem_).has_value();
}

std::chrono::milliseconds CandidateRunner::deadline(const BenchOptions& bench) const {
  if (options_.run_timeout.count() > 0) return options_.run_timeout;
  // Room for a candidate `slow_factor` times slower than the reference through every run it
  // may make (warm-up, verification, the minimum count) plus the budget; without a reference,
  // only the floor.
  const double runs = bench.warmup_runs + 1 + bench.min_runs;
  const double ms = reference_ns_ / 1e6 * options_.slow_factor * runs + bench.budget_ms;
  return options_.run_timeout_floor + std::chrono::milliseconds(static_cast<long>(ms));
}

Result<BenchmarkRequest> CandidateRunner::request_for(const Choice& choice, bool measure,
                                                      const BenchOptions& bench) {
  auto launch = choice.launch_spec(problem_);
  if (!launch) return std::unexpected(launch.error());
  BenchmarkRequest r;
  r.id = next_id_++;
  r.candidate = choice.name();
  r.launch = std::move(*launch);
  r.problem = problem_;
  r.seed = options_.seed;
  r.expected = reference_file_;
  r.reference = reference_launch_;
  r.tolerance = options_.tolerance;
  r.bench = bench;
  r.measure = measure;
  return r;
}

RunResult CandidateRunner::send(const BenchmarkRequest& request, const BenchOptions& bench) {
  if (!pool_) {
    BenchmarkResponse response = local_handler_->handle(request);
    if (response.restart) local_handler_ = make_device_handler(device_);  // a fresh context
    return {response.outcome, response.message, response.stats};
  }
  auto response = pool_->run(request, deadline(bench));
  if (!response) return {Outcome::kLaunchError, response.error().message, std::nullopt};
  RunResult r{response->outcome, response->message, response->stats};
  if (r.outcome == Outcome::kCrashed || r.outcome == Outcome::kTimedOut ||
      r.outcome == Outcome::kResourceExhausted) {
    // The last line the worker printed often says why (an assert, a sanitizer, an exception).
    std::string tail = response->output_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    if (const auto nl = tail.rfind('\n'); nl != std::string::npos) tail = tail.substr(nl + 1);
    if (!tail.empty()) r.message += fmt::format("; last output: {}", tail.substr(0, 200));
  }
  return r;
}

RunResult CandidateRunner::remeasure_in_worker(Choice& choice, const BenchOptions& bench) {
  auto request = request_for(choice, true, bench);
  if (!request) return {Outcome::kLoadError, request.error().message, std::nullopt};
  request->verify = false;  // it passed on this problem already
  return send(*request, bench);
}

RunResult CandidateRunner::run(Choice& choice, bool measure) {
  return isolated(choice) ? run_in_worker(choice, measure, options_.bench)
                          : run_in_process(choice, measure);
}

RunResult CandidateRunner::run_in_worker(Choice& choice, bool measure, const BenchOptions& bench) {
  auto request = request_for(choice, measure, bench);
  if (!request) return {Outcome::kLoadError, request.error().message, std::nullopt};
  return send(*request, bench);
}

RunResult CandidateRunner::run_in_process(Choice& choice, bool measure) {
  auto fn = choice.load(backend_, problem_);
  if (!fn) return {Outcome::kLoadError, fn.error().message, std::nullopt};
  CheckResult c = check_candidate(*fn, *buffers_, reference_ ? &*reference_ : nullptr);
  if (c.outcome != Outcome::kOk) return {c.outcome, c.message, std::nullopt};
  if (!measure) return {};
  buffers_->reset();
  auto stats = bench_.measure([&] { return (*fn)(buffers_->args()); });
  if (!stats) return {Outcome::kLaunchError, stats.error().message, std::nullopt};
  loaded_.emplace_back(&choice, *fn);
  return {Outcome::kOk, "", *stats};
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
  if (buffers_) buffers_->reset();
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < choices.size(); ++i) {
      Choice& c = *choices[i];
      if (isolated(c)) {
        RunResult run = remeasure_in_worker(c, round_bench);
        if (run.outcome != Outcome::kOk || !run.stats) {
          return make_error(ErrorCode::kInternal,
                            fmt::format("{}: re-measuring failed: {}: {}", c.name(),
                                        outcome_name(run.outcome), run.message));
        }
        samples[i].push_back(run.stats->median_ns);
        continue;
      }
      auto it = std::find_if(loaded_.begin(), loaded_.end(),
                             [&](const auto& p) { return p.first == &c; });
      if (it == loaded_.end()) {  // passed in an earlier runner (Selector::measure_again)
        auto fn = c.load(backend_, problem_);
        if (!fn) return std::unexpected(fn.error());
        it = loaded_.emplace(loaded_.end(), &c, *fn);
      }
      const KernelFn& fn = it->second;
      auto stats =
          bench_.measure_interleaved({[&] { return fn(buffers_->args()); }}, round_bench.max_runs);
      if (!stats) return std::unexpected(stats.error());
      samples[i].push_back((*stats)[0].median_ns);
    }
  }
  std::vector<BenchStats> out;
  for (auto& s : samples) out.push_back(compute_stats(std::move(s)));
  return out;
}

}  // namespace ktune
