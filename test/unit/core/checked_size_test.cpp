// checked_numel and checked_storage_bytes: exact where TensorSpec's own arithmetic is, and
// nullopt where that arithmetic would pass int64; the codec refuses such a TensorSpec.
#include "core/checked_size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "core/json_codec.h"

namespace ktune {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(CheckedSize, AgreesWithTensorSpecWhereItFits) {
  TensorSpec t = TensorSpec::contiguous(DType::kF64, {3, 5, 7});
  EXPECT_EQ(checked_numel(t.sizes), t.numel());
  EXPECT_EQ(checked_storage_bytes(t), static_cast<std::int64_t>(t.storage_bytes()));
  t.strides = {40, 8, 1};  // padded rows, offset storage
  t.offset = 11;
  EXPECT_EQ(checked_storage_bytes(t), static_cast<std::int64_t>(t.storage_bytes()));
  t.sizes = {3, 0, 7};  // empty: no storage at all
  EXPECT_EQ(checked_storage_bytes(t), 0);
  EXPECT_EQ(checked_numel(std::vector<std::int64_t>{}), 1);
}

TEST(CheckedSize, RefusesWhatPassesInt64OrIsNegative) {
  const std::int64_t big = std::int64_t{1} << 32;
  EXPECT_FALSE(checked_numel(std::vector<std::int64_t>{big, big}));
  EXPECT_EQ(checked_numel(std::vector<std::int64_t>{big, big / 2 - 1}), big * (big / 2 - 1));
  EXPECT_FALSE(checked_numel(std::vector<std::int64_t>{-1, 2}));

  TensorSpec t = TensorSpec::contiguous(DType::kF32, {2, 3});
  t.strides = {std::int64_t{1} << 62, 1};  // the last index fits, its bytes do not
  EXPECT_FALSE(checked_storage_bytes(t));
  t.strides = {1, 1};
  t.offset = kMax;  // the offset alone
  EXPECT_FALSE(checked_storage_bytes(t));
  t.offset = 0;
  t.strides = {-1, 1};
  EXPECT_FALSE(checked_storage_bytes(t));
  t.strides = {1};  // one stride for two sizes
  EXPECT_FALSE(checked_storage_bytes(t));
}

TEST(CheckedSize, CodecRefusesAStorageThatOverflows) {
  Json j = Json::parse(
      R"({"dtype":"f32","device":{"kind":"cpu","index":0},"sizes":[4611686018427387904,4],)"
      R"("strides":[1,4611686018427387904],"offset":0})");
  JsonReader r(JsonWording::kProtocol);
  TensorSpec t;
  decode_json(r, j, "tensor", t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure()->path, "tensor");
  EXPECT_NE(r.failure()->what.find("2^63 - 1 bytes"), std::string::npos) << r.failure()->what;
}

}  // namespace
}  // namespace ktune
