// render_mustache_keeping_lines: output lines keep the template's line numbers through #line.
#include <gtest/gtest.h>

#include "choice/mustache_render.h"

namespace ktune {
namespace {

using Vars = std::vector<std::pair<std::string, std::string>>;

TEST(MustacheKeepingLines, NoShiftNoDirective) {
  auto out = render_mustache_keeping_lines("t", "int a = {{X}};\nint b;", Vars{{"X", "3"}});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(*out, "int a = 3;\nint b;");
}

TEST(MustacheKeepingLines, ASectionLeftOutIsFollowedByTheNextLinesNumber) {
  const std::string text = "a\n{{#NO}}\nb\nc\n{{/NO}}\nd\n";
  auto out = render_mustache_keeping_lines("t", text, Vars{});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  // kainjow leaves the closing tag's line blank (line 2 of the output); d is the template's line 6.
  EXPECT_EQ(*out, "a\n\n#line 6\nd\n");
}

TEST(MustacheKeepingLines, TemplateLineDirectivesCount) {
  // Standalone tag lines go as mustache has them; after the template's own #line 1, a left-out
  // section names the number the compiler gives the line after it.
  const std::string text = "{{#X}}\nx\n{{/X}}\n#line 1\n{{#NO}}\ny\n{{/NO}}\nz";
  auto out = render_mustache_keeping_lines("t", text, Vars{{"X", "1"}});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(*out, "#line 2\nx\n#line 1\n\n#line 4\nz");
}

// A directive inside a macro's continuation would end the macro: the number is repaired after it.
TEST(MustacheKeepingLines, AContinuedLineIsNeverSplit) {
  const std::string text = "#define F(x) \\\n  a {{#NO}}\nq\n{{/NO}} b\nafter";
  auto out = render_mustache_keeping_lines("t", text, Vars{});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(*out, "#define F(x) \\\n  a  b\n#line 5\nafter");
}

TEST(MustacheKeepingLines, ErrorsAreTheRenderersErrors) {
  auto out = render_mustache_keeping_lines("t", "{{#X}} never closed", Vars{});
  ASSERT_FALSE(out.has_value());
  EXPECT_TRUE(out.error().message.starts_with("t: mustache: ")) << out.error().message;
}

}  // namespace
}  // namespace ktune
