// JsonReader and the core types' codec: round trips through JSON text, both wordings of each
// kind of failure, and the first failure kept with its path.
#include "core/json_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace ktune {
namespace {

// `v` encoded, dumped, parsed and decoded again; fails the test on a decoding failure.
template <class T>
T round_trip(const T& v) {
  const Json j = Json::parse(json_dump(encode_json(v)));
  JsonReader r(JsonWording::kProtocol);
  T back{};
  decode_json(r, j, "", back);
  EXPECT_TRUE(r.ok()) << r.failure()->path << ": " << r.failure()->what;
  return back;
}

TEST(JsonCodec, TensorSpecAndLaunchSpecRoundTrip) {
  TensorSpec t;
  t.dtype = DType::kBF16;
  t.device = {DeviceKind::kOpenCL, 3};
  t.sizes = {2, 5};
  t.strides = {1, 4};
  t.offset = 9;
  EXPECT_EQ(round_trip(t), t);

  LaunchSpec l;
  l.kind = LaunchKind::kCudaLibrary;
  l.library = "cublaslt";
  l.algo = 3;
  l.bind = {0, 1, 2, 3, 4, 5, 6};
  l.library_epilogue = 2;
  l.alpha = 0.125;  // a folded scale (LaunchSpec::alpha) travels to the worker
  l.then.emplace_back();
  l.then[0].kind = LaunchKind::kCudaCubin;
  l.then[0].grid = {7, 1, 1};
  // TMA descriptors travel as their geometry; the launcher encodes them with the addresses.
  l.then[0].tensor_maps = {
      {.arg = 1, .dims = {4096, 777}, .row_stride_bytes = 8192, .box = {64, 128}},
      {.arg = 2,
       .dims = {1336, 4096},
       .row_stride_bytes = 2672,
       .box = {64, 64},
       .swizzle_bytes = 64}};
  EXPECT_EQ(round_trip(l), l);
  LaunchSpec no_maps = l;
  no_maps.then[0].tensor_maps.clear();
  EXPECT_NE(launch_key(l), launch_key(no_maps));  // a cached reference's identity includes them
}

TEST(JsonCodec, NonFiniteNumbersTravelAsStrings) {
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(json_number(1.5), 1.5);
  JsonReader r(JsonWording::kDocument);
  const Json j = {{"a", "nan"}, {"b", "inf"}, {"c", 2}};
  EXPECT_TRUE(std::isnan(r.f64(j, "", "a")));
  EXPECT_EQ(r.f64(j, "", "b"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.f64(j, "", "c"), 2.0);
  EXPECT_TRUE(r.ok());
}

struct Wordings {
  std::string protocol;
  std::string document;
};

// The failure of `read` in each wording, as "path: what".
template <class Read>
Wordings failures(Read read) {
  Wordings w;
  for (JsonWording wording : {JsonWording::kProtocol, JsonWording::kDocument}) {
    JsonReader r(wording);
    read(r);
    EXPECT_FALSE(r.ok());
    const std::string text = r.ok() ? "" : r.failure()->path + ": " + r.failure()->what;
    (wording == JsonWording::kProtocol ? w.protocol : w.document) = text;
  }
  return w;
}

TEST(JsonReader, WordsEachFailureInBothWordings) {
  const Json j = {{"s", 1}, {"n", -1}, {"o", "okk"}, {"big", std::int64_t{1} << 40}};
  Wordings w = failures([&](JsonReader& r) { (void)r.str(j, "x", "missing"); });
  EXPECT_EQ(w.protocol, "x.missing: expected a string, it is missing");
  EXPECT_EQ(w.document, "x.missing: missing");
  w = failures([&](JsonReader& r) { (void)r.str(j, "x", "s"); });
  EXPECT_EQ(w.protocol, "x.s: expected a string, got number");
  EXPECT_EQ(w.document, "x.s: expected string, got number");
  w = failures([&](JsonReader& r) { (void)r.integer(j, "", "n", 0, 10); });
  EXPECT_EQ(w.protocol, "n: expected an integer from 0 to 10, got -1");
  EXPECT_EQ(w.document, "n: -1 out of range; expected 0 to 10");
  w = failures([&](JsonReader& r) { (void)r.i32(j, "", "big"); });
  EXPECT_EQ(w.protocol, "big: expected a 32-bit integer, got 1099511627776");
  EXPECT_EQ(w.document, "big: 1099511627776 out of range; expected -2147483648 to 2147483647");
  w = failures([&](JsonReader& r) { (void)decode_outcome(r, j, "", "o"); });
  EXPECT_EQ(w.protocol, "o: unknown name 'okk'");
  EXPECT_EQ(w.document, "o: unknown outcome 'okk'");
  w = failures([&](JsonReader& r) { (void)r.object(Json::array(), "", "k"); });
  EXPECT_EQ(w.protocol, ": expected an object, got array");  // the caller names the root
  EXPECT_EQ(w.document, ": expected object, got array");
}

TEST(JsonReader, KeepsTheFirstFailureAndReadsDefaultsAfterIt) {
  const Json j = {{"a", "x"}, {"b", 7}};
  JsonReader r(JsonWording::kDocument);
  EXPECT_EQ(r.i64(j, "", "a"), 0);
  EXPECT_EQ(r.i64(j, "", "b"), 0);  // a default: decoding is already failed
  r.fail("c", "later");
  ASSERT_TRUE(r.failure());
  EXPECT_EQ(r.failure()->path, "a");
  EXPECT_EQ(r.failure()->what, "expected integer, got string");
}

TEST(JsonCodec, BadTensorSpecNamesTheField) {
  Json j = Json::parse(json_dump(encode_json(TensorSpec::contiguous(DType::kF32, {2, 3}))));
  j["sizes"][1] = -3;
  JsonReader r(JsonWording::kProtocol);
  TensorSpec t;
  decode_json(r, j, "args[0].tensor", t);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure()->path, "args[0].tensor.sizes[1]");
  EXPECT_EQ(r.failure()->what, "expected a size >= 0, got -3");
}

}  // namespace
}  // namespace ktune
