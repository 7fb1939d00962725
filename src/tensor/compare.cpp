// compare: a candidate's output against the reference, element by element and in relative L2,
// with the outcome priority unwritten > NaN/Inf > wrong, and the message a user reads.
#include "ktune/tensor/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/parallel_for.h"

namespace ktune {
namespace {

enum class Verdict { kPass, kWrong, kNan, kUnwritten };

struct Element {
  double actual = 0;
  double expected = 0;
  Verdict verdict = Verdict::kPass;
};

Element check_element(DType dtype, const std::byte* a, const std::byte* e, const Tolerance& tol) {
  Element el{load_element(dtype, a), load_element(dtype, e), Verdict::kPass};
  const std::size_t size = dtype_size(dtype);
  if (!is_floating(dtype)) {
    // Integers compare exactly on their bits (i64 beyond 2^53 included). An integer poison value
    // that equals the reference is a correct value, not proof of an unwritten element.
    if (std::memcmp(a, e, size) == 0) return el;
    // Different bits differ by at least 1, even where the doubles round to the same value.
    const bool exact = tol.atol <= 0 && tol.rtol <= 0;
    if (is_poison(dtype, a)) {
      el.verdict = Verdict::kUnwritten;
    } else if (exact ||
               std::fabs(el.actual - el.expected) > tol.atol + tol.rtol * std::fabs(el.expected)) {
      el.verdict = Verdict::kWrong;
    }
    return el;
  }
  if (is_poison(dtype, a)) {
    el.verdict = Verdict::kUnwritten;
  } else if (std::isnan(el.actual) && std::isnan(el.expected) && tol.nan_ok) {
    // The output's NaN is legal (nan_ok) and the reference agrees on where: a pass.
  } else if (std::isnan(el.actual) || std::isnan(el.expected)) {
    // NaN never passes otherwise; a NaN where the reference is NaN too is a wrong result, not a
    // new NaN.
    el.verdict = std::isfinite(el.expected) ? Verdict::kNan : Verdict::kWrong;
  } else if (std::isinf(el.actual) || std::isinf(el.expected)) {
    if (el.actual != el.expected) {
      el.verdict = std::isfinite(el.expected) ? Verdict::kNan : Verdict::kWrong;
    }
  } else if (std::fabs(el.actual - el.expected) > tol.atol + tol.rtol * std::fabs(el.expected)) {
    el.verdict = Verdict::kWrong;
  }
  return el;
}

// "[3,17]" for linear index 3 * 32 + 17 of sizes {8, 32}.
std::string multi_index(const std::vector<std::int64_t>& sizes, std::int64_t linear) {
  std::vector<std::int64_t> index(sizes.size());
  for (std::size_t i = sizes.size(); i-- > 0;) {
    index[i] = linear % sizes[i];
    linear /= sizes[i];
  }
  return fmt::format("[{}]", fmt::join(index, ","));
}

std::string value_str(DType dtype, const std::byte* p, double value) {
  if (is_poison(dtype, p) && is_floating(dtype)) return "unwritten";
  return fmt::format("{:.6g}", value);
}

// True when element i of the view is storage element i (offset 0, row-major strides): the
// element loops then skip storage_index's divisions, most of their cost on large outputs.
bool row_major(const TensorSpec& spec) {
  if (spec.offset != 0) return false;
  std::int64_t step = 1;
  for (std::size_t i = spec.sizes.size(); i-- > 0;) {
    if (spec.sizes[i] != 1 && spec.strides[i] != step) return false;
    step *= spec.sizes[i];
  }
  return true;
}

// The common case, a flat view that passes, in one tight loop per dtype: every element within
// tolerance and finite (NaN, the floats' poison, fails the comparison), with the L2 sums. False
// when any element does not pass; the element loop below then says what and where (it also
// passes what this one is too strict for: equal infinities). Floats only: integers compare
// their bits (memcmp) first.
template <class T, class Load>
bool flat_pass(const std::byte* actual, const std::byte* expected, std::int64_t n,
               const Tolerance& tol, Load load, double* diff_sq, double* expected_sq) {
  const auto* a = reinterpret_cast<const T*>(actual);
  const auto* e = reinterpret_cast<const T*>(expected);
  double d2 = 0;
  double e2 = 0;
  bool bad = false;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = load(a[i]);
    const double y = load(e[i]);
    const double d = x - y;
    // Written so that NaN (poison included) and Inf make it false.
    bad |= !(std::fabs(d) <= tol.atol + tol.rtol * std::fabs(y));
    d2 += d * d;
    e2 += y * y;
  }
  *diff_sq = d2;
  *expected_sq = e2;
  return !bad;
}

// flat_pass for `dtype` over elements [0, n); false where it has none (integers).
bool fast_pass_range(DType dtype, const std::byte* actual, const std::byte* expected,
                     std::int64_t n, const Tolerance& tol, double* diff_sq, double* expected_sq) {
  switch (dtype) {
    case DType::kF32:
      return flat_pass<float>(
          actual, expected, n, tol, [](float v) { return double{v}; }, diff_sq, expected_sq);
    case DType::kF64:
      return flat_pass<double>(
          actual, expected, n, tol, [](double v) { return v; }, diff_sq, expected_sq);
    case DType::kBF16:
      return flat_pass<std::uint16_t>(
          actual, expected, n, tol,
          [](std::uint16_t v) { return double{std::bit_cast<float>(std::uint32_t{v} << 16)}; },
          diff_sq, expected_sq);
    case DType::kF16:
      return flat_pass<std::uint16_t>(
          actual, expected, n, tol, [](std::uint16_t v) { return double{half_bits_to_float(v)}; },
          diff_sq, expected_sq);
    case DType::kI8:
    case DType::kI32:
    case DType::kI64:
      return false;
  }
  return false;
}

// fast_pass_range over the whole flat view, on all usable cores for a large one (the checks run
// after every timed run of a kernel that itself uses them all).
bool fast_pass(DType dtype, const std::byte* actual, const std::byte* expected, std::int64_t n,
               const Tolerance& tol, double* diff_sq, double* expected_sq) {
  constexpr std::int64_t kGrain = std::int64_t{1} << 20;  // elements per thread, at least
  const std::size_t size = dtype_size(dtype);
  struct Part {
    bool passed = false;
    double d2 = 0;
    double e2 = 0;
  };
  std::vector<Part> parts(static_cast<std::size_t>(parallel_chunks(n, kGrain)));
  parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e, int chunk) {
    Part& part = parts[static_cast<std::size_t>(chunk)];
    const std::size_t at = static_cast<std::size_t>(b) * size;
    part.passed =
        fast_pass_range(dtype, actual + at, expected + at, e - b, tol, &part.d2, &part.e2);
  });
  *diff_sq = *expected_sq = 0;
  for (const Part& part : parts) {
    if (!part.passed) return false;
    *diff_sq += part.d2;
    *expected_sq += part.e2;
  }
  return true;
}

}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return {1e-9, 1e-12, 1e-9};
    case DType::kF32:
      return {1e-4, 1e-5, 1e-4};
    case DType::kF16:
    case DType::kBF16:
      return {2e-2, 1e-2, 1e-2};
    case DType::kI8:
    case DType::kI32:
    case DType::kI64:
      return {0, 0, 0};
  }
  KTUNE_CHECK(false);
  return {};
}

