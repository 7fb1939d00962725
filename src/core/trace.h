// Timeline tracing: where a tuning run's time goes, across ktune and its workers.
//
// With KTUNE_TRACE=FILE in the environment (ktune's --trace FILE sets it; workers inherit it),
// every Span appends one Chrome trace event ("ph": "X", a complete event with its duration) to
// FILE: chrome://tracing and https://ui.perfetto.dev open it as one timeline, a row per process
// and thread. Timestamps are CLOCK_MONOTONIC microseconds, one clock for every process on the
// machine. Each event is one write() to a file opened with O_APPEND, so the processes' events
// do not interleave within a line. The file starts with "[" and has no closing "]", which the
// trace-event format allows (a run that is killed still leaves a readable file).
//
// Without KTUNE_TRACE a Span costs one branch on a cached flag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ktune::trace {

// True when KTUNE_TRACE names a file that could be opened (looked up once per process).
[[nodiscard]] bool enabled();

// Microseconds on CLOCK_MONOTONIC.
[[nodiscard]] std::int64_t now_us();

// Appends a complete event: `name` in `category`, from start_us for dur_us; `detail`, when not
// empty, becomes args.detail.
void complete(std::string_view name, std::string_view category, std::int64_t start_us,
              std::int64_t dur_us, std::string_view detail = {});

// A complete event from construction to destruction (or to end()).
class Span {
 public:
  Span(std::string_view name, std::string_view category, std::string_view detail = {});
  ~Span() { end(); }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  void end();

 private:
  bool on_;
  std::int64_t start_us_ = 0;
  std::string name_, category_, detail_;
};

}  // namespace ktune::trace
