// Status and Result: context added to an error keeps its code, and every code has a name.
#include "ktune/core/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace ktune {
namespace {

Result<int> fails(ErrorCode code) { return make_error(code, "end of stream"); }

TEST(Status, WithContextPrefixesTheMessageAndKeepsTheCode) {
  const Error e = with_context(Error{ErrorCode::kEndOfStream, "end of stream"}, "read_frame");
  EXPECT_EQ(e.code, ErrorCode::kEndOfStream);
  EXPECT_EQ(e.message, "read_frame: end of stream");
}

TEST(Status, WithContextNestsOutermostFirst) {
  Result<int> r =
      with_context(with_context(fails(ErrorCode::kResourceExhausted), "inner"), "outer");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(r.error().message, "outer: inner: end of stream");
}

TEST(Status, WithContextLeavesAValueAlone) {
  Result<int> r = with_context(Result<int>(7), "unused");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 7);
  Status ok = with_context(Status(), "unused");
  EXPECT_TRUE(ok.has_value());
}

TEST(Status, EveryCodeHasItsOwnName) {
  const ErrorCode codes[] = {
      ErrorCode::kInvalidArgument, ErrorCode::kNotFound,          ErrorCode::kIo,
      ErrorCode::kParse,           ErrorCode::kCompile,           ErrorCode::kTimeout,
      ErrorCode::kUnavailable,     ErrorCode::kNoValidChoice,     ErrorCode::kInternal,
      ErrorCode::kEndOfStream,     ErrorCode::kResourceExhausted,
  };
  std::set<std::string_view> names;
  for (ErrorCode c : codes) {
    const std::string_view name = error_code_name(c);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_STREQ(error_code_name(ErrorCode::kEndOfStream), "end_of_stream");
  EXPECT_STREQ(error_code_name(ErrorCode::kResourceExhausted), "resource_exhausted");
}

}  // namespace
}  // namespace ktune
