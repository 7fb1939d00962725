// MultiKernel: N variants of one operation behind one typed call; the first call of a shape
// bucket verifies and benchmarks them on the caller's own arguments and remembers the fastest
// (Inductor's MultiKernelCall). Verified: each variant runs once on clones of the arguments it
// writes, and its outputs are compared with the reference variant's (the first, or
// options.reference) within the dtype's tolerance; a variant that disagrees is excluded,
// reported (failures(), and a line on options.report), never picked and never stored as a pick.
// Picks persist in the tuning cache, can be forced, and are listed for codegen.
//
// Cost after the pick: the bucket function, one atomic load and a compare, then the variant
// through its function pointer (bench/multi_kernel_overhead.cpp). The tuning cache is read or
// written only while a bucket is picked, never on the call path.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ktune/bench/bench_stats.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/core/dtype.h"
#include "ktune/core/outcome.h"
#include "ktune/core/status.h"
#include "ktune/core/tolerance.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {

struct MultiKernelOptions {
  // The operation; the tuning-cache key's op is "multi_kernel:<name>".
  std::string name;
  // Where picks persist; null: this object only. Only used while a bucket is picked, under this
  // object's pick lock; a cache shared with other threads must be safe for that itself.
  TuningCache* cache = nullptr;
  // A variant name that every bucket uses without benchmarking. Unset: $KTUNE_FORCE_PICK,
  // "<name>=<variant>[,<name>=<variant>...]" (an entry for this name must name a variant of it)
  // or a bare "<variant>" (for every MultiKernel that has a variant of that name).
  std::optional<std::string> force_pick;
  // false, or $KTUNE_MULTI_KERNEL_DISABLE_CACHE=1: benchmark even when the cache holds a pick;
  // the new pick is still stored.
  bool use_stored_pick = true;
  // The variant whose outputs the others must match; unset: the first. A reference that leaves
  // an output element unwritten (or NaN where the dtype cannot mean it) is excluded itself, and
  // the next variant in order is the reference.
  std::optional<std::string> reference;
  // Unset: each output's dtype's default (ktune/tensor/compare.h, default_tolerance).
  std::optional<Tolerance> tolerance;
  // Where an excluded variant is said, one line each ("ktune: MultiKernel 'x' bucket ...:
  // variant 'y' excluded: wrong_result: ..."); null: nowhere (failures() still has them).
  std::FILE* report = stderr;
  // Per variant and bucket. No cache flush by default: at run time a kernel usually finds its
  // inputs warm (the previous kernel wrote them), and flushing a whole last-level cache costs
  // more than this budget. With flush_cache set, only the clones of the mutated arguments are
  // flushed (the whole last-level cache when there are none).
  BenchOptions bench{.warmup_runs = 1,
                     .budget_ms = 20,
                     .min_runs = 3,
                     .max_runs = 200,
                     .flush_cache = false,
                     .flush_bytes = 0};
};

// The shape bucket of a call, e.g. rows and cols rounded up to powers of two; unused slots 0.
using ShapeKey = std::array<std::int64_t, 4>;

enum class PickSource { kForced, kStored, kBenchmarked };
[[nodiscard]] const char* pick_source_name(PickSource source);

// A variant that failed verification for one bucket.
struct MultiKernelFailure {
  ShapeKey bucket{};
  std::string variant;
  Outcome outcome = Outcome::kWrongResult;  // kWrongResult, kNanOutput or kUnwrittenOutput
  std::string message;
};

// How a pointer argument that variants write is used: read and written (kInOut: each variant
// starts from the caller's data), written only (kOut: filled with the poison pattern before the
// verifying run, so that an element a variant never writes shows), or scratch space (kScratch:
// restored for each variant, never compared).
enum class ArgUse : std::uint8_t { kInOut, kOut, kScratch };

// One bucket's pick, as recorded for codegen (Inductor's record_choice).
struct MultiKernelPick {
  ShapeKey bucket{};
  std::string variant;
  PickSource source = PickSource::kBenchmarked;
};

