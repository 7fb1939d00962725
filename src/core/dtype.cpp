// DType names, sizes and element conversions, including IEEE half and bfloat16.
#include "ktune/core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace ktune {
namespace {

template <class T>
T load_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void store_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kI8:
      return 1;
  }
  KTUNE_CHECK(false);
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kI8:
      return "i8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
  }
  KTUNE_CHECK(false);
  return "";
}

Result<DType> parse_dtype(std::string_view name) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) return d;
  }
  struct Alias {
    std::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float16", DType::kF16}, {"half", DType::kF16},  {"bfloat16", DType::kBF16},
      {"float32", DType::kF32}, {"float", DType::kF32}, {"float64", DType::kF64},
      {"double", DType::kF64},  {"int8", DType::kI8},   {"int32", DType::kI32},
      {"int", DType::kI32},     {"int64", DType::kI64},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.dtype;
  }
  std::string expected;
  for (DType d : kAllDTypes) {
    if (!expected.empty()) expected += ", ";
    expected += dtype_name(d);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown dtype '" + std::string(name) + "'; expected one of " + expected);
}

bool is_floating(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 || dtype == DType::kF32 ||
         dtype == DType::kF64;
}

std::string_view dtype_cpp_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      return "std::uint16_t";
    case DType::kF32:
      return "float";
    case DType::kF64:
      return "double";
    case DType::kI8:
      return "std::int8_t";
    case DType::kI32:
      return "std::int32_t";
    case DType::kI64:
      return "std::int64_t";
  }
  KTUNE_CHECK(false);
  return "";
}

double load_element(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::kF16:
      return half_bits_to_float(load_as<std::uint16_t>(p));
    case DType::kBF16:
      return bf16_bits_to_float(load_as<std::uint16_t>(p));
    case DType::kF32:
      return load_as<float>(p);
    case DType::kF64:
      return load_as<double>(p);
    case DType::kI8:
      return load_as<std::int8_t>(p);
    case DType::kI32:
      return load_as<std::int32_t>(p);
    case DType::kI64:
      return static_cast<double>(load_as<std::int64_t>(p));
  }
  KTUNE_CHECK(false);
  return 0;
}

void store_element(DType dtype, std::byte* p, double value) {
  switch (dtype) {
    case DType::kF16:
      store_as(p, float_to_half_bits(static_cast<float>(value)));
      return;
    case DType::kBF16:
      store_as(p, float_to_bf16_bits(static_cast<float>(value)));
      return;
    case DType::kF32:
      store_as(p, static_cast<float>(value));
      return;
    case DType::kF64:
      store_as(p, value);
      return;
    case DType::kI8:
      store_as(p, static_cast<std::int8_t>(std::llround(value)));
      return;
    case DType::kI32:
      store_as(p, static_cast<std::int32_t>(std::llround(value)));
      return;
    case DType::kI64:
      store_as(p, static_cast<std::int64_t>(std::llround(value)));
      return;
  }
  KTUNE_CHECK(false);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  std::uint32_t mant = h & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf or NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half_bits(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow
  if (abs < 0x38800000u) {  // subnormal or zero in half
    if (abs < 0x33000000u) return sign;
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // 14..24
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));
  const std::uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  f += 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<std::uint16_t>(f >> 16);
}

}  // namespace ktune
