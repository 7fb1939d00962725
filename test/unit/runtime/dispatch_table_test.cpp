// Dispatcher::open_table: a program linking only ktune::runtime serves picks from a dispatch table
// (shared objects loaded with dlopen): exact, nearest and default, each call running the right
// kernel; the table's JSON round trip and its errors; what it cannot serve (a library pick, a
// negative size) refused.
#include "ktune/runtime/dispatch_table.h"

#include <gtest/gtest.h>

#include <array>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/runtime/dispatcher.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using Source = Dispatcher::Source;

// y[0] = VALUE: which candidate ran is in its output.
std::filesystem::path compile_fill(const CpuBackend& backend, int value) {
  KernelSource src;
  src.name = "fill_" + std::to_string(value);
  src.code = "void fill(float* y, int n) { if (n > 0) y[0] = VALUE; }\n";
  src.entry = "fill";
  src.signature = {{"y", ArgRole::kOut, DType::kF32}, {"n", ArgRole::kScalar, DType::kI32}};
  src.defines = {{"VALUE", std::to_string(value)}};
  auto artifact = backend.compile(src);
  EXPECT_TRUE(artifact) << artifact.error().message;
  return artifact ? artifact->path : std::filesystem::path();
}

class DispatchTableTest : public testing::Test {
 protected:
  void SetUp() override {
    CpuCompileOptions o;
    o.flags = {"-O1", "-shared", "-fPIC", "-std=c++17"};
    auto backend = CpuBackend::create(o, dir_.path() / "code");
    ASSERT_TRUE(backend) << backend.error().message;
    table_.op = "fill";
    table_.size_names = {"N", "K"};
    table_.candidates = {{"fill_1", compile_fill(*backend, 1)},
                         {"fill_2", compile_fill(*backend, 2)},
                         {"fill_3", compile_fill(*backend, 3)},
                         {"library", {}}};
    table_.default_choice = 2;
    table_.tuned = {{{16, 16}, 0}, {{256, 16}, 1}};
  }

  // The value the served kernel writes at these sizes.
  static float run(Dispatcher& d, std::array<std::int64_t, 2> sizes) {
    float y = 0;
    std::int32_t n = 1;
    void* args[] = {&y, &n};
    Status s = d.call(sizes, args);
    EXPECT_TRUE(s) << s.error().message;
    return y;
  }

  test::TempDir dir_{"dispatch-table"};
  DispatchTable table_;
};

TEST_F(DispatchTableTest, ServesExactNearestAndDefaultFromTheFile) {
  const auto file = dir_.path() / "fill.json";
  ASSERT_TRUE(write_dispatch_table(file, table_));
  auto d = Dispatcher::open_table(file);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ((*d)->size_names(), (std::vector<std::string>{"N", "K"}));
  EXPECT_EQ(run(**d, {16, 16}), 1);
  EXPECT_EQ(run(**d, {256, 16}), 2);
  EXPECT_EQ(run(**d, {200, 16}), 2);  // log2 distance 0.36 to 256, 3.64 to 16
  EXPECT_EQ(run(**d, {20, 16}), 1);
  auto near = (*d)->lookup(Sizes{{"K", 16}, {"N", 200}});
  ASSERT_TRUE(near) << near.error().message;
  EXPECT_EQ(near->source, Source::kNearest);
  EXPECT_EQ(*near->name, "fill_2");
  EXPECT_EQ((*d)->background_tunings(), 0);  // nothing tunes without the tuning layer
  EXPECT_TRUE((*d)->wait_for_background());

  DispatchTable untuned = table_;
  untuned.tuned.clear();
  auto plain = Dispatcher::create(untuned, make_shared_object_loader(untuned));
  ASSERT_TRUE(plain) << plain.error().message;
  auto served = (*plain)->lookup(std::array<std::int64_t, 2>{16, 16});
  ASSERT_TRUE(served);
  EXPECT_EQ(served->source, Source::kDefault);
  EXPECT_EQ(run(**plain, {16, 16}), 3);
}

