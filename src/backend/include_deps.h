// The user's headers a kernel source depends on, for cache identity: an edited header next to the
// kernel or in a -I folder must change both the code-cache key (or a stale object is loaded) and
// the tuning-cache key (or the old pick answers). Found by scanning `#include` lines recursively
// over the user's folders, without preprocessing: conditionals are not evaluated, so the set is a
// superset of what one config includes (an extra header costs a re-tune when it changes, a
// missing one would cost a wrong answer). System headers are left out: a folder given with
// -isystem or under /usr, and any name not found in a user folder. An #include whose name is a
// macro is not followed.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ktune {

struct IncludeDirs {
  std::vector<std::filesystem::path> quote;  // -iquote: for #include "..." only
  std::vector<std::filesystem::path> both;   // -I: for both forms
};

// The user folders among compiler flags (-I, -iquote; joined or as the next word), made absolute
// against the current folder, where the compiler runs.
[[nodiscard]] IncludeDirs user_include_dirs(const std::vector<std::string>& flags);

struct IncludeDep {
  std::string name;            // as written in the #include that first reached it
  std::filesystem::path path;  // where it was found
  std::string content_hash;    // of its bytes when scanned
};

// The headers `code` includes, directly or through each other, in a fixed order (a file's own
// includes, then theirs). `dir` is the folder of the file `code` came from (searched first for
// #include "..."; empty: none).
[[nodiscard]] std::vector<IncludeDep> scan_include_deps(std::string_view code,
                                                        const std::filesystem::path& dir,
                                                        const IncludeDirs& dirs);

// {"-I<folder of source_path>"}: the kernel's own folder as an include path, so that a header
// beside it is found although the compiler reads a copy in the code cache. None when empty.
[[nodiscard]] std::vector<std::string> source_include_flags(
    const std::filesystem::path& source_path);

// One hash over the names and contents of the headers `code` reaches through the user folders in
// `flags` (not over the folders, so that moving a project keeps its tuning records); empty when
// there are none.
[[nodiscard]] std::string include_deps_digest(std::string_view code,
                                              const std::vector<std::string>& flags);

}  // namespace ktune
