// DispatchTable: what a Dispatcher serves, as the tuning side leaves it for a program that links
// only ktune::runtime: an operation's size names, its candidates (generated code as shared objects
// in the code cache), the default and the pick of every tuned shape. Written by `ktune tune
// --dispatch-table FILE` (or make_dispatch_table in ktune/tuning/spec_dispatcher.h); read here
// without the spec, the tuning cache or a compiler.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

struct DispatchTable {
  struct Candidate {
    std::string name;
    // A shared object with ktune_entry (CpuBackend's artifact); empty for a candidate that only a
    // loader of the tuning layer can run (a library call).
    std::filesystem::path artifact;
  };
  struct Tuned {
    std::vector<std::int64_t> sizes;  // size_names order
    std::size_t choice = 0;           // into candidates
  };
  std::string op;                       // the spec's name
  std::vector<std::string> size_names;  // the order that sizes are given in
  std::vector<Candidate> candidates;
  std::size_t default_choice = 0;  // served where no shape is tuned
  std::vector<Tuned> tuned;        // ties in nearness go to the first
};

// JSON: {"format": "ktune-dispatch-table", "version": 1, "op", "sizes", "candidates": [{"name",
// "artifact"}], "default": name, "tuned": [{"sizes": [...], "pick": name}]}. Artifacts are
// written absolute; a relative one read back is taken from the table's folder.
[[nodiscard]] std::string dispatch_table_json(const DispatchTable& table);
[[nodiscard]] Status write_dispatch_table(const std::filesystem::path& file,
                                          const DispatchTable& table);
// kParse with the file and the offending field; kInvalidArgument for names that refer to nothing.
[[nodiscard]] Result<DispatchTable> parse_dispatch_table(std::string_view text,
                                                         const std::filesystem::path& file);
[[nodiscard]] Result<DispatchTable> read_dispatch_table(const std::filesystem::path& file);

}  // namespace ktune