TEST_F(DispatchTableTest, JsonRoundTripKeepsEveryFieldAndResolvesRelativeArtifacts) {
  auto back = parse_dispatch_table(dispatch_table_json(table_), dir_.path() / "t.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->op, "fill");
  EXPECT_EQ(back->size_names, table_.size_names);
  ASSERT_EQ(back->candidates.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(back->candidates[i].name, table_.candidates[i].name);
    EXPECT_EQ(back->candidates[i].artifact, table_.candidates[i].artifact);
  }
  EXPECT_EQ(back->default_choice, 2u);
  ASSERT_EQ(back->tuned.size(), 2u);
  EXPECT_EQ(back->tuned[1].sizes, (std::vector<std::int64_t>{256, 16}));
  EXPECT_EQ(back->tuned[1].choice, 1u);

  const std::string relative = R"({"format": "ktune-dispatch-table", "version": 1, "op": "f",
    "sizes": ["N"], "candidates": [{"name": "a", "artifact": "code/a.so"}], "default": "a",
    "tuned": []})";
  auto rel = parse_dispatch_table(relative, "/some/dir/t.json");
  ASSERT_TRUE(rel) << rel.error().message;
  EXPECT_EQ(rel->candidates[0].artifact, "/some/dir/code/a.so");
}

TEST_F(DispatchTableTest, BadTablesAreRefusedWithTheField) {
  auto expect_error = [](std::string_view text, ErrorCode code, const std::string& what) {
    auto t = parse_dispatch_table(text, "t.json");
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, code);
    EXPECT_NE(t.error().message.find(what), std::string::npos) << t.error().message;
  };
  expect_error("[1, 2", ErrorCode::kParse, "t.json: not JSON");
  expect_error(R"({"format": "ktune-tuning-cache", "version": 1})", ErrorCode::kParse,
               "expected format \"ktune-dispatch-table\" version 1");
  const std::string head = R"({"format": "ktune-dispatch-table", "version": 1, "op": "f",
    "sizes": ["N"], "candidates": [{"name": "a", "artifact": "a.so"}], )";
  expect_error(head + R"("default": "b", "tuned": []})", ErrorCode::kInvalidArgument,
               "default: 'b' is no candidate");
  expect_error(head + R"("default": "a", "tuned": [{"sizes": [1, 2], "pick": "a"}]})",
               ErrorCode::kInvalidArgument, "pick 'a' with 2 sizes");
  expect_error(head + R"("default": "a", "tuned": [{"sizes": "x", "pick": "a"}]})",
               ErrorCode::kParse, "tuned:");
}

TEST_F(DispatchTableTest, RefusesWhatGeneratedCodeCannotServe) {
  auto d = Dispatcher::create(table_, make_shared_object_loader(table_));
  ASSERT_TRUE(d) << d.error().message;
  auto negative = (*d)->lookup(std::array<std::int64_t, 2>{-4, 16});
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(negative.error().message.find("'N' is -4"), std::string::npos);
  auto count = (*d)->lookup(std::vector<std::int64_t>{16});
  ASSERT_FALSE(count);
  EXPECT_NE(count.error().message.find("1 sizes given; expected 2 (N, K)"), std::string::npos);
  EXPECT_EQ(run(**d, {16, 16}), 1);  // still serving

  DispatchTable library = table_;
  library.tuned.push_back({{64, 64}, 3});
  auto refused = Dispatcher::create(library, make_shared_object_loader(library));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("'library' has no shared object"), std::string::npos);
}

TEST(DispatchSourceName, NamesEachSource) {
  EXPECT_STREQ(dispatch_source_name(Dispatcher::Source::kExact), "exact");
  EXPECT_STREQ(dispatch_source_name(Dispatcher::Source::kNearest), "nearest");
  EXPECT_STREQ(dispatch_source_name(Dispatcher::Source::kDefault), "default");
}

}  // namespace
}  // namespace ktune
