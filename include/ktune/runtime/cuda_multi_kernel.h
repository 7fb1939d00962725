// CudaMultiKernel: MultiKernel for GPU work. Each variant is a host function that enqueues its
// kernels (or a library call) on the caller's stream, on the caller's device pointers; the first
// call of a shape bucket verifies and times every variant on clones of the device buffers they
// write, in the caller's CUDA context, and the bucket's calls then go to the fastest verified one
// (MultiKernel's rules: forced picks, stored picks in the tuning cache under the GPU's identity,
// the reference variant, ArgUse, failures()).
//
// Verification as on the CPU: a variant whose outputs, read back after one run, disagree with the
// reference variant's within the dtype's tolerance, or that leaves an ArgUse::kOut element
// unwritten (the clone is poisoned first), is excluded and never picked or stored. Timing: CUDA
// events around each run on the caller's stream, after warm-up runs, until the options' budget.
//
// What it cannot guarantee: the variants run in the caller's process and context. A variant that
// faults (an illegal address) poisons the context for the whole program, as any kernel of it
// would; for untrusted kernels, tune them with `ktune tune` (worker processes) and serve the
// picks. A variant that writes device memory it was not given is not seen.
//
// CUDA is reached through the driver (libcuda, opened at run time): the caller's program uses
// the runtime API or the driver as it likes; `stream` is a cudaStream_t or CUstream (the same
// type), null for the legacy default stream.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ktune/runtime/multi_kernel.h"

struct CUstream_st;  // cudaStream_t and CUstream are pointers to it

namespace ktune {
namespace detail {

// The device half of a CUDA MultiKernel's pick (cuda_multi_kernel.cpp, not a template): clones of
// the written buffers, their reset, read-back, and event timing on the caller's stream.
class CudaTrial {
 public:
  [[nodiscard]] static Result<std::unique_ptr<CudaTrial>> create(CUstream_st* stream);
  ~CudaTrial();
  CudaTrial(const CudaTrial&) = delete;
  CudaTrial& operator=(const CudaTrial&) = delete;

  // A clone of the `bytes` at device address `from` (copied now); returns the clone's address.
  [[nodiscard]] Result<void*> clone(const void* from, std::size_t bytes, ArgUse use, DType dtype);
  // Every clone back to the caller's data, or (kOut clones, with poison_outputs) the poison.
  [[nodiscard]] Status restore(bool poison_outputs);
  // Waits for the stream: an error left by what was enqueued is returned.
  [[nodiscard]] Status finish();
  // The compared clones (not kScratch), read back, in clone order.
  [[nodiscard]] Result<std::vector<HostBuffer>> read() const;
  [[nodiscard]] std::vector<ClonedOutput> views(const std::vector<HostBuffer>& read) const;
  // Event-timed runs of `enqueue` on the stream: options.warmup_runs first, then runs until
  // options.budget_ms of timed time (at least min_runs, at most max_runs).
  [[nodiscard]] Result<BenchStats> time(const std::function<void()>& enqueue,
                                        const BenchOptions& options);

  // The tuning-cache identity of the current context's GPU ("cuda: <name> cc9.0 sms=132 ...").
  [[nodiscard]] static Result<std::string> device_fingerprint();

 private:
  struct Clone;
  explicit CudaTrial(CUstream_st* stream);
  CUstream_st* stream_;
  std::vector<Clone> clones_;
};

}  // namespace detail

template <class... Args>
class CudaMultiKernel : public detail::MultiKernelAccess {
 public:
  using Fn = void (*)(CUstream_st* stream, Args...);
  struct Variant {
    std::string name;
    Fn fn = nullptr;
  };
  using BucketFn = ShapeKey (*)(const Args&...);
  // A device-pointer argument that variants write (MutatedArg's rules).
  using Mutated = MutatedArg<Args...>;

