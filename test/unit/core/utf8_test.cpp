// utf8_prefix: a cut message never ends inside a character.
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace ktune {
namespace {

TEST(Utf8Prefix, CutsOnACharacterBoundary) {
  // "a‘b": ‘ is the three bytes E2 80 98 (as GCC quotes names).
  const std::string s =
      "a\xE2\x80\x98"
      "b";
  EXPECT_EQ(utf8_prefix(s, 10), s);
  EXPECT_EQ(utf8_prefix(s, 5), s);
  EXPECT_EQ(utf8_prefix(s, 4), "a\xE2\x80\x98");
  EXPECT_EQ(utf8_prefix(s, 3), "a");  // not a, E2, 80
  EXPECT_EQ(utf8_prefix(s, 2), "a");
  EXPECT_EQ(utf8_prefix(s, 1), "a");
  EXPECT_EQ(utf8_prefix(s, 0), "");
}

TEST(Utf8Prefix, BytesThatAreNotUtf8AreCutLikeCharacters) {
  const std::string s =
      "\xFF\xFE"
      "ab";
  EXPECT_EQ(utf8_prefix(s, 1), "\xFF");
  EXPECT_EQ(utf8_prefix(s, 3),
            "\xFF\xFE"
            "a");
  // Continuation bytes with no lead byte: nothing before them ends a character, so nothing is left.
  EXPECT_EQ(utf8_prefix("\x80\x80\x80", 2), "");
}

}  // namespace
}  // namespace ktune
