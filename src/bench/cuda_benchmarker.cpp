// CudaBenchmarker: events around each sample, the L2 flushed by a memset before each, graph
// replay when asked for, one synchronisation per batch of samples.
#include "bench/cuda_benchmarker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace ktune {
namespace {

// Without a size from the options or the device.
constexpr std::size_t kDefaultFlushBytes = std::size_t{64} << 20;
// Samples enqueued before one synchronisation; bounds the events alive at once.
constexpr int kMaxBatch = 512;

// Timing events, created before any sample is enqueued and destroyed together. Destroying an
// event whose record is still queued is allowed (the driver releases it when done).
class Events {
 public:
  explicit Events(const CudaDriver& cu) : cu_(cu) {}
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (CUevent e : events_) (void)cu_.EventDestroy(e);
  }
  Status create(int count) {
    const CudaDriver& cu = cu_;
    for (int i = 0; i < count; ++i) {
      CUevent e = nullptr;
      KTUNE_CU(EventCreate(&e, CU_EVENT_DEFAULT));  // default: timing enabled
      events_.push_back(e);
    }
    return {};
  }
  [[nodiscard]] CUevent operator[](std::size_t i) const { return events_[i]; }

 private:
  const CudaDriver& cu_;
  std::vector<CUevent> events_;
};

// A CUDA graph of `calls` back-to-back enqueues, captured on the stream and instantiated.
class Graph {
 public:
  explicit Graph(const CudaDriver& cu) : cu_(cu) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec_ != nullptr) (void)cu_.GraphExecDestroy(exec_);
    if (graph_ != nullptr) (void)cu_.GraphDestroy(graph_);
  }

  // Fails when the candidate cannot be captured (a library call that synchronises or
  // allocates, say): the stream has left capture mode either way.
  Status capture(CUstream stream, const std::function<Status()>& enqueue, int calls) {
    const CudaDriver& cu = cu_;
    // Thread-local: only this thread's unsafe calls (cuMemAlloc, synchronisations) invalidate
    // the capture, not those of other threads.
    KTUNE_CU(StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    Status enqueued;
    for (int i = 0; i < calls && enqueued; ++i) enqueued = enqueue();
    const CUresult end = cu.StreamEndCapture(stream, &graph_);
    if (!enqueued) return enqueued;
    if (end != CUDA_SUCCESS) return cuda_status(cu, end, "StreamEndCapture");
    if (graph_ == nullptr) {
      return make_error(ErrorCode::kInternal, "cuStreamEndCapture: returned no graph");
    }
    KTUNE_CU(GraphInstantiate(&exec_, graph_, 0));
    return {};
  }
  Status launch(CUstream stream) const {
    return cuda_status(cu_, cu_.GraphLaunch(exec_, stream), "GraphLaunch");
  }

 private:
  const CudaDriver& cu_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace

CudaBenchmarker::CudaBenchmarker(const CudaDriver& cu, BenchOptions options, CUstream stream,
                                 std::size_t l2_bytes)
    : cu_(cu), options_(options), stream_(stream), l2_bytes_(l2_bytes) {}

CudaBenchmarker::~CudaBenchmarker() {
  // cuMemFree waits for queued work that may still use the buffer.
  if (flush_buffer_ != 0) (void)cu_.MemFree(flush_buffer_);
}

Status CudaBenchmarker::ensure_flush_buffer() {
  const CudaDriver& cu = cu_;
  std::size_t bytes = options_.flush_bytes;
  if (bytes == 0) bytes = l2_bytes_ > 0 ? 2 * l2_bytes_ : kDefaultFlushBytes;
  bytes = std::max<std::size_t>(bytes / 4 * 4, 4);  // whole 32-bit words for cuMemsetD32
  if (flush_buffer_ != 0 && flush_buffer_bytes_ == bytes) return {};
  if (flush_buffer_ != 0) {
    KTUNE_CU(MemFree(flush_buffer_));
    flush_buffer_ = 0;
    flush_buffer_bytes_ = 0;
  }
  CUdeviceptr p = 0;
  KTUNE_CU(MemAlloc(&p, bytes));
  flush_buffer_ = p;
  flush_buffer_bytes_ = bytes;
  return {};
}

Status CudaBenchmarker::flush() {
  if (!options_.flush_cache || flush_buffer_ == 0) return {};
  const CudaDriver& cu = cu_;
  // Writing a buffer twice the L2 evicts the candidate's lines, dirty ones included; the value
  // changes so that no sample writes what the last one left.
  KTUNE_CU(MemsetD32Async(flush_buffer_, ++flush_value_, flush_buffer_bytes_ / 4, stream_));
  return {};
}

Status CudaBenchmarker::time_samples(const std::function<Status()>& sample, int count,
                                     std::vector<double>* ms) {
  const CudaDriver& cu = cu_;
  for (int done = 0; done < count;) {
    const int batch = std::min(count - done, kMaxBatch);
    Events events(cu_);
    if (Status s = events.create(2 * batch); !s) return s;
    for (int i = 0; i < batch; ++i) {
      if (Status s = flush(); !s) return s;
      KTUNE_CU(EventRecord(events[2 * i], stream_));
      if (Status s = sample(); !s) return s;
      KTUNE_CU(EventRecord(events[2 * i + 1], stream_));
    }
    KTUNE_CU(StreamSynchronize(stream_));
    for (int i = 0; i < batch; ++i) {
      float t = 0;
      KTUNE_CU(EventElapsedTime(&t, events[2 * i], events[2 * i + 1]));
      ms->push_back(t);
    }
    done += batch;
  }
  return {};
}

Result<BenchStats> CudaBenchmarker::measure(const std::function<Status()>& enqueue) {
  const CudaDriver& cu = cu_;
  note_.clear();
  if (options_.flush_cache) {
    if (Status s = ensure_flush_buffer(); !s) return std::unexpected(s.error());
  }

  Graph graph(cu_);
  std::function<Status()> sample = enqueue;
  double calls_per_sample = 1;
  int warmup_runs = options_.warmup_runs;
  if (options_.graph_calls > 0) {
    if (Status s = graph.capture(stream_, enqueue, options_.graph_calls); s) {
      sample = [&] { return graph.launch(stream_); };
      calls_per_sample = options_.graph_calls;
      warmup_runs = std::max(warmup_runs, 1);  // the first launch uploads the graph
    } else {
      note_ = fmt::format("timed without a CUDA graph: capturing {} calls failed: {}",
                          options_.graph_calls, s.error().message);
    }
  }

  for (int i = 0; i < warmup_runs; ++i) {
    if (Status s = sample(); !s) return std::unexpected(s.error());
  }
  KTUNE_CU(StreamSynchronize(stream_));

  std::vector<double> ms;
  if (Status s = time_samples(sample, 1, &ms); !s) return std::unexpected(s.error());
  const double first_ns = ms.front() * 1e6;
  const double budget_ns = options_.budget_ms * 1e6;
  const int wanted = static_cast<int>(std::clamp(
      std::floor(budget_ns / std::max(first_ns, 1.0)), static_cast<double>(options_.min_runs),
      static_cast<double>(std::max(options_.max_runs, options_.min_runs))));
  if (wanted > 1) {
    if (Status s = time_samples(sample, wanted - 1, &ms); !s) return std::unexpected(s.error());
  }

  std::vector<double> ns;
  ns.reserve(ms.size());
  for (double t : ms) ns.push_back(t * 1e6 / calls_per_sample);
  return compute_stats(std::move(ns));
}

}  // namespace ktune
