// TimedChecks: poisoned outputs before and a check after each timed run (timed_checks.h).
#include "device/timed_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/trace.h"

namespace ktune {

TimedChecks::TimedChecks(SampleSource& source, CheckedBuffers& buffers,
                         const ReferenceOutputs* reference, int always)
    : source_(source),
      buffers_(buffers),
      reference_(reference),
      always_(always),
      draw_(std::random_device{}()) {}

bool TimedChecks::draw_check(int run, bool last) {
  if (last || run < always_) return true;
  // At random, so that the candidate cannot know; as often as kCheckShare of the runs' time
  // pays for, and one run in kMinCheckEvery at least.
  const double p =
      std::max(1.0 / kMinCheckEvery, check_ns_ > 0 ? kCheckShare * run_ns_ / check_ns_ : 1.0);
  return std::uniform_real_distribution<double>(0, 1)(draw_) < p;
}

Status TimedChecks::sample(int count, std::vector<double>* ns) {
  for (int i = 0; i < count;) {
    // The runs up to the next checked one, drawn before they are enqueued (the candidate sees
    // the draw no more than it did one run at a time), then run back to back: each from poisoned
    // outputs, with one synchronisation for the segment.
    int segment = 1;
    while (!draw_check(runs_ + segment - 1, i + segment == count)) ++segment;
    const std::size_t before = ns->size();
    if (Status s = source_.sample_each(
            segment, [this] { return buffers_.reset_outputs(); }, ns);
        !s) {
      return s;
    }
    for (std::size_t k = before; k < ns->size(); ++k) run_ns_ += (*ns)[k];
    runs_ += segment;
    i += segment;
    const bool last = i == count;
    const auto t0 = std::chrono::steady_clock::now();
    trace::Span span("check", "worker", last ? "with inputs" : "");
    if (Status s = buffers_.finish(); !s) return s;
    // Inputs are compared at the last run of a batch only: reset_outputs() leaves them (on the
    // CPU and CUDA; OpenCL uploads everything again), so a write into one is still there.
    CheckResult c = check_run(buffers_, reference_, last);
    check_ns_ +=
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    ++checked_;
    if (c.outcome == Outcome::kLaunchError) return make_error(ErrorCode::kIo, c.message);
    if (c.outcome != Outcome::kOk) {
      failed_ = {c.outcome,
                 fmt::format("changed behaviour under timing: timed run {} was wrong: {}", runs_,
                             c.message)};
      // Ends measure_samples; the caller reads failed() first.
      return make_error(ErrorCode::kInternal, failed_.message);
    }
  }
  return {};
}

}  // namespace ktune
