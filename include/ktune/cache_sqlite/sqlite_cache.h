// The TuningCache that the CLI and the tuning layer use: SQLite (WAL) in the cache folder. Its own
// module (ktune::cache_sqlite), so that a program that only reads picks (ktune::runtime) does
// not link SQLite.
#pragma once

#include <filesystem>
#include <memory>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

// <dir>/tuning.sqlite3, created with the folder when missing.
[[nodiscard]] Result<std::unique_ptr<TuningCache>> open_sqlite_cache(
    const std::filesystem::path& dir);

}  // namespace ktune