Tolerance output_tolerance(const ProblemArg& arg, const std::optional<Tolerance>& fallback) {
  Tolerance t = arg.tolerance ? *arg.tolerance
                : fallback    ? *fallback
                              : default_tolerance(arg.param.dtype);
  t.nan_ok = t.nan_ok || arg.nan_ok;
  return t;
}

Tolerance reduction_tolerance(DType dtype, std::int64_t terms) {
  Tolerance t = default_tolerance(dtype);
  if ((dtype == DType::kF32 || dtype == DType::kF64) && terms > 64) {
    t.atol *= static_cast<double>(terms) / 64.0;
  }
  // Half types: 8 units in the last place of the output's magnitude (bf16 2^-8, f16 2^-11).
  if (dtype == DType::kBF16 && terms > 1) t.rms_atol = 0x1p-5;
  if (dtype == DType::kF16 && terms > 1) t.rms_atol = 0x1p-8;
  return t;
}

Comparison compare(const TensorSpec& spec, const std::byte* actual, const std::byte* expected,
                   const Tolerance& given) {
  // The absolute allowance that scales with the output (rms_atol) from the reference's RMS.
  const Tolerance tolerance =
      given.rms_atol > 0 ? scaled_to_rms(given, view_rms(spec, expected)) : given;
  Comparison result;
  const DType dtype = spec.dtype;
  const std::size_t size = dtype_size(dtype);
  const std::int64_t n = spec.numel();
  std::int64_t unwritten = 0;
  std::int64_t nans = 0;
  double diff_sq = 0;
  double expected_sq = 0;
  const bool flat = row_major(spec);
  bool passed = false;
  if (flat && !is_floating(dtype)) {
    // Integers pass on equal bits (an integer poison value equal to the reference included).
    passed = n == 0 || std::memcmp(actual, expected, static_cast<std::size_t>(n) * size) == 0;
  } else if (flat) {
    passed = fast_pass(dtype, actual, expected, n, tolerance, &diff_sq, &expected_sq);
  }
  if (!passed) diff_sq = expected_sq = 0;  // the element loop sums them again
  for (std::int64_t i = 0; i < (passed ? 0 : n); ++i) {
    const std::size_t at = static_cast<std::size_t>(flat ? i : spec.storage_index(i)) * size;
    const Element el = check_element(dtype, actual + at, expected + at, tolerance);
    if (el.verdict == Verdict::kPass || el.verdict == Verdict::kWrong) {
      // Equal infinities pass and add nothing; the norms cover finite values only.
      if (std::isfinite(el.expected) && std::isfinite(el.actual)) {
        diff_sq += (el.actual - el.expected) * (el.actual - el.expected);
        expected_sq += el.expected * el.expected;
      }
    }
    if (el.verdict == Verdict::kPass) continue;
    ++result.mismatches;
    if (el.verdict == Verdict::kUnwritten) ++unwritten;
    if (el.verdict == Verdict::kNan) ++nans;
    if (result.first_bad < 0) {
      result.first_bad = i;
      result.actual_at_first_bad = el.actual;
      result.expected_at_first_bad = el.expected;
    }
  }
  // With an all-zero reference the relative norm is undefined; the absolute one stands in.
  result.rel_l2 = expected_sq > 0 ? std::sqrt(diff_sq / expected_sq) : std::sqrt(diff_sq);
  const bool l2_ok = result.rel_l2 <= tolerance.max_rel_l2;

  if (unwritten > 0) {
    result.outcome = Outcome::kUnwrittenOutput;
  } else if (nans > 0) {
    result.outcome = Outcome::kNanOutput;
  } else if (result.mismatches > 0 || !l2_ok) {
    result.outcome = Outcome::kWrongResult;
  }

  std::string kinds;
  if (unwritten > 0 && nans > 0) {
    kinds = fmt::format(" ({} unwritten, {} NaN/Inf)", unwritten, nans);
  } else if (unwritten > 0) {
    kinds = fmt::format(" ({} unwritten)", unwritten);
  } else if (nans > 0) {
    kinds = fmt::format(" ({} NaN/Inf)", nans);
  }
  std::string first;
  if (result.first_bad >= 0) {
    const std::size_t at = static_cast<std::size_t>(spec.storage_index(result.first_bad)) * size;
    first = fmt::format("; first at {}: {} vs {}", multi_index(spec.sizes, result.first_bad),
                        value_str(dtype, actual + at, result.actual_at_first_bad),
                        fmt::format("{:.6g}", result.expected_at_first_bad));
  }
  result.message =
      fmt::format("{} of {} elements differ{}{}; rel L2 {:.3g} {} {:g}", result.mismatches, n,
                  kinds, first, result.rel_l2, l2_ok ? "<=" : ">", tolerance.max_rel_l2);
  return result;
}

