// Small filesystem helpers with Status results.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

[[nodiscard]] Result<std::string> read_file(const std::filesystem::path& path);
// Writes to a temporary name in the same folder, then renames: readers never see a partial file.
[[nodiscard]] Status write_file_atomic(const std::filesystem::path& path, std::string_view data);
// $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else ~/.cache/ktune. Not created here.
[[nodiscard]] std::filesystem::path default_cache_dir();

}  // namespace ktune
