// fill_random: seeded, platform-independent random values for the elements a TensorSpec addresses.
// Values come from splitmix64 and are turned into numbers here (never through <random>'s
// distributions, whose output differs between standard libraries), so a recorded seed replays
// the same data everywhere. The stream follows the logical (row-major) order of the elements, so
// two layouts of the same sizes get the same logical tensor.
#include "ktune/tensor/tensor_fill.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/parallel_for.h"
#include "ktune/core/status.h"

namespace ktune {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  // The generator after `skip` draws: the state only counts, so any element's draw is one step
  // from its index (what lets fill_random split a tensor across cores, same values).
  SplitMix64(std::uint64_t seed, std::uint64_t skip) : state_(seed + skip * kGamma) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += kGamma);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  static constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  std::uint64_t state_;
};

// Uniform in [-1, 1) from the top 53 bits.
double uniform_pm1(std::uint64_t bits) {
  const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return 2.0 * unit - 1.0;
}

// Uniform integer in [-8, 8], by multiply-shift on the top 32 bits (bias below 1e-8).
double uniform_int(std::uint64_t bits) {
  const std::uint64_t k = ((bits >> 32) * 17u) >> 32;  // [0, 16]
  return static_cast<double>(static_cast<std::int64_t>(k) - 8);
}

// The largest value of `dtype` below 1, for values that rounding carried up to 1.
double largest_below_one(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 1.0 - 0x1.0p-11;
    case DType::kBF16:
      return 1.0 - 0x1.0p-8;
    case DType::kF32:
      return 1.0 - 0x1.0p-24;
    default:
      return 1.0 - 0x1.0p-53;
  }
}

// kStress: negative three times in four (two bits), so that sums of products keep their sign.
double stress_sign(std::uint64_t bits) { return (bits & 3u) == 0 ? 1.0 : -1.0; }

// (1 + u) * 2^e, e uniform in [lo, hi], from bits the sign did not use.
double stress_float(DType dtype, std::uint64_t bits) {
  const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
  const int lo = half ? -3 : -6;
  const int span = half ? 6 : 12;  // exponents in [lo, lo + span)
  const int e = lo + static_cast<int>(((bits >> 32) * static_cast<std::uint64_t>(span)) >> 32);
  const double u = static_cast<double>((bits >> 2) & ((1u << 29) - 1)) * 0x1.0p-29;  // [0, 1)
  return stress_sign(bits) * std::ldexp(1.0 + u, e);
}

double stress_int(DType dtype, std::uint64_t bits) {
  // Magnitudes uniform in [0, max]; i8 reaches -128 too.
  const std::uint64_t max = dtype == DType::kI8 ? 128 : dtype == DType::kI32 ? 1024 : 1u << 20;
  const std::uint64_t k = ((bits >> 32) * (max + 1)) >> 32;
  const double v = stress_sign(bits) * static_cast<double>(k);
  return dtype == DType::kI8 && v > 127 ? 127 : v;
}

// Box-Muller over two draws: platform-independent up to the last bits of log, sqrt and cos.
double standard_normal(SplitMix64& rng) {
  const double u1 = static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;        // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// An integer in [low, high], both whole numbers: low + floor(unit * count), capped at high for
// counts beyond 2^53 where the product rounds up.
double uniform_integer(std::uint64_t bits, double low, double high) {
  const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  return std::min(high, low + std::floor(unit * (high - low + 1.0)));
}

// arange: element k of the view's storage order (ascending storage index) gets k, so a
// transposed view reads 0, 1, 2, ... in memory, as numpy.arange(n) reshaped would.
void fill_arange(HostBuffer& buffer, const TensorSpec& spec) {
  std::vector<std::int64_t> at(static_cast<std::size_t>(spec.numel()));
  for (std::size_t i = 0; i < at.size(); ++i) {
    at[i] = spec.storage_index(static_cast<std::int64_t>(i));
  }
  std::sort(at.begin(), at.end());
  const std::size_t size = dtype_size(spec.dtype);
  for (std::size_t k = 0; k < at.size(); ++k) {
    store_element(spec.dtype, buffer.data() + static_cast<std::size_t>(at[k]) * size,
                  static_cast<double>(k));
  }
}

}  // namespace