// A pointer argument that variants write (MultiKernel, CudaMultiKernel): its index and its size
// in bytes for this call. While benchmarking, variants write a clone of it; arguments equal to it
// (in place) see the same clone. Arguments that overlap it without being equal are not
// supported. `use` says whether its contents are compared (ArgUse); `dtype`, unset, comes from
// the pointee type (float: f32, ...), which a compared argument of another type must set.
template <class... Args>
struct MutatedArg {
  std::size_t arg = 0;
  std::size_t (*bytes)(const Args&...) = nullptr;
  ArgUse use = ArgUse::kInOut;
  std::optional<DType> dtype = std::nullopt;
};

namespace detail {

// The part of MultiKernel that does not depend on the argument types: picks by bucket, the
// forced pick, the tuning cache and the locks.
class MultiKernelCore {
 public:
  struct Entry {
    ShapeKey bucket{};
    std::size_t index = 0;
    PickSource source = PickSource::kBenchmarked;
  };
  // One variant's verification and measurement: stats when it passed.
  struct VariantRun {
    Outcome outcome = Outcome::kOk;
    std::string message;
    std::optional<BenchStats> stats = std::nullopt;
  };
  // Verifies and benchmarks every variant for one bucket (in variant order).
  using MeasureFn = std::function<std::vector<VariantRun>()>;

  // Validates the options against the variant names and reads the environment.
  // `device`: the tuning-cache key's device; empty: this CPU (cpu_fingerprint()).
  [[nodiscard]] static Result<std::unique_ptr<MultiKernelCore>> create(
      MultiKernelOptions options, std::vector<std::string> variant_names, std::string device = {});

  // The entry of the last bucket looked up by any thread; null before the first call.
  [[nodiscard]] const Entry* last() const noexcept { return last_.load(std::memory_order_acquire); }
  // The bucket's entry, picking it first when new. Concurrent first calls of one bucket pick
  // once; the others wait. Picks of different buckets are serialised too, so that two
  // benchmarks never share the machine.
  [[nodiscard]] const Entry* find_or_pick(const ShapeKey& bucket, const MeasureFn& measure);

  [[nodiscard]] std::optional<std::string> picked(const ShapeKey& bucket) const;
  [[nodiscard]] std::vector<MultiKernelPick> picks() const;
  [[nodiscard]] std::size_t benchmarks_run() const;
  [[nodiscard]] std::optional<Error> cache_error() const;
  [[nodiscard]] std::vector<MultiKernelFailure> failures() const;
  [[nodiscard]] const BenchOptions& bench_options() const { return options_.bench; }
  // The variant indices in the order they serve as the reference (options.reference first).
  [[nodiscard]] const std::vector<std::size_t>& reference_order() const { return reference_order_; }
  [[nodiscard]] const std::optional<Tolerance>& tolerance() const { return options_.tolerance; }

 private:
  MultiKernelCore(MultiKernelOptions options, std::vector<std::string> names,
                  std::optional<std::size_t> forced, bool use_stored, std::string device);
  [[nodiscard]] const Entry* find(const ShapeKey& bucket) const;
  [[nodiscard]] Entry pick(const ShapeKey& bucket, const MeasureFn& measure);
  [[nodiscard]] TuningKey key(const ShapeKey& bucket) const;
  void note_cache_error(Error error);
  void note_failure(const ShapeKey& bucket, std::size_t variant, const VariantRun& run);

