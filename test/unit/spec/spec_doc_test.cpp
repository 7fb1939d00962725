// docs/spec.md keeps up with the parser: every key the parser accepts in each section, every
// extern kind, op and dtype appears in it. The accepted keys are asked of the parser itself (an
// unknown key's error lists them), so a key added to the code and not to the doc fails here.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "ktune/choice/extern_choice.h"
#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;

std::string spec_doc() {
  std::ifstream in(std::filesystem::path(KTUNE_SOURCE_DIR) / "docs" / "spec.md");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The keys listed by "unknown key; expected one of a, b, c" for the unknown key `zzz_unknown`.
std::vector<std::string> accepted_keys(const std::string& text) {
  Result<Spec> spec = parse_inline(text);
  EXPECT_FALSE(spec) << "accepted:\n" << text;
  if (spec) return {};
  const std::string& msg = spec.error().message;
  const std::string marker = "zzz_unknown: unknown key; expected one of ";
  const auto at = msg.find(marker);
  EXPECT_NE(at, std::string::npos) << msg;
  if (at == std::string::npos) return {};
  std::vector<std::string> keys;
  std::istringstream list(msg.substr(at + marker.size()));
  for (std::string key; std::getline(list, key, ',');) {
    key.erase(0, key.find_first_not_of(' '));
    keys.push_back(key);
  }
  return keys;
}

constexpr const char* kArgs = R"y(args:
  - {name: C, role: out, dtype: f32, shape: [n]}
  - {name: n, dtype: i64, value: n}
)y";
constexpr const char* kKernel = "kernel: {source: add.cpp, entry: add}\n";
constexpr const char* kProblems = "problems:\n  - {n: 8}\n";

struct Section {
  const char* label;
  std::string text;  // a spec whose only mistake is the key zzz_unknown in this section
  std::size_t at_least;
};

TEST(SpecDoc, EveryAcceptedKeyIsDocumented) {
  const std::string head = fmt::format("name: add\n{}{}{}", kKernel, kArgs, kProblems);
  const Section sections[] = {
      {"top level", fmt::format("{}zzz_unknown: 1\n", head), 12},
      {"kernel",
       fmt::format("name: add\nkernel: {{source: add.cpp, entry: add, zzz_unknown: 1}}\n{}{}",
                   kArgs, kProblems),
       5},
      {"args",
       fmt::format("name: add\n{}args:\n  - {{name: C, role: out, dtype: f32, shape: [n], "
                   "zzz_unknown: 1}}\n{}",
                   kKernel, kProblems),
       7},
      {"reference", fmt::format("{}reference: {{zzz_unknown: 1}}\n", head), 2},
      {"tolerance", fmt::format("{}tolerance: {{zzz_unknown: 1}}\n", head), 3},
      {"externs", fmt::format("{}externs:\n  - {{kind: openblas.gemm, zzz_unknown: 1}}\n", head),
       3},
      {"op", "name: g\nop: cuda.gemm\nzzz_unknown: 1\nproblems:\n  - {M: 8, N: 8, K: 8}\n", 6},
  };
  const std::string doc = spec_doc();
  ASSERT_FALSE(doc.empty());
  for (const Section& s : sections) {
    const std::vector<std::string> keys = accepted_keys(s.text);
    // A parser message that changed shape would otherwise check nothing.
    EXPECT_GE(keys.size(), s.at_least) << s.label;
    for (const std::string& key : keys) {
      EXPECT_THAT(doc, testing::HasSubstr(fmt::format("`{}`", key)))
          << s.label << ": key '" << key << "' is accepted but not in docs/spec.md";
    }
  }
}

TEST(SpecDoc, EveryExternKindOpAndDtypeIsDocumented) {
  const std::string doc = spec_doc();
  ASSERT_FALSE(doc.empty());
  ASSERT_FALSE(extern_kinds().empty());
  for (const std::string& kind : extern_kinds()) {
    EXPECT_THAT(doc, testing::HasSubstr(fmt::format("`{}`", kind))) << "extern kind " << kind;
  }
  ASSERT_FALSE(spec_ops().empty());
  for (const std::string& op : spec_ops()) {
    EXPECT_THAT(doc, testing::HasSubstr(fmt::format("`{}`", op))) << "op " << op;
  }
  for (DType d : kAllDTypes) {
    EXPECT_THAT(doc, testing::HasSubstr(fmt::format("`{}`", dtype_name(d)))) << "dtype";
  }
}

}  // namespace
}  // namespace ktune
