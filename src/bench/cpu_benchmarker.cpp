// CpuBenchmarker: the host's samples for the measurement loop (bench/measure_loop.h), the cache
// flush, and interleaved re-measurement.
#include "ktune/bench/cpu_benchmarker.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "bench/cpu_samples.h"
#include "bench/measure_loop.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define KTUNE_X86 1
#endif

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

Result<double> time_once(const std::function<Status()>& run) {
  const auto t0 = Clock::now();
  Status s = run();
  const auto t1 = Clock::now();
  if (!s) return std::unexpected(s.error());
  return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

std::size_t parse_size(std::string text) {
  std::size_t mult = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'M')) {
    mult = text.back() == 'K' ? 1024 : 1024 * 1024;
    text.pop_back();
  }
  try {
    return std::stoull(text) * mult;
  } catch (...) {  // sysfs text we could not read: treated as unknown
    return 0;
  }
}

#ifdef KTUNE_X86
// clflushopt is much faster than clflush on a large range because it is weakly ordered; one
// sfence orders the whole batch (its cost: bench/flush_cost.sh, docs/benchmarks.md).
bool has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
}

__attribute__((target("clflushopt"))) void flush_lines_opt(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 64) __builtin_ia32_clflushopt(p + i);
  __builtin_ia32_clflushopt(p + n - 1);
  __builtin_ia32_sfence();
}

void flush_lines(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 64) __builtin_ia32_clflush(p + i);
  __builtin_ia32_clflush(p + n - 1);
  __builtin_ia32_mfence();
}
#endif

}  // namespace

std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream in(entry.path() / "size");
    std::string text;
    if (in >> text) best = std::max(best, parse_size(text));
  }
  return best;
}

CpuBenchmarker::CpuBenchmarker(BenchOptions options) : options_(options) {}

void CpuBenchmarker::set_flush_ranges(std::vector<std::pair<const void*, std::size_t>> ranges) {
  ranges_ = std::move(ranges);
}

void CpuBenchmarker::flush() {
  if (!options_.flush_cache) return;
#ifdef KTUNE_X86
  if (!ranges_.empty()) {
    static const bool opt = has_clflushopt();
    for (const auto& [data, bytes] : ranges_) {
      if (bytes == 0) continue;
      const char* p = static_cast<const char*>(data);
      opt ? flush_lines_opt(p, bytes) : flush_lines(p, bytes);
    }
    return;
  }
#endif
  if (flush_buffer_.empty()) {
    std::size_t bytes = options_.flush_bytes;
    if (bytes == 0) {
      const std::size_t llc = last_level_cache_bytes();
      bytes = llc ? 2 * llc : std::size_t{64} << 20;
    }
    flush_buffer_.assign(bytes, 1);
  }
  // Read-modify-write of every cache line evicts the kernel's data, dirty lines included.
  unsigned s = sink_;
  for (std::size_t i = 0; i < flush_buffer_.size(); i += 64) {
    flush_buffer_[i] = static_cast<unsigned char>(flush_buffer_[i] + 1);
    s += flush_buffer_[i];
  }
  sink_ = s;
}

Result<BenchStats> CpuBenchmarker::measure(const std::function<Status()>& run) {
  CpuSamples source(*this, run);
  return measure_samples(options_, source);
}

CpuSamples::CpuSamples(CpuBenchmarker& bench, std::function<Status()> run)
    : bench_(bench), run_(std::move(run)) {}

Status CpuSamples::warm_up(int count) {
  for (int i = 0; i < count; ++i) {
    if (Status s = run_(); !s) return s;
  }
  return {};
}

Status CpuSamples::sample(int count, std::vector<double>* ns) {
  for (int i = 0; i < count; ++i) {
    bench_.flush();  // outside the timed span
    Result<double> t = time_once(run_);
    if (!t) return std::unexpected(t.error());
    ns->push_back(*t);
  }
  return {};
}

Result<std::vector<BenchStats>> CpuBenchmarker::measure_interleaved(
    const std::vector<std::function<Status()>>& runs, int rounds) {
  std::vector<std::vector<double>> samples(runs.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      flush();
      auto t = time_once(runs[i]);
      if (!t) return std::unexpected(t.error());
      samples[i].push_back(*t);
    }
  }
  std::vector<BenchStats> stats;
  stats.reserve(samples.size());
  for (auto& s : samples) stats.push_back(compute_stats(std::move(s)));
  return stats;
}

}  // namespace ktune