  MultiKernelOptions options_;
  std::vector<std::string> names_;
  std::optional<std::size_t> forced_;
  bool use_stored_ = true;
  std::atomic<const Entry*> last_{nullptr};
  mutable std::shared_mutex entries_mutex_;
  std::map<ShapeKey, Entry> entries_;  // node-based: an Entry never moves or dies before *this
  std::mutex pick_mutex_;              // held while a bucket is picked; taken before entries_mutex_
  std::size_t benchmarks_ = 0;         // guarded by entries_mutex_
  std::optional<Error> cache_error_;   // the first one; guarded by entries_mutex_
  std::vector<MultiKernelFailure> failures_;  // guarded by entries_mutex_
  std::vector<std::size_t> reference_order_;
  std::string device_;
};

// One written argument's clone after a variant's run, as verify_outputs compares it.
struct ClonedOutput {
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  DType dtype = DType::kF32;
};

// Whether `outputs` (after the reference's run) can serve as the expected values: kOk, or the
// outcome and message of the first element that is unwritten (poison) or NaN.
[[nodiscard]] MultiKernelCore::VariantRun check_reference(const std::vector<ClonedOutput>& outputs);
// `actual` against `expected` (the reference's outputs, same order), each within `tolerance` or
// its dtype's default: kOk, or the first failing output's outcome and message.
[[nodiscard]] MultiKernelCore::VariantRun verify_outputs(const std::vector<ClonedOutput>& actual,
                                                         const std::vector<HostBuffer>& expected,
                                                         const std::optional<Tolerance>& tolerance);

// One run of variant i on freshly reset clones: the written arguments' contents after it (valid
// until the next call), or the failure of the run.
using RunOnce = std::function<Result<std::vector<ClonedOutput>>(std::size_t variant)>;
// The verification half of a pick, wherever the variants run: the reference (the first variant
// in core.reference_order() whose outputs are whole and sound), then every other variant against
// it. kOk runs are the ones to time; none is kOk when no reference was found.
[[nodiscard]] std::vector<MultiKernelCore::VariantRun> verify_variants(const MultiKernelCore& core,
                                                                       std::size_t variants,
                                                                       const RunOnce& run_once);

// The accessors MultiKernel and CudaMultiKernel share, over their core.
class MultiKernelAccess {
 public:
  [[nodiscard]] std::optional<std::string> picked(const ShapeKey& bucket) const {
    return core_->picked(bucket);
  }
  // Every variant excluded by verification so far, by bucket.
  [[nodiscard]] std::vector<MultiKernelFailure> failures() const { return core_->failures(); }
  // Every pick made or loaded, by bucket.
  [[nodiscard]] std::vector<MultiKernelPick> picks() const { return core_->picks(); }
  // How many buckets were benchmarked (not forced, not read from the cache).
  [[nodiscard]] std::size_t benchmarks_run() const { return core_->benchmarks_run(); }
  // The first tuning-cache failure (a pick is then kept in memory only).
  [[nodiscard]] std::optional<Error> cache_error() const { return core_->cache_error(); }

