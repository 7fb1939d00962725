// A Problem's per-argument extras on the worker protocol: role scratch, an npy init (path and
// digest), an output's own tolerance and nan_ok travel and come back; unset ones are absent;
// what the worker must not act on is refused with its path.
#include <gtest/gtest.h>

#include "core/json_codec.h"

namespace ktune {
namespace {

Problem sample() {
  Problem p{"op", "n=4", {}};
  ProblemArg y{{"Y", ArgRole::kOut, DType::kF32}, TensorSpec::contiguous(DType::kF32, {4}), {}};
  y.tolerance = Tolerance{0.5, 0.25, 0.125};
  y.nan_ok = true;
  ProblemArg s{{"P", ArgRole::kScratch, DType::kF32}, TensorSpec::contiguous(DType::kF32, {8}), {}};
  ProblemArg x{{"X", ArgRole::kIn, DType::kF32}, TensorSpec::contiguous(DType::kF32, {4}), {}};
  x.init = DataInit{InitKind::kNpy, 0, 0, "/data/x.npy", "0123456789abcdef0123456789abcdef"};
  p.args = {y, s, x};
  return p;
}

TEST(ProblemChecksJson, RoundTrip) {
  const Problem p = sample();
  const Json j = Json::parse(json_dump(encode_json(p)));
  JsonReader r(JsonWording::kProtocol);
  Problem back;
  decode_json(r, j, "", back);
  ASSERT_TRUE(r.ok()) << r.failure()->path << ": " << r.failure()->what;
  EXPECT_EQ(back.key(), p.key());
  ASSERT_EQ(back.args.size(), 3u);
  ASSERT_TRUE(back.args[0].tolerance.has_value());
  EXPECT_EQ(back.args[0].tolerance->atol, 0.25);
  EXPECT_TRUE(back.args[0].nan_ok);
  EXPECT_EQ(back.args[1].param.role, ArgRole::kScratch);
  EXPECT_EQ(back.args[2].init, p.args[2].init);
}

TEST(ProblemChecksJson, UnsetChecksAreAbsent) {
  Problem p = sample();
  p.args[0].tolerance.reset();
  p.args[0].nan_ok = false;
  const std::string text = json_dump(encode_json(p));
  EXPECT_EQ(text.find("tolerance"), std::string::npos);
  EXPECT_EQ(text.find("nan_ok"), std::string::npos);
}

TEST(ProblemChecksJson, RefusesWhatTheWorkerMustNotUse) {
  Json j = Json::parse(json_dump(encode_json(sample())));
  j["args"][2]["init"]["path"] = "relative/x.npy";
  JsonReader r(JsonWording::kProtocol);
  Problem back;
  decode_json(r, j, "", back);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure()->path, "args[2].init.path");
  EXPECT_EQ(r.failure()->what, "expected an absolute path, got 'relative/x.npy'");

  j = Json::parse(json_dump(encode_json(sample())));
  j["args"][0]["tolerance"]["rtol"] = -1;
  JsonReader r2(JsonWording::kProtocol);
  decode_json(r2, j, "", back);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.failure()->path, "args[0].tolerance.rtol");
  EXPECT_EQ(r2.failure()->what, "expected a number >= 0, got -1");
}

}  // namespace
}  // namespace ktune
