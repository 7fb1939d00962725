// DType: element types of buffers and scalars, their sizes, names and conversions to double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

enum class DType : std::uint8_t { kF16, kBF16, kF32, kF64, kI8, kI32, kI64 };

inline constexpr DType kAllDTypes[] = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64,
                                       DType::kI8,  DType::kI32,  DType::kI64};

[[nodiscard]] std::size_t dtype_size(DType dtype);
// The spec name: "f16", "bf16", "f32", "f64", "i8", "i32", "i64".
[[nodiscard]] std::string_view dtype_name(DType dtype);
// Accepts the spec names and the aliases float16, bfloat16, float32/float, float64/double,
// int8, int32/int, int64.
[[nodiscard]] Result<DType> parse_dtype(std::string_view name);
[[nodiscard]] bool is_floating(DType dtype);
// The C++ type used for a scalar of this dtype in generated code ("float", "std::int64_t", ...).
// f16 and bf16 scalars are passed as their raw std::uint16_t bits.
[[nodiscard]] std::string_view dtype_cpp_scalar_type(DType dtype);

// Reads or writes one element at `p` as a double (f16/bf16 converted, integers exact up to 2^53).
[[nodiscard]] double load_element(DType dtype, const std::byte* p);
void store_element(DType dtype, std::byte* p, double value);

// IEEE half and bfloat16 conversions (round to nearest even).
[[nodiscard]] float half_bits_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_half_bits(float value);
[[nodiscard]] float bf16_bits_to_float(std::uint16_t bits);
[[nodiscard]] std::uint16_t float_to_bf16_bits(float value);

}  // namespace ktune