 protected:
  explicit MultiKernelAccess(std::unique_ptr<MultiKernelCore> core) : core_(std::move(core)) {}
  std::unique_ptr<MultiKernelCore> core_;
};

// The dtype of a pointee type where it is unambiguous (float, double, int8/32/64); nullopt for
// others (a std::uint16_t may hold f16 or bf16: Mutated::dtype says which).
template <class T>
constexpr std::optional<DType> dtype_of_pointee() {
  using U = std::remove_cv_t<std::remove_pointer_t<T>>;
  if constexpr (std::is_same_v<U, float>) return DType::kF32;
  if constexpr (std::is_same_v<U, double>) return DType::kF64;
  if constexpr (std::is_same_v<U, std::int8_t>) return DType::kI8;
  if constexpr (std::is_same_v<U, std::int32_t>) return DType::kI32;
  if constexpr (std::is_same_v<U, std::int64_t>) return DType::kI64;
  return std::nullopt;
}

template <class... Args>
constexpr std::array<std::optional<DType>, sizeof...(Args)> pointee_dtypes() {
  return {dtype_of_pointee<Args>()...};
}

template <class T>
inline constexpr bool kIsDataPointer =
    std::is_pointer_v<T>&& std::is_object_v<std::remove_pointer_t<T>>;

template <std::size_t I, class... Args>
const void* address_if(const std::tuple<Args...>& call, std::size_t index) {
  using T = std::tuple_element_t<I, std::tuple<Args...>>;
  if constexpr (kIsDataPointer<T>) {
    if (I == index) return static_cast<const void*>(std::get<I>(call));
  }
  return nullptr;
}

// The address held by pointer argument `index`, null for other arguments.
template <class... Args, std::size_t... I>
const void* address_at(const std::tuple<Args...>& call, std::size_t index,
                       std::index_sequence<I...>) {
  const void* out = nullptr;
  ((out = out ? out : address_if<I>(call, index)), ...);
  return out;
}

template <class T>
void redirect_one(T& arg, const void* from, void* to) {
  if constexpr (kIsDataPointer<T>) {
    if (static_cast<const void*>(arg) == from) arg = static_cast<T>(to);
  }
}

// Points every pointer argument equal to `from` at `to`, so that an in-place call (out == in)
// reads and writes the same clone.
template <class... Args>
void redirect(std::tuple<Args...>& call, const void* from, void* to) {
  std::apply([&](auto&... arg) { (redirect_one(arg, from, to), ...); }, call);
}

template <class... Args>
constexpr std::array<bool, sizeof...(Args)> pointer_args() {
  return {kIsDataPointer<Args>...};
}

// create()'s checks of MultiKernel and CudaMultiKernel: a bucket, a function per variant, each
// Mutated a data pointer with a size, and a dtype for each compared one (from the pointee type
// where unset; scratch without one is bytes, never compared).
template <class... Args, class Variant, class Bucket, class Mutated>
Status check_typed(const std::string& where, const std::vector<Variant>& variants, Bucket bucket,
                   std::vector<Mutated>& mutated) {
  constexpr auto pointers = pointer_args<Args...>();
  constexpr auto dtypes = pointee_dtypes<Args...>();
  if (bucket == nullptr) return make_error(ErrorCode::kInvalidArgument, where + ": no bucket");
  for (const Variant& v : variants) {
    if (v.fn == nullptr) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": variant '" + v.name + "' has no function");
    }
  }
  for (Mutated& m : mutated) {
    if (m.arg >= pointers.size() || !pointers[m.arg] || m.bytes == nullptr) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": mutated argument " + std::to_string(m.arg) +
                            " is not a data pointer with a size; expected one of " +
                            std::to_string(pointers.size()) + " arguments");
    }
    if (!m.dtype) m.dtype = dtypes[m.arg];
    if (m.dtype) continue;
    if (m.use != ArgUse::kScratch) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + ": mutated argument " + std::to_string(m.arg) +
                            " is compared but its pointee type names no dtype; set its dtype "
                            "(a 16-bit type may hold f16 or bf16), or use ArgUse::kScratch");
    }
    m.dtype = DType::kI8;
  }
  return {};
}

}  // namespace detail

template <class... Args>
class MultiKernel : public detail::MultiKernelAccess {
 public:
  using Fn = void (*)(Args...);
  struct Variant {
    std::string name;  // procedural and unique, e.g. "row_sum_looped_r64"
    Fn fn = nullptr;
  };
  using BucketFn = ShapeKey (*)(const Args&...);
  using Mutated = MutatedArg<Args...>;

  // kInvalidArgument: no variant, an empty or repeated name, a forced pick (options or an entry
  // of $KTUNE_FORCE_PICK naming this operation) that is no variant's name, a null function, a
  // Mutated index that is no data-pointer argument, a compared Mutated argument without a dtype,
  // an options.reference that is no variant's name.
  [[nodiscard]] static Result<MultiKernel> create(MultiKernelOptions options,
                                                  std::vector<Variant> variants, BucketFn bucket,
                                                  std::vector<Mutated> mutated = {}) {
    const std::string where = "MultiKernel '" + options.name + "'";
    if (Status s = detail::check_typed<Args...>(where, variants, bucket, mutated); !s) {
      return std::unexpected(s.error());
    }
    std::vector<std::string> names;
    names.reserve(variants.size());
    for (const Variant& v : variants) names.push_back(v.name);
    auto core = detail::MultiKernelCore::create(std::move(options), std::move(names));
    if (!core) return std::unexpected(core.error());
    return MultiKernel(std::move(*core), std::move(variants), bucket, std::move(mutated));
  }

