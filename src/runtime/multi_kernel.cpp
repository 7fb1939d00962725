// MultiKernelCore: the type-independent half of MultiKernel: validation, the forced pick from the
// options or the environment, the stored pick, the benchmark's bookkeeping, and the locks.
#include "ktune/runtime/multi_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "ktune/core/device.h"
#include "ktune/tensor/compare.h"

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<std::size_t> index_of(const std::vector<std::string>& names, std::string_view name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - names.begin());
}

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The variant that $KTUNE_FORCE_PICK forces for operation `name`: an entry "<name>=<variant>"
// wins over a bare "<variant>"; a bare variant that `names` lacks is meant for another operation.
Result<std::optional<std::size_t>> forced_from_env(const std::string& name,
                                                   const std::vector<std::string>& names) {
  const char* env = std::getenv("KTUNE_FORCE_PICK");
  if (env == nullptr) return std::nullopt;
  std::optional<std::size_t> bare;
  std::string_view rest = env;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (!bare) bare = index_of(names, item);
      continue;
    }
    if (trimmed(item.substr(0, eq)) != name) continue;
    const std::string_view variant = trimmed(item.substr(eq + 1));
    if (auto i = index_of(names, variant)) return i;
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("KTUNE_FORCE_PICK: operation '{}' has no variant '{}'; "
                                  "expected one of: {}",
                                  name, variant, joined(names)));
  }
  return bare;
}

bool env_is_one(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace

const char* pick_source_name(PickSource source) {
  switch (source) {
    case PickSource::kForced:
      return "forced";
    case PickSource::kStored:
      return "stored";
    case PickSource::kBenchmarked:
      return "benchmarked";
  }
  return "?";
}

std::string shape_key_text(const ShapeKey& bucket) {
  return fmt::format("{}", fmt::join(bucket, "x"));
}

namespace detail {

Result<std::unique_ptr<MultiKernelCore>> MultiKernelCore::create(MultiKernelOptions options,
                                                                 std::vector<std::string> names,
                                                                 std::string device) {
  const std::string where = fmt::format("MultiKernel '{}'", options.name);
  if (options.name.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "MultiKernel: the options have no name");
  }
  if (names.empty()) {
    return make_error(ErrorCode::kInvalidArgument, where + ": no variants; expected at least 1");
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: variant {} has no name", where, i));
    }
    if (index_of(names, names[i]) != i) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: variant name '{}' appears twice", where, names[i]));
    }
  }
  std::optional<std::size_t> forced;
  if (options.force_pick) {
    forced = index_of(names, *options.force_pick);
    if (!forced) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: force_pick '{}' is no variant; expected one of: {}", where,
                                    *options.force_pick, joined(names)));
    }
  } else {
    auto env = forced_from_env(options.name, names);
    if (!env) return std::unexpected(env.error());
    forced = *env;
  }
  std::vector<std::size_t> order;
  if (options.reference) {
    const auto r = index_of(names, *options.reference);
    if (!r) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: reference '{}' is no variant; expected one of: {}", where,
                                    *options.reference, joined(names)));
    }
    order.push_back(*r);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (order.empty() || order.front() != i) order.push_back(i);
  }
  const bool use_stored =
      options.use_stored_pick && !env_is_one("KTUNE_MULTI_KERNEL_DISABLE_CACHE");
  if (device.empty()) device = cpu_fingerprint();
  auto core = std::unique_ptr<MultiKernelCore>(new MultiKernelCore(
      std::move(options), std::move(names), forced, use_stored, std::move(device)));
  core->reference_order_ = std::move(order);
  return core;
}

MultiKernelCore::MultiKernelCore(MultiKernelOptions options, std::vector<std::string> names,
                                 std::optional<std::size_t> forced, bool use_stored,
                                 std::string device)
    : options_(std::move(options)),
      names_(std::move(names)),
      forced_(forced),
      use_stored_(use_stored),
      device_(std::move(device)) {}

TuningKey MultiKernelCore::key(const ShapeKey& bucket) const {
  // The set, not the order, counts: a stored winner is found again by name. Verified against
  // the reference variant with the tolerance: a pick made under other checks (or none, before
  // MultiKernel verified) is another key.
  const std::string& reference = names_[reference_order_.front()];
  return make_tuning_key(KeyInputs{"multi_kernel:" + options_.name, shape_key_text(bucket), names_,
                                   KeyVerification{reference, options_.tolerance, 0}, device_,
                                   "in-process"});
}

