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

}  // namespace ktune::spec_test