const char* data_set_name(DataSet set) { return set == DataSet::kUniform ? "uniform" : "stress"; }

std::uint64_t argument_seed(std::uint64_t seed, std::size_t arg, DataSet set) {
  const std::uint64_t stream = seed * 1000003u + arg;
  return set == DataSet::kUniform ? stream : stream ^ 0x5EED5EED5EED5EEDull;
}

bool view_is_row_major_dense(const TensorSpec& spec) {
  std::int64_t step = 1;
  for (std::size_t i = spec.sizes.size(); i-- > 0;) {
    if (spec.sizes[i] != 1 && spec.strides[i] != step) return false;
    step *= spec.sizes[i];
  }
  return true;
}

void fill_random(HostBuffer& buffer, const TensorSpec& spec, std::uint64_t seed, DataSet set) {
  KTUNE_CHECK(buffer.bytes() >= spec.storage_bytes());
  const DType dtype = spec.dtype;
  const std::size_t size = dtype_size(dtype);
  const bool floating = is_floating(dtype);
  const bool flat = view_is_row_major_dense(spec);
  std::byte* base = buffer.data();
  // On every usable core (two 8192^2 inputs take seconds on one), each chunk's generator skipped
  // to its first element: the values do not depend on the split. Row-major dense views only: in
  // another view two logical elements may share storage (a stride of 0), where the last write
  // must win as it did in one pass; those are filled in one chunk.
  const std::int64_t grain = flat ? std::int64_t{1} << 18 : std::max<std::int64_t>(spec.numel(), 1);
  parallel_for(spec.numel(), grain, [&](std::int64_t begin, std::int64_t end, int) {
    SplitMix64 rng(seed, static_cast<std::uint64_t>(begin));
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t at = flat ? spec.offset + i : spec.storage_index(i);
      std::byte* p = base + static_cast<std::size_t>(at) * size;
      const std::uint64_t bits = rng.next();
      if (set == DataSet::kStress) {
        store_element(dtype, p, floating ? stress_float(dtype, bits) : stress_int(dtype, bits));
        continue;
      }
      if (!floating) {
        store_element(dtype, p, uniform_int(bits));
        continue;
      }
      store_element(dtype, p, uniform_pm1(bits));
      // Rounding to a narrow dtype can carry a value just below 1 up to 1; keep the range
      // half-open.
      if (load_element(dtype, p) >= 1.0) store_element(dtype, p, largest_below_one(dtype));
    }
  });
}

}  // namespace ktune

namespace ktune {

void fill_random(HostBuffer& buffer, const TensorSpec& spec, std::uint64_t seed, DataSet set,
                 const DataInit& init) {
  if (init.kind == InitKind::kRandom) return fill_random(buffer, spec, seed, set);
  // An npy file can fail to be read: ProblemBuffers fills it (fill_from_npy), never this.
  KTUNE_CHECK(init.kind != InitKind::kNpy);
  KTUNE_CHECK(buffer.bytes() >= spec.storage_bytes());
  if (init.kind == InitKind::kArange) return fill_arange(buffer, spec);
  const DType dtype = spec.dtype;
  const std::size_t size = dtype_size(dtype);
  SplitMix64 rng(seed);
  const std::int64_t n = spec.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::byte* p = buffer.data() + static_cast<std::size_t>(spec.storage_index(i)) * size;
    double v = 0;
    switch (init.kind) {
      case InitKind::kUniform: {
        const double unit = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
        v = init.a + (init.b - init.a) * unit;
        break;
      }
      case InitKind::kNormal:
        v = init.a + init.b * standard_normal(rng);
        break;
      case InitKind::kInt:
        v = uniform_integer(rng.next(), std::ceil(init.a), std::floor(init.b));
        break;
      case InitKind::kOnes:
        v = 1;
        break;
      default:  // kZeros (kRandom and kArange returned above)
        break;
    }
    store_element(dtype, p, v);
  }
}

}  // namespace ktune