const MultiKernelCore::Entry* MultiKernelCore::find(const ShapeKey& bucket) const {
  std::shared_lock lock(entries_mutex_);
  const auto it = entries_.find(bucket);
  return it == entries_.end() ? nullptr : &it->second;
}

const MultiKernelCore::Entry* MultiKernelCore::find_or_pick(const ShapeKey& bucket,
                                                            const MeasureFn& measure) {
  const Entry* e = find(bucket);
  if (e == nullptr) {
    std::lock_guard pick_lock(pick_mutex_);
    e = find(bucket);  // another thread may have picked it while this one waited
    if (e == nullptr) {
      const Entry fresh = pick(bucket, measure);
      std::unique_lock lock(entries_mutex_);
      e = &entries_.emplace(bucket, fresh).first->second;
      if (fresh.source == PickSource::kBenchmarked) ++benchmarks_;
    }
  }
  last_.store(e, std::memory_order_release);
  return e;
}

MultiKernelCore::Entry MultiKernelCore::pick(const ShapeKey& bucket, const MeasureFn& measure) {
  if (forced_) return Entry{bucket, *forced_, PickSource::kForced};
  const TuningKey k = key(bucket);
  if (options_.cache != nullptr && use_stored_) {
    std::vector<CandidateId> ids;
    ids.reserve(names_.size());
    for (const std::string& n : names_) ids.push_back({n, n});  // a variant's name is its key
    auto stored = lookup_checked(*options_.cache, k, ids);
    if (!stored) {
      note_cache_error(stored.error());
    } else if (*stored) {
      // A winner that is no variant (a record written by hand) is ignored: benchmark again.
      if (auto i = index_of(names_, (*stored)->winner))
        return Entry{bucket, *i, PickSource::kStored};
    }
  }
  const auto t0 = Clock::now();
  const std::vector<VariantRun> runs = measure();
  const double bench_s = std::chrono::duration<double>(Clock::now() - t0).count();
  KTUNE_CHECK(runs.size() == names_.size());
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].outcome != Outcome::kOk) {
      note_failure(bucket, i, runs[i]);
      continue;
    }
    if (!runs[i].stats) continue;
    // Ties go to the earlier variant.
    if (!best || runs[i].stats->median_ns < runs[*best].stats->median_ns) best = i;
  }
  if (!best) {
    // No variant's outputs were whole (every reference candidate left an element unwritten or
    // NaN): the caller still gets a call, the designated reference's, and nothing is stored.
    return Entry{bucket, reference_order_.front(), PickSource::kBenchmarked};
  }
  if (options_.cache != nullptr) {
    TuningRecord record{k, names_[*best], {}, 0, 0, bench_s, std::nullopt, std::nullopt};
    record.created_unix = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      record.candidates.push_back(CandidateRecord{names_[i], names_[i], "", runs[i].outcome,
                                                  runs[i].message, runs[i].stats, 0});
    }
    if (Status s = options_.cache->store(record); !s) note_cache_error(s.error());
  }
  return Entry{bucket, *best, PickSource::kBenchmarked};
}

void MultiKernelCore::note_failure(const ShapeKey& bucket, std::size_t variant,
                                   const VariantRun& run) {
  MultiKernelFailure f{bucket, names_[variant], run.outcome, run.message};
  if (options_.report != nullptr) {
    fmt::print(options_.report,
               "ktune: MultiKernel '{}' bucket {}: variant '{}' excluded: {}: {}\n", options_.name,
               shape_key_text(bucket), f.variant, outcome_name(f.outcome), f.message);
  }
  std::unique_lock lock(entries_mutex_);
  failures_.push_back(std::move(f));
}

std::vector<MultiKernelFailure> MultiKernelCore::failures() const {
  std::shared_lock lock(entries_mutex_);
  return failures_;
}

MultiKernelCore::VariantRun check_reference(const std::vector<ClonedOutput>& outputs) {
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const ClonedOutput& out = outputs[o];
    const std::size_t size = dtype_size(out.dtype);
    for (std::size_t e = 0; e + size <= out.bytes; e += size) {
      const std::byte* p = out.data + e;
      if (is_poison(out.dtype, p)) {
        return {Outcome::kUnwrittenOutput,
                fmt::format("as the reference: written argument {}: element {} was never written",
                            o, e / size),
                std::nullopt};
      }
      if (is_floating(out.dtype) && std::isnan(load_element(out.dtype, p))) {
        return {
            Outcome::kNanOutput,
            fmt::format("as the reference: written argument {}: element {} is NaN", o, e / size),
            std::nullopt};
      }
    }
  }
  return {};
}

