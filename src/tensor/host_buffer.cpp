// HostBuffer: 64-byte aligned host memory with redzones on both sides, redzone checks, and the
// poison patterns that mark output elements a candidate never wrote.
#include "ktune/tensor/host_buffer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

namespace ktune {
namespace {

constexpr std::size_t kAlignment = 64;

// Rounded up so that data() = base + redzone stays aligned.
std::size_t round_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

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
    // Quiet NaNs (quiet bit set, so arithmetic does not change them) with an 0xA5 payload.
    case DType::kF16:
      return pattern_of<std::uint16_t>(0x7E5A);
    case DType::kBF16:
      return pattern_of<std::uint16_t>(0x7FE5);
    case DType::kF32:
      return pattern_of<std::uint32_t>(0x7FC0A5A5u);
    case DType::kF64:
      return pattern_of<std::uint64_t>(0x7FF8A5A5A5A5A5A5ull);
    case DType::kI8:
      return pattern_of<std::uint8_t>(0xA5);
    case DType::kI32:
      return pattern_of<std::uint32_t>(0xA5A5A5A5u);
    case DType::kI64:
      return pattern_of<std::uint64_t>(0xA5A5A5A5A5A5A5A5ull);
  }
  KTUNE_CHECK(false);
  return {};
}

}  // namespace

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

void HostBuffer::poison(DType dtype) {
  const PoisonPattern pattern = poison_pattern(dtype);
  std::byte* p = data();
  // A trailing partial element (bytes not a multiple of the size) gets the pattern's first bytes.
  for (std::size_t i = 0; i < bytes_; i += pattern.size) {
    std::memcpy(p + i, pattern.bytes.data(), std::min(pattern.size, bytes_ - i));
  }
}

HostBuffer HostBuffer::clone() const {
  HostBuffer copy;
  if (!base_) return copy;
  copy.bytes_ = bytes_;
  copy.redzone_bytes_ = redzone_bytes_;
  const std::size_t total = 2 * redzone_bytes_ + bytes_;
  copy.base_.reset(static_cast<std::byte*>(::operator new (total, std::align_val_t{kAlignment})));
  std::memcpy(copy.base_.get(), base_.get(), total);
  return copy;
}

bool is_poison(DType dtype, const std::byte* p) {
  const PoisonPattern pattern = poison_pattern(dtype);
  return std::memcmp(p, pattern.bytes.data(), pattern.size) == 0;
}

}  // namespace ktune
