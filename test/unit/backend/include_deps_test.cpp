// scan_include_deps and include_deps_digest: which headers count as the user's, recursion, cycles,
// and that the digest follows contents, not folders.
#include "backend/include_deps.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace ktune {
namespace {

void spill(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::vector<std::string> names(const std::vector<IncludeDep>& deps) {
  std::vector<std::string> out;
  for (const IncludeDep& d : deps) out.push_back(d.name);
  return out;
}

TEST(IncludeDeps, FollowsUserHeadersRecursivelyAndSkipsSystemOnes) {
  test::TempDir dir("include-deps");
  const auto root = dir.path();
  spill(root / "src" / "a.h", "#pragma once\n  #  include \"b.h\"\n#include <vector>\n");
  spill(root / "src" / "b.h", "#include \"a.h\"  // a cycle\n");
  spill(root / "inc" / "c.h", "// from -I\n");
  spill(root / "quote" / "q.h", "// from -iquote\n");
  spill(root / "quote" / "angle.h", "// -iquote is not searched for <...>\n");
  const std::string code =
      "#include \"a.h\"\n#include <c.h>\n#include \"q.h\"\n#include <angle.h>\n"
      "#include <stdio.h>\n#include MACRO_NAMED\n#include \"missing.h\"\n";
  const IncludeDirs dirs = user_include_dirs(
      {"-I" + (root / "src").string(), "-I", (root / "inc").string(), "-iquote",
       (root / "quote").string(), "-isystem", (root / "quote").string(), "-I/usr/include"});
  EXPECT_EQ(dirs.both.size(), 2u);  // /usr/include is the system's
  EXPECT_EQ(dirs.quote.size(), 1u);
  EXPECT_EQ(names(scan_include_deps(code, {}, dirs)),
            (std::vector<std::string>{"a.h", "c.h", "q.h", "b.h"}));
}

TEST(IncludeDepsDigest, ChangesWithAHeadersBytesNotWithItsFolder) {
  test::TempDir dir("include-deps");
  const std::string code = "#include \"h.h\"\nint f() { return H; }\n";
  spill(dir.path() / "one" / "h.h", "#define H 1\n");
  spill(dir.path() / "two" / "h.h", "#define H 1\n");
  const std::string one = include_deps_digest(code, {"-I" + (dir.path() / "one").string()});
  const std::string two = include_deps_digest(code, {"-I" + (dir.path() / "two").string()});
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, two);
  spill(dir.path() / "two" / "h.h", "#define H 2\n");
  EXPECT_NE(include_deps_digest(code, {"-I" + (dir.path() / "two").string()}), one);
  // No user header: no digest, so a self-contained kernel keeps its keys.
  EXPECT_EQ(include_deps_digest("#include <vector>\n", {}), "");
}

TEST(SourceIncludeFlags, NameTheSourcesFolder) {
  EXPECT_EQ(source_include_flags("/a/b/k.cpp"), (std::vector<std::string>{"-I/a/b"}));
  EXPECT_TRUE(source_include_flags({}).empty());
}

}  // namespace
}  // namespace ktune
