// Helpers shared by the spec module's tests: fixture paths and inline specs.
#pragma once

#include <filesystem>
#include <string>

#include "ktune/spec/spec.h"

namespace ktune::spec_test {

inline std::filesystem::path specs_dir() {
  return std::filesystem::path(KTUNE_SOURCE_DIR) / "test" / "data" / "specs";
}

// Parses `text` as if it were the file test/data/specs/inline.yaml, so that kernel sources
// resolve against the fixtures.
inline Result<Spec> parse_inline(const std::string& text) {
  return parse_spec(text, specs_dir() / "inline.yaml");
}

// The valid head that most inline specs share (lines 1-6: the add kernel of
// test/data/specs/add.cpp and its arguments); a test appends its problems and its own lines.
inline constexpr const char* kAddHead = R"y(name: add
kernel: {source: add.cpp, entry: add}
args:
  - {name: C, role: out, dtype: f32, shape: [n]}
  - {name: A, role: in, dtype: f32, shape: [n]}
  - {name: n, dtype: i64, value: n}
)y";
// One problem, n = 8 (lines 7-8 after kAddHead).
inline constexpr const char* kOneProblem = "problems:\n  - {n: 8}\n";

}  // namespace ktune::spec_test