  // Runs the bucket's pick on `args`; the first call of a bucket picks it first (forced, stored
  // or benchmarked on clones of the mutated arguments), then runs the pick once on `args`.
  void operator()(Args... args) {
    const ShapeKey bucket = bucket_(args...);
    const detail::MultiKernelCore::Entry* e = core_->last();
    if (e == nullptr || e->bucket != bucket) [[unlikely]] {
      e = core_->find_or_pick(bucket, [&] { return measure_all(args...); });
    }
    variants_[e->index].fn(args...);
  }

  [[nodiscard]] const std::vector<Variant>& variants() const { return variants_; }

 private:
  MultiKernel(std::unique_ptr<detail::MultiKernelCore> core, std::vector<Variant> variants,
              BucketFn bucket, std::vector<Mutated> mutated)
      : MultiKernelAccess(std::move(core)),
        variants_(std::move(variants)),
        bucket_(bucket),
        mutated_(std::move(mutated)) {}

  struct Clone {
    const void* from = nullptr;
    const Mutated* spec = nullptr;
    HostBuffer pristine;
    HostBuffer work;
  };

  // Every variant checked, then timed, on the same arguments, each starting from the caller's
  // data; the caller's mutated buffers are only read.
  std::vector<detail::MultiKernelCore::VariantRun> measure_all(const Args&... args) const {
    using VariantRun = detail::MultiKernelCore::VariantRun;
    const std::tuple<Args...> original{args...};
    std::tuple<Args...> call = original;
    std::vector<Clone> clones;
    for (const Mutated& m : mutated_) {
      const void* from = detail::address_at(original, m.arg, std::index_sequence_for<Args...>{});
      const std::size_t bytes = m.bytes(args...);
      bool seen = false;
      for (const Clone& c : clones) seen = seen || c.from == from;
      if (from == nullptr || bytes == 0 || seen) continue;
      Clone c{from, &m, HostBuffer::allocate(bytes, 0), HostBuffer::allocate(bytes, 0)};
      std::memcpy(c.pristine.data(), from, bytes);
      detail::redirect(call, from, c.work.data());
      clones.push_back(std::move(c));
    }
    const auto restore = [&](bool poison_outputs) {
      for (Clone& c : clones) {
        if (poison_outputs && c.spec->use == ArgUse::kOut) {
          c.work.poison(*c.spec->dtype);
        } else {
          std::memcpy(c.work.data(), c.pristine.data(), c.work.bytes());
        }
      }
    };
    const auto outputs = [&] {
      std::vector<detail::ClonedOutput> out;
      for (const Clone& c : clones) {
        if (c.spec->use == ArgUse::kScratch) continue;
        out.push_back({c.work.data(), c.work.bytes(), *c.spec->dtype});
      }
      return out;
    };
    std::vector<VariantRun> runs =
        detail::verify_variants(*core_, variants_.size(), [&](std::size_t i) {
          restore(true);
          std::apply(variants_[i].fn, call);
          return Result<std::vector<detail::ClonedOutput>>(outputs());
        });
    CpuBenchmarker bench(core_->bench_options());
    std::vector<std::pair<const void*, std::size_t>> ranges;
    for (const Clone& c : clones) ranges.emplace_back(c.work.data(), c.work.bytes());
    if (!ranges.empty()) bench.set_flush_ranges(std::move(ranges));
    for (std::size_t i = 0; i < variants_.size(); ++i) {
      if (runs[i].outcome != Outcome::kOk) continue;  // verified ones only
      restore(false);
      const Variant& v = variants_[i];
      Result<BenchStats> s = bench.measure([&]() -> Status {
        std::apply(v.fn, call);
        return {};
      });
      KTUNE_CHECK(s.has_value());  // the run above cannot fail
      runs[i].stats = *s;
    }
    return runs;
  }

  std::vector<Variant> variants_;
  BucketFn bucket_ = nullptr;
  std::vector<Mutated> mutated_;
};

// "1024x256x0x0": a bucket as the tuning cache's problem text.
[[nodiscard]] std::string shape_key_text(const ShapeKey& bucket);

}  // namespace ktune
