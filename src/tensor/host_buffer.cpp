// HostBuffer: 64-byte aligned host memory with redzones on both sides, redzone checks, and the
// poison patterns that mark output elements a candidate never wrote.
#include "ktune/tensor/host_buffer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

#include "core/parallel_for.h"

namespace ktune {
namespace {

constexpr std::size_t kAlignment = 64;

// Rounded up so that data() = base + redzone stays aligned.
std::size_t round_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// The poison element of each dtype, as bits. Floats: quiet NaNs (quiet bit set, so arithmetic
// does not change them) with an 0xA5 payload; integers: a fixed odd value.
constexpr std::uint16_t kPoisonF16 = 0x7E5A;
constexpr std::uint16_t kPoisonBF16 = 0x7FE5;
constexpr std::uint32_t kPoisonF32 = 0x7FC0A5A5u;
constexpr std::uint64_t kPoisonF64 = 0x7FF8A5A5A5A5A5A5ull;
constexpr std::uint8_t kPoisonI8 = 0xA5;
constexpr std::uint32_t kPoisonI32 = 0xA5A5A5A5u;
constexpr std::uint64_t kPoisonI64 = 0xA5A5A5A5A5A5A5A5ull;

// The poison element of `dtype`, little-endian bytes; `size` is dtype_size(dtype).
struct PoisonPattern {
  std::array<std::byte, 8> bytes{};
  std::size_t size = 0;
};

template <class T>
PoisonPattern pattern_of(T bits) {
  PoisonPattern pattern;
  pattern.size = sizeof(T);
  std::memcpy(pattern.bytes.data(), &bits, sizeof(T));
  return pattern;
}

PoisonPattern poison_pattern(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return pattern_of(kPoisonF16);
    case DType::kBF16:
      return pattern_of(kPoisonBF16);
    case DType::kF32:
      return pattern_of(kPoisonF32);
    case DType::kF64:
      return pattern_of(kPoisonF64);
    case DType::kI8:
      return pattern_of(kPoisonI8);
    case DType::kI32:
      return pattern_of(kPoisonI32);
    case DType::kI64:
      return pattern_of(kPoisonI64);
  }
  KTUNE_CHECK(false);
  return {};
}

}  // namespace

std::uint64_t poison_bits(DType dtype) {
  const PoisonPattern pattern = poison_pattern(dtype);
  std::uint64_t bits = 0;
  std::memcpy(&bits, pattern.bytes.data(), pattern.size);  // little-endian: the low bytes
  return bits;
}

void HostBuffer::Free::operator()(std::byte* p) const {
  ::operator delete (p, std::align_val_t{kAlignment});
}

HostBuffer HostBuffer::allocate(std::size_t bytes, std::size_t redzone_bytes) {
  HostBuffer buffer;
  buffer.redzone_bytes_ = round_up(redzone_bytes);
  buffer.bytes_ = bytes;
  const std::size_t total = 2 * buffer.redzone_bytes_ + bytes;
  buffer.base_.reset(static_cast<std::byte*>(::operator new (total, std::align_val_t{kAlignment})));
  buffer.fill_redzones();
  return buffer;
}

bool HostBuffer::redzones_intact() const {
  if (!base_) return true;
  const auto clean = [](const std::byte* p, std::size_t n) {
    return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{kRedzoneByte}; });
  };
  return clean(base_.get(), redzone_bytes_) && clean(data() + bytes_, redzone_bytes_);
}

void HostBuffer::fill_redzones() {
  if (!base_) return;
  std::memset(base_.get(), kRedzoneByte, redzone_bytes_);
  std::memset(data() + bytes_, kRedzoneByte, redzone_bytes_);
}

// Fills whole elements of T's size with `bits`, then a trailing partial element (bytes not a
// multiple of the size) with the pattern's first bytes. Fixed-size copies: this runs before every
// timed run, over every output.
template <class T>
void fill_pattern(std::byte* p, std::size_t bytes, const PoisonPattern& pattern) {
  T bits;
  std::memcpy(&bits, pattern.bytes.data(), sizeof(T));
  const std::size_t whole = bytes / sizeof(T);
  for (std::size_t i = 0; i < whole; ++i) std::memcpy(p + i * sizeof(T), &bits, sizeof(T));
  std::memcpy(p + whole * sizeof(T), &bits, bytes - whole * sizeof(T));
}

void HostBuffer::poison(DType dtype) {
  const PoisonPattern pattern = poison_pattern(dtype);
  // Before every timed run, over every output: large outputs are filled on all usable cores,
  // in chunks of whole elements.
  const auto elements = static_cast<std::int64_t>(bytes_ / pattern.size);
  parallel_for(elements, (std::int64_t{4} << 20) / static_cast<std::int64_t>(pattern.size),
               [&](std::int64_t b, std::int64_t e, int) {
                 std::byte* p = data() + b * static_cast<std::int64_t>(pattern.size);
                 const std::size_t n = static_cast<std::size_t>(e - b) * pattern.size;
                 switch (pattern.size) {
                   case 1:
                     std::memset(p, static_cast<int>(pattern.bytes[0]), n);
                     return;
                   case 2:
                     return fill_pattern<std::uint16_t>(p, n, pattern);
                   case 4:
                     return fill_pattern<std::uint32_t>(p, n, pattern);
                   default:
                     return fill_pattern<std::uint64_t>(p, n, pattern);
                 }
               });
  // The bytes past the last whole element (a buffer whose size is not a multiple of one).
  const std::size_t tail = bytes_ - static_cast<std::size_t>(elements) * pattern.size;
  if (tail > 0) std::memcpy(data() + (bytes_ - tail), pattern.bytes.data(), tail);
}

HostBuffer HostBuffer::clone() const {
  HostBuffer copy;
  if (!base_) return copy;
  copy.bytes_ = bytes_;
  copy.redzone_bytes_ = redzone_bytes_;
  const std::size_t total = 2 * redzone_bytes_ + bytes_;
  copy.base_.reset(static_cast<std::byte*>(::operator new (total, std::align_val_t{kAlignment})));
  // On every usable core: the copy's page faults and bytes (hundreds of MB for a large problem).
  std::byte* to = copy.base_.get();
  const std::byte* from = base_.get();
  parallel_for(static_cast<std::int64_t>(total), std::int64_t{4} << 20,
               [&](std::int64_t b, std::int64_t e, int) {
                 std::memcpy(to + b, from + b, static_cast<std::size_t>(e - b));
               });
  return copy;
}

bool is_poison(DType dtype, const std::byte* p) {
  // Called for every output element of every check: fixed-size loads, not memcmp.
  const auto same = [p](auto bits) {
    decltype(bits) v;
    std::memcpy(&v, p, sizeof v);
    return v == bits;
  };
  switch (dtype) {
    case DType::kF16:
      return same(kPoisonF16);
    case DType::kBF16:
      return same(kPoisonBF16);
    case DType::kF32:
      return same(kPoisonF32);
    case DType::kF64:
      return same(kPoisonF64);
    case DType::kI8:
      return same(kPoisonI8);
    case DType::kI32:
      return same(kPoisonI32);
    case DType::kI64:
      return same(kPoisonI64);
  }
  KTUNE_CHECK(false);
  return false;
}

}  // namespace ktune
