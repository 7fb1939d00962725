// HostBuffer: CPU memory for one argument, with redzones on both sides and poisoning, so that a
// candidate's out-of-bounds writes and unwritten outputs are caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ktune/core/dtype.h"

namespace ktune {

inline constexpr std::size_t kDefaultRedzoneBytes = 4096;
// Byte written over every redzone; any other byte there afterwards is a violation.
inline constexpr std::uint8_t kRedzoneByte = 0xCD;

class HostBuffer {
 public:
  HostBuffer() = default;
  // `bytes` of data (64-byte aligned) with `redzone_bytes` before and after, redzones filled.
  // The redzone is rounded up to a multiple of 64 so that the data stays aligned.
  [[nodiscard]] static HostBuffer allocate(std::size_t bytes,
                                           std::size_t redzone_bytes = kDefaultRedzoneBytes);

  [[nodiscard]] std::byte* data() { return base_.get() + redzone_bytes_; }
  [[nodiscard]] const std::byte* data() const { return base_.get() + redzone_bytes_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] std::size_t redzone_bytes() const { return redzone_bytes_; }

  // True when no byte of either redzone changed since allocate() or fill_redzones().
  [[nodiscard]] bool redzones_intact() const;
  void fill_redzones();
  // Fills the data with the poison pattern of `dtype` (poison_bits): a quiet NaN with a
  // recognisable payload for floats, a fixed odd value for integers.
  void poison(DType dtype);
  [[nodiscard]] HostBuffer clone() const;

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> base_;
  std::size_t bytes_ = 0;
  std::size_t redzone_bytes_ = 0;
};

// The poison pattern of `dtype` as an integer of its width (in the low bytes): what a device
// fills an output with (cuMemsetD16/D32) or compares an element against.
[[nodiscard]] std::uint64_t poison_bits(DType dtype);
// True when the element at `p` still holds the poison pattern of `dtype` (bitwise).
[[nodiscard]] bool is_poison(DType dtype, const std::byte* p);

}  // namespace ktune