  // MultiKernel::create's errors, and kUnavailable without a CUDA driver or a current context
  // (the key needs the GPU's identity).
  [[nodiscard]] static Result<CudaMultiKernel> create(MultiKernelOptions options,
                                                      std::vector<Variant> variants,
                                                      BucketFn bucket,
                                                      std::vector<Mutated> mutated = {}) {
    const std::string where = "CudaMultiKernel '" + options.name + "'";
    if (Status s = detail::check_typed<Args...>(where, variants, bucket, mutated); !s) {
      return std::unexpected(s.error());
    }
    Result<std::string> device = detail::CudaTrial::device_fingerprint();
    if (!device) return std::unexpected(device.error());
    std::vector<std::string> names;
    for (const Variant& v : variants) names.push_back(v.name);
    auto core = detail::MultiKernelCore::create(std::move(options), std::move(names), *device);
    if (!core) return std::unexpected(core.error());
    return CudaMultiKernel(std::move(*core), std::move(variants), bucket, std::move(mutated));
  }

  // Enqueues the bucket's pick on `stream`; the first call of a bucket picks it first (on clones;
  // the stream is synchronised while it does). An error: a CUDA failure while picking.
  [[nodiscard]] Status operator()(CUstream_st* stream, Args... args) {
    const ShapeKey bucket = bucket_(args...);
    const detail::MultiKernelCore::Entry* e = core_->last();
    if (e == nullptr || e->bucket != bucket) [[unlikely]] {
      std::optional<Error> failed;
      e = core_->find_or_pick(bucket, [&] { return measure_all(stream, failed, args...); });
      if (failed) return std::unexpected(*failed);
    }
    variants_[e->index].fn(stream, args...);
    return {};
  }

 private:
  CudaMultiKernel(std::unique_ptr<detail::MultiKernelCore> core, std::vector<Variant> variants,
                  BucketFn bucket, std::vector<Mutated> mutated)
      : MultiKernelAccess(std::move(core)),
        variants_(std::move(variants)),
        bucket_(bucket),
        mutated_(std::move(mutated)) {}

  using VariantRun = detail::MultiKernelCore::VariantRun;

  // MultiKernel::measure_all on the device. A CUDA failure of the trial itself (no memory for
  // the clones, say) goes to `failed`, every variant then unmeasured.
  std::vector<VariantRun> measure_all(CUstream_st* stream, std::optional<Error>& failed,
                                      const Args&... args) const {
    std::vector<VariantRun> runs(variants_.size());
    const auto fail = [&](const Error& e) {
      failed = e;
      for (VariantRun& r : runs) r = {Outcome::kLaunchError, e.message};
      return runs;
    };
    auto trial = detail::CudaTrial::create(stream);
    if (!trial) return fail(trial.error());
    const std::tuple<Args...> original{args...};
    std::tuple<Args...> call = original;
    std::vector<const void*> seen;
    for (const Mutated& m : mutated_) {
      const void* from = detail::address_at(original, m.arg, std::index_sequence_for<Args...>{});
      const std::size_t bytes = m.bytes(args...);
      if (from == nullptr || bytes == 0 || std::find(seen.begin(), seen.end(), from) != seen.end())
        continue;
      seen.push_back(from);
      Result<void*> to = (*trial)->clone(from, bytes, m.use, *m.dtype);
      if (!to) return fail(to.error());
      detail::redirect(call, from, *to);
    }
    // One run of variant i on freshly reset clones, its outputs read back.
    std::vector<HostBuffer> read;
    runs = detail::verify_variants(
        *core_, variants_.size(), [&](std::size_t i) -> Result<std::vector<detail::ClonedOutput>> {
          if (Status s = (*trial)->restore(true); !s) return std::unexpected(s.error());
          std::apply([&](auto&... a) { variants_[i].fn(stream, a...); }, call);
          if (Status s = (*trial)->finish(); !s) return std::unexpected(s.error());
          Result<std::vector<HostBuffer>> out = (*trial)->read();
          if (!out) return std::unexpected(out.error());
          read = std::move(*out);
          return (*trial)->views(read);
        });
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      if (runs[i].outcome != Outcome::kOk) continue;  // verified ones only
      if (Status s = (*trial)->restore(false); !s) return fail(s.error());
      Result<BenchStats> st = (*trial)->time(
          [&] { std::apply([&](auto&... a) { variants_[i].fn(stream, a...); }, call); },
          core_->bench_options());
      if (!st) {
        runs[i] = {Outcome::kLaunchError, st.error().message};
        continue;
      }
      runs[i].stats = *st;
    }
    return runs;
  }

  std::vector<Variant> variants_;
  BucketFn bucket_ = nullptr;
  std::vector<Mutated> mutated_;
};

}  // namespace ktune
