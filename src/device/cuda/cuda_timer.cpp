// CudaTimer: events around each sample, the L2 flushed by a memset before each, graph replay when
// asked for, one synchronisation per batch of samples (cuda_timer.h).
#include "device/cuda/cuda_timer.h"

#include <fmt/format.h>

#include <algorithm>
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

}  // namespace

CudaFlush::~CudaFlush() {
  // cuMemFree waits for queued work that may still use the buffer.
  if (buffer_ != 0) (void)cu_.MemFree(buffer_);
}

Status CudaFlush::prepare(const BenchOptions& options) {
  const CudaDriver& cu = cu_;
  std::size_t bytes = options.flush_bytes;
  if (bytes == 0) bytes = l2_bytes_ > 0 ? 2 * l2_bytes_ : kDefaultFlushBytes;
  bytes = std::max<std::size_t>(bytes / 4 * 4, 4);  // whole 32-bit words for cuMemsetD32
  if (buffer_ != 0 && bytes_ == bytes) return {};
  if (buffer_ != 0) {
    KTUNE_CU(MemFree(buffer_));
    buffer_ = 0;
    bytes_ = 0;
  }
  CUdeviceptr p = 0;
  KTUNE_CU(MemAlloc(&p, bytes));
  buffer_ = p;
  bytes_ = bytes;
  return {};
}

Status CudaFlush::enqueue() {
  if (buffer_ == 0) return {};
  const CudaDriver& cu = cu_;
  // Writing a buffer twice the L2 evicts the candidate's lines, dirty ones included; the value
  // changes so that no sample writes what the last one left.
  KTUNE_CU(MemsetD32Async(buffer_, ++value_, bytes_ / 4, stream_));
  return {};
}

CudaTimer::CudaTimer(const CudaDriver& cu, CUstream stream, CudaFlush& flush, bool flush_cache,
                     std::function<Status()> enqueue)
    : cu_(cu),
      stream_(stream),
      flush_(flush),
      flush_cache_(flush_cache),
      enqueue_(std::move(enqueue)) {}

CudaTimer::~CudaTimer() {
  if (exec_ != nullptr) (void)cu_.GraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)cu_.GraphDestroy(graph_);
}

Result<std::unique_ptr<CudaTimer>> CudaTimer::create(const CudaDriver& cu, CUstream stream,
                                                     CudaFlush& flush, const BenchOptions& options,
                                                     std::function<Status()> enqueue) {
  std::unique_ptr<CudaTimer> t(
      new CudaTimer(cu, stream, flush, options.flush_cache, std::move(enqueue)));
  if (options.flush_cache) {
    if (Status s = flush.prepare(options); !s) return std::unexpected(s.error());
  }
  if (options.graph_calls > 0) {
    if (Status s = t->capture(options.graph_calls); s) {
      t->calls_per_sample_ = options.graph_calls;
    } else {
      t->note_ = fmt::format("timed without a CUDA graph: capturing {} calls failed: {}",
                             options.graph_calls, s.error().message);
    }
  }
  return t;
}

// Fails when the candidate cannot be captured (a library call that synchronises or allocates,
// say): the stream has left capture mode either way.
Status CudaTimer::capture(int calls) {
  const CudaDriver& cu = cu_;
  // Thread-local: only this thread's unsafe calls (cuMemAlloc, synchronisations) invalidate the
  // capture, not those of other threads.
  KTUNE_CU(StreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  Status enqueued;
  for (int i = 0; i < calls && enqueued; ++i) enqueued = enqueue_();
  CUgraph graph = nullptr;
  const CUresult end = cu.StreamEndCapture(stream_, &graph);
  if (graph != nullptr && (!enqueued || end != CUDA_SUCCESS)) (void)cu.GraphDestroy(graph);
  if (!enqueued) return enqueued;
  if (end != CUDA_SUCCESS) return cuda_status(cu, end, "StreamEndCapture");
  if (graph == nullptr) {
    return make_error(ErrorCode::kInternal, "cuStreamEndCapture: returned no graph");
  }
  graph_ = graph;
  KTUNE_CU(GraphInstantiate(&exec_, graph_, 0));
  return {};
}

Status CudaTimer::run_sample() {
  if (exec_ == nullptr) return enqueue_();
  return cuda_status(cu_, cu_.GraphLaunch(exec_, stream_), "GraphLaunch");
}

Status CudaTimer::warm_up(int count) {
  const CudaDriver& cu = cu_;
  if (exec_ != nullptr) count = std::max(count, 1);  // the first launch uploads the graph
  for (int i = 0; i < count; ++i) {
    if (Status s = run_sample(); !s) return s;
  }
  KTUNE_CU(StreamSynchronize(stream_));
  return {};
}

Status CudaTimer::sample(int count, std::vector<double>* ns) { return timed(count, nullptr, ns); }

Status CudaTimer::sample_each(int count, const std::function<Status()>& before,
                              std::vector<double>* ns) {
  return timed(count, &before, ns);
}

Status CudaTimer::timed(int count, const std::function<Status()>* before, std::vector<double>* ns) {
  const CudaDriver& cu = cu_;
  for (int done = 0; done < count;) {
    const int batch = std::min(count - done, kMaxBatch);
    Events events(cu_);
    if (Status s = events.create(2 * batch); !s) return s;
    for (int i = 0; i < batch; ++i) {
      if (before) {
        if (Status s = (*before)(); !s) return s;
      }
      if (flush_cache_) {
        if (Status s = flush_.enqueue(); !s) return s;
      }
      KTUNE_CU(EventRecord(events[2 * static_cast<std::size_t>(i)], stream_));
      if (Status s = run_sample(); !s) return s;
      KTUNE_CU(EventRecord(events[2 * static_cast<std::size_t>(i) + 1], stream_));
    }
    KTUNE_CU(StreamSynchronize(stream_));
    for (int i = 0; i < batch; ++i) {
      float ms = 0;
      const std::size_t e = 2 * static_cast<std::size_t>(i);
      KTUNE_CU(EventElapsedTime(&ms, events[e], events[e + 1]));
      ns->push_back(static_cast<double>(ms) * 1e6 / calls_per_sample_);
    }
    done += batch;
  }
  return {};
}

}  // namespace ktune