std::vector<MultiKernelCore::VariantRun> verify_variants(const MultiKernelCore& core,
                                                         std::size_t variants,
                                                         const RunOnce& run_once) {
  using VariantRun = MultiKernelCore::VariantRun;
  std::vector<VariantRun> runs(variants);
  std::vector<HostBuffer> expected;
  std::optional<std::size_t> reference;
  for (std::size_t r : core.reference_order()) {
    Result<std::vector<ClonedOutput>> out = run_once(r);
    if (!out) {
      runs[r] = {Outcome::kLaunchError, out.error().message};
      continue;
    }
    runs[r] = check_reference(*out);
    if (runs[r].outcome != Outcome::kOk) continue;
    for (const ClonedOutput& o : *out) {
      expected.push_back(HostBuffer::allocate(o.bytes, 0));
      std::memcpy(expected.back().data(), o.data, o.bytes);
    }
    reference = r;
    break;
  }
  for (std::size_t i = 0; i < variants; ++i) {
    // The reference, and the variants that failed before it as reference candidates.
    if (i == reference || runs[i].outcome != Outcome::kOk) continue;
    if (!reference) {
      runs[i] = {Outcome::kUnsupported,
                 "not verified: no variant's outputs could serve as the "
                 "reference"};
      continue;
    }
    Result<std::vector<ClonedOutput>> out = run_once(i);
    runs[i] = out ? verify_outputs(*out, expected, core.tolerance())
                  : VariantRun{Outcome::kLaunchError, out.error().message};
  }
  return runs;
}

MultiKernelCore::VariantRun verify_outputs(const std::vector<ClonedOutput>& actual,
                                           const std::vector<HostBuffer>& expected,
                                           const std::optional<Tolerance>& tolerance) {
  KTUNE_CHECK(actual.size() == expected.size());
  for (std::size_t o = 0; o < actual.size(); ++o) {
    const ClonedOutput& out = actual[o];
    const auto n = static_cast<std::int64_t>(out.bytes / dtype_size(out.dtype));
    TensorSpec spec;
    spec.dtype = out.dtype;
    spec.sizes = {n};
    spec.strides = {1};
    const Comparison c = compare(spec, out.data, expected[o].data(),
                                 tolerance ? *tolerance : default_tolerance(out.dtype));
    if (c.outcome != Outcome::kOk) {
      return {c.outcome, fmt::format("written argument {} against the reference: {}", o, c.message),
              std::nullopt};
    }
    // Bytes past the last whole element (a size that is not a multiple of the dtype's).
    const std::size_t whole = static_cast<std::size_t>(n) * dtype_size(out.dtype);
    if (std::memcmp(out.data + whole, expected[o].data() + whole, out.bytes - whole) != 0) {
      return {Outcome::kWrongResult,
              fmt::format("written argument {}: its last {} bytes differ from the reference's", o,
                          out.bytes - whole),
              std::nullopt};
    }
  }
  return {};
}

void MultiKernelCore::note_cache_error(Error error) {
  std::unique_lock lock(entries_mutex_);
  if (!cache_error_) cache_error_ = std::move(error);
}

std::optional<std::string> MultiKernelCore::picked(const ShapeKey& bucket) const {
  const Entry* e = find(bucket);
  if (e == nullptr) return std::nullopt;
  return names_[e->index];
}

std::vector<MultiKernelPick> MultiKernelCore::picks() const {
  std::shared_lock lock(entries_mutex_);
  std::vector<MultiKernelPick> out;
  for (const auto& [bucket, e] : entries_) out.push_back({bucket, names_[e.index], e.source});
  return out;
}

std::size_t MultiKernelCore::benchmarks_run() const {
  std::shared_lock lock(entries_mutex_);
  return benchmarks_;
}

std::optional<Error> MultiKernelCore::cache_error() const {
  std::shared_lock lock(entries_mutex_);
  return cache_error_;
}

}  // namespace detail
}  // namespace ktune
