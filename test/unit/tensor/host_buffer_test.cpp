// HostBuffer: alignment, redzone violations on either side, poison patterns, clone.
#include "ktune/tensor/host_buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ktune {
namespace {

TEST(HostBuffer, DataIsAlignedAndRedzonesStartIntact) {
  HostBuffer b = HostBuffer::allocate(100, 4096);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(b.bytes(), 100u);
  EXPECT_EQ(b.redzone_bytes(), 4096u);
  EXPECT_TRUE(b.redzones_intact());
  EXPECT_EQ(static_cast<std::uint8_t>(b.data()[-1]), kRedzoneByte);
  EXPECT_EQ(static_cast<std::uint8_t>(b.data()[100 + 4095]), kRedzoneByte);
}

TEST(HostBuffer, OddRedzoneIsRoundedUpToKeepAlignment) {
  HostBuffer b = HostBuffer::allocate(10, 10);
  EXPECT_EQ(b.redzone_bytes(), 64u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
}

TEST(HostBuffer, WritingTheDataLeavesRedzonesIntact) {
  HostBuffer b = HostBuffer::allocate(100);
  std::memset(b.data(), 0xCD ^ 0xFF, b.bytes());
  EXPECT_TRUE(b.redzones_intact());
}

TEST(HostBuffer, WriteOneBytePastTheEndIsDetected) {
  HostBuffer b = HostBuffer::allocate(100);
  b.data()[100] = std::byte{0};
  EXPECT_FALSE(b.redzones_intact());
  b.fill_redzones();
  EXPECT_TRUE(b.redzones_intact());
}

TEST(HostBuffer, WriteOneByteBeforeTheStartIsDetected) {
  HostBuffer b = HostBuffer::allocate(100);
  b.data()[-1] = std::byte{0};
  EXPECT_FALSE(b.redzones_intact());
}

TEST(HostBuffer, WriteAtFarEndOfTrailingRedzoneIsDetected) {
  HostBuffer b = HostBuffer::allocate(8, 64);
  b.data()[8 + 63] = std::byte{1};
  EXPECT_FALSE(b.redzones_intact());
}

TEST(HostBuffer, ZeroBytesWorks) {
  HostBuffer b = HostBuffer::allocate(0);
  EXPECT_EQ(b.bytes(), 0u);
  EXPECT_TRUE(b.redzones_intact());
  b.poison(DType::kF32);
  b.data()[0] = std::byte{0};  // first byte after the (empty) data: the trailing redzone
  EXPECT_FALSE(b.redzones_intact());
  HostBuffer c = b.clone();
  EXPECT_FALSE(c.redzones_intact());

  HostBuffer bare = HostBuffer::allocate(0, 0);
  EXPECT_TRUE(bare.redzones_intact());
  EXPECT_EQ(bare.clone().bytes(), 0u);
}

TEST(HostBuffer, DefaultConstructedIsEmpty) {
  HostBuffer b;
  EXPECT_EQ(b.bytes(), 0u);
  EXPECT_TRUE(b.redzones_intact());
  EXPECT_EQ(b.clone().bytes(), 0u);
}

TEST(HostBuffer, PoisonFloatsAreQuietNaNsRecognisedBitwise) {
  for (DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::size_t size = dtype_size(dtype);
    HostBuffer b = HostBuffer::allocate(4 * size);
    b.poison(dtype);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(is_poison(dtype, b.data() + i * size));
      EXPECT_TRUE(std::isnan(load_element(dtype, b.data() + i * size)));
    }
    // A NaN with another payload is not the poison.
    store_element(dtype, b.data(), std::nan(""));
    EXPECT_FALSE(is_poison(dtype, b.data()));
    store_element(dtype, b.data(), 0.5);
    EXPECT_FALSE(is_poison(dtype, b.data()));
    EXPECT_TRUE(b.redzones_intact());
  }
}

TEST(HostBuffer, PoisonPatternsHaveTheDocumentedBits) {
  HostBuffer b = HostBuffer::allocate(8);
  b.poison(DType::kF32);
  std::uint32_t f32 = 0;
  std::memcpy(&f32, b.data(), 4);
  EXPECT_EQ(f32, 0x7FC0A5A5u);
  b.poison(DType::kF16);
  std::uint16_t f16 = 0;
  std::memcpy(&f16, b.data(), 2);
  EXPECT_EQ(f16, 0x7E5A);
  b.poison(DType::kI32);
  std::uint32_t i32 = 0;
  std::memcpy(&i32, b.data() + 4, 4);
  EXPECT_EQ(i32, 0xA5A5A5A5u);
}

TEST(HostBuffer, PoisonIntsIsAFixedOddPattern) {
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    HostBuffer b = HostBuffer::allocate(3 * dtype_size(dtype));
    b.poison(dtype);
    for (std::size_t i = 0; i < b.bytes(); ++i)
      EXPECT_EQ(static_cast<std::uint8_t>(b.data()[i]), 0xA5);
    EXPECT_TRUE(is_poison(dtype, b.data() + dtype_size(dtype)));
    store_element(dtype, b.data(), 3);
    EXPECT_FALSE(is_poison(dtype, b.data()));
  }
}

TEST(HostBuffer, CloneIsDeepAndCopiesRedzones) {
  HostBuffer b = HostBuffer::allocate(16, 64);
  for (std::size_t i = 0; i < 16; ++i) b.data()[i] = std::byte(i);
  b.data()[16] = std::byte{7};  // a violation the clone must carry along
  HostBuffer c = b.clone();
  ASSERT_NE(c.data(), b.data());
  EXPECT_EQ(std::memcmp(c.data(), b.data(), 16), 0);
  EXPECT_FALSE(c.redzones_intact());
  b.data()[0] = std::byte{99};
  EXPECT_EQ(c.data()[0], std::byte{0});
  EXPECT_EQ(c.redzone_bytes(), 64u);
}

// poison_bits is the pattern poison() writes: its low bytes, stored as one element, are poison,
// and a buffer poisoned holds it in every element.
TEST(HostBuffer, PoisonBitsAreThePoisonOfOneElement) {
  for (DType dtype : kAllDTypes) {
    const std::uint64_t bits = poison_bits(dtype);
    std::byte element[8] = {};
    std::memcpy(element, &bits, dtype_size(dtype));
    EXPECT_TRUE(is_poison(dtype, element)) << dtype_name(dtype);
    HostBuffer b = HostBuffer::allocate(4 * dtype_size(dtype));
    b.poison(dtype);
    EXPECT_EQ(std::memcmp(b.data() + 3 * dtype_size(dtype), element, dtype_size(dtype)), 0)
        << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace ktune
