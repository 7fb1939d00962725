// The CUDA device's clock and flush for measure_samples(): CUDA events around each sample on one
// stream, the L2 flushed before each sample by a memset over a buffer twice its size, every
// sample of a batch enqueued before one synchronisation. Optionally each sample is one replay of
// a CUDA graph of several back-to-back calls, divided by the count, which hides the launch cost
// of kernels shorter than a launch.
//
// Internal header (src/): <cuda.h> must not reach include/ktune. The stream's context must be
// current on the calling thread for every call, the destructors included.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/measure_loop.h"
#include "core/cuda_driver.h"
#include "ktune/bench/bench_options.h"
#include "ktune/core/status.h"

namespace ktune {

// The flush buffer, kept by the device across measurements while its size stays.
class CudaFlush {
 public:
  // `l2_bytes` sizes the buffer when options.flush_bytes is 0 (twice the L2; 64 MiB when 0 too).
  CudaFlush(const CudaDriver& cu, CUstream stream, std::size_t l2_bytes)
      : cu_(cu), stream_(stream), l2_bytes_(l2_bytes) {}
  ~CudaFlush();  // frees the buffer
  CudaFlush(const CudaFlush&) = delete;
  CudaFlush& operator=(const CudaFlush&) = delete;

  // The buffer for `options` (allocated when its size changes).
  [[nodiscard]] Status prepare(const BenchOptions& options);
  // Enqueues one overwrite of the buffer on the stream.
  [[nodiscard]] Status enqueue();

 private:
  const CudaDriver& cu_;
  CUstream stream_;
  std::size_t l2_bytes_;
  CUdeviceptr buffer_ = 0;
  std::size_t bytes_ = 0;
  unsigned value_ = 0;
};

class CudaTimer final : public SampleSource {
 public:
  // `stream` must be a non-blocking stream (graph capture refuses the legacy default stream);
  // `enqueue` launches the candidate once, asynchronously, on it. With options.graph_calls,
  // captures that many calls in a graph (falling back to plain launches, with a note, when the
  // capture fails). Stream, flush and enqueue outlive the timer.
  [[nodiscard]] static Result<std::unique_ptr<CudaTimer>> create(const CudaDriver& cu,
                                                                 CUstream stream, CudaFlush& flush,
                                                                 const BenchOptions& options,
                                                                 std::function<Status()> enqueue);
  ~CudaTimer() override;
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  // Returns the first failing enqueue's error or the driver's at the synchronisation (a
  // kernel's fault shows there; the device tells sticky errors by probing the context).
  Status warm_up(int count) override;
  Status sample(int count, std::vector<double>* ns) override;
  // `before` enqueues on the stream too (the outputs poisoned again, say): still one
  // synchronisation per batch.
  Status sample_each(int count, const std::function<Status()>& before,
                     std::vector<double>* ns) override;
  std::string note() const override { return note_; }

 private:
  [[nodiscard]] Status timed(int count, const std::function<Status()>* before,
                             std::vector<double>* ns);
  CudaTimer(const CudaDriver& cu, CUstream stream, CudaFlush& flush, bool flush_cache,
            std::function<Status()> enqueue);
  [[nodiscard]] Status capture(int calls);
  [[nodiscard]] Status run_sample();

  const CudaDriver& cu_;
  CUstream stream_;
  CudaFlush& flush_;
  bool flush_cache_;
  std::function<Status()> enqueue_;
  CUgraph graph_ = nullptr;  // with graph_calls: the captured calls
  CUgraphExec exec_ = nullptr;
  double calls_per_sample_ = 1;
  std::string note_;
};

}  // namespace ktune