double view_rms(const TensorSpec& spec, const std::byte* storage) {
  const std::size_t size = dtype_size(spec.dtype);
  const bool flat = row_major(spec);
  // On every usable core (a reference output of 8192^2 elements takes half a second on one),
  // one partial sum per chunk, added in chunk order.
  constexpr std::int64_t kGrain = std::int64_t{1} << 18;
  std::vector<std::pair<double, std::int64_t>> parts(
      static_cast<std::size_t>(parallel_chunks(spec.numel(), kGrain)));
  parallel_for(spec.numel(), kGrain, [&](std::int64_t begin, std::int64_t end, int chunk) {
    double sum = 0;
    std::int64_t n = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t at = flat ? i : spec.storage_index(i);
      const double v = load_element(spec.dtype, storage + static_cast<std::size_t>(at) * size);
      if (!std::isfinite(v)) continue;
      sum += v * v;
      ++n;
    }
    parts[static_cast<std::size_t>(chunk)] = {sum, n};
  });
  double sum = 0;
  std::int64_t n = 0;
  for (const auto& [s, c] : parts) {
    sum += s;
    n += c;
  }
  return n > 0 ? std::sqrt(sum / static_cast<double>(n)) : 0;
}

bool view_is_dense(const TensorSpec& spec) {
  if (spec.offset != 0) return false;
  // Sorted by stride, each dimension of more than one element must step over exactly the
  // elements of the ones inside it.
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    if (spec.sizes[i] == 0) return true;  // empty: no storage at all
    if (spec.sizes[i] > 1) dims.emplace_back(spec.strides[i], spec.sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t step = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != step) return false;
    step *= size;
  }
  return true;
}

std::int64_t first_write_outside_view(const TensorSpec& spec, const std::byte* storage) {
  if (view_is_dense(spec)) return -1;
  const std::int64_t n = spec.storage_elements();
  std::vector<bool> addressed(static_cast<std::size_t>(n), false);
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    addressed[static_cast<std::size_t>(spec.storage_index(i))] = true;
  }
  const std::size_t size = dtype_size(spec.dtype);
  for (std::int64_t e = 0; e < n; ++e) {
    if (addressed[static_cast<std::size_t>(e)]) continue;
    if (!is_poison(spec.dtype, storage + static_cast<std::size_t>(e) * size)) return e;
  }
  return -1;
}

}  // namespace ktune
