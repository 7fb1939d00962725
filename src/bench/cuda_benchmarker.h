// CudaBenchmarker: times a GPU candidate with CUDA events on one stream: warm-up, the L2 flushed
// before every sample, a sample count chosen from a first sample and the budget, every sample
// enqueued before one synchronisation, and robust statistics in ns. Optionally each sample is
// one replay of a CUDA graph of several back-to-back calls, divided by the count, which hides
// the launch cost of kernels shorter than a launch.
//
// Internal header (src/): <cuda.h> must not reach include/ktune. The stream's context must be
// current on the calling thread for every call, the destructor included.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/cuda_driver.h"
#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/status.h"

namespace ktune {

class CudaBenchmarker {
 public:
  // `stream` must be a non-blocking stream (graph capture refuses the legacy default stream)
  // that outlives the benchmarker; `l2_bytes` sizes the flush buffer when
  // options.flush_bytes is 0 (twice the L2; 64 MiB when 0 too).
  CudaBenchmarker(const CudaDriver& cu, BenchOptions options, CUstream stream,
                  std::size_t l2_bytes);
  ~CudaBenchmarker();  // frees the flush buffer
  CudaBenchmarker(const CudaBenchmarker&) = delete;
  CudaBenchmarker& operator=(const CudaBenchmarker&) = delete;

  // For the next measure(); the flush buffer is kept when its size does not change.
  void set_options(const BenchOptions& options) { options_ = options; }
  [[nodiscard]] const BenchOptions& options() const { return options_; }

  // `enqueue` launches the candidate once, asynchronously, on the stream. Returns the first
  // failing enqueue's error or the driver's error at the synchronisation (a kernel's fault shows
  // there; the caller tells sticky errors by probing the context).
  [[nodiscard]] Result<BenchStats> measure(const std::function<Status()>& enqueue);

  // What the last measure() wants the reader to know, e.g. that graph capture failed and plain
  // events were used instead; empty when nothing.
  [[nodiscard]] const std::string& note() const { return note_; }

 private:
  [[nodiscard]] Status ensure_flush_buffer();
  [[nodiscard]] Status flush();
  // Enqueues `count` timed samples (flush, event, sample, event) on fresh events, synchronises
  // once, and appends each sample's elapsed ms to `ms`.
  [[nodiscard]] Status time_samples(const std::function<Status()>& sample, int count,
                                    std::vector<double>* ms);

  const CudaDriver& cu_;
  BenchOptions options_;
  CUstream stream_;
  std::size_t l2_bytes_;
  CUdeviceptr flush_buffer_ = 0;
  std::size_t flush_buffer_bytes_ = 0;
  unsigned flush_value_ = 0;
  std::string note_;
};

}  // namespace ktune
