// Sizes that are each exact but whose product passes int64 are refused at load time, naming the
// arg and the problem, instead of overflowing TensorSpec's arithmetic (fuzz/fuzz_spec.cpp checks
// the same for every input).
#include <gtest/gtest.h>

#include <string>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;

std::string spec_with(const std::string& arg, const std::string& n) {
  return "name: big\nkernel: {source: add.cpp, entry: add}\nargs:\n  - " + arg +
         "\n  - {name: N, dtype: i64, value: N}\nproblems:\n  - {N: " + n + "}\n";
}

TEST(SpecSizeOverflow, ShapeProductPastInt64) {
  Result<Spec> spec =
      parse_inline(spec_with("{name: o, role: out, dtype: f32, shape: [N, N]}", "4294967296"));
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("args[0].shape: [N, N] is [4294967296, 4294967296] in "
                                      "problem 'N=4294967296' (arg 'o'); expected at most "
                                      "2^63 - 1 elements"),
            std::string::npos)
      << spec.error().message;
  // The same shape one step smaller fits.
  EXPECT_TRUE(
      parse_inline(spec_with("{name: o, role: out, dtype: i8, shape: [N, N]}", "3037000499")));
}

TEST(SpecSizeOverflow, StridedStoragePastInt64) {
  Result<Spec> spec = parse_inline(spec_with(
      "{name: o, role: out, dtype: f64, shape: [N, 2], strides: [N * 1000000, 1]}", "2147483648"));
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("args[0].strides: the storage that the sizes, strides and "
                                      "offset span in problem 'N=2147483648' (arg 'o'); expected "
                                      "at most 2^63 - 1 bytes"),
            std::string::npos)
      << spec.error().message;
}

}  // namespace
}  // namespace ktune
