// Small filesystem helpers with Status results, and the rules for ktune's own files: temporaries
// created exclusively under names that say whose they are, folders only this user can write.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/unique_fd.h"
#include "ktune/core/status.h"

namespace ktune {

[[nodiscard]] Result<std::string> read_file(const std::filesystem::path& path);
// Writes to a fresh temporary in the same folder (created exclusively, never through a link),
// then renames: readers never see a partial file.
[[nodiscard]] Status write_file_atomic(const std::filesystem::path& path, std::string_view data);
// $KTUNE_CACHE_DIR, else $XDG_CACHE_HOME/ktune, else ~/.cache/ktune. Not created here.
[[nodiscard]] std::filesystem::path default_cache_dir();

// Opens a new file with O_CREAT|O_EXCL|O_NOFOLLOW: a name someone planted (a file, a symlink to
// a file of ours) is an error, never opened or followed.
[[nodiscard]] Result<UniqueFd> create_exclusive(const std::filesystem::path& path,
                                                mode_t mode = 0600);
[[nodiscard]] Status write_all(int fd, std::string_view data, const std::filesystem::path& what);

// The name of one of ktune's temporaries: ".ktune-tmp.<pid>.<random>.<tail>". The prefix and the
// pid are what sweep_stale_temps() recognises; `tail` keeps the extension a compiler needs.
[[nodiscard]] std::string temp_file_name(std::string_view tail);
// Removes, in `folder` only, ktune's temporaries whose writer is gone: named by temp_file_name(),
// owned by this user, their pid no longer alive, and not modified for `min_age` (a pid seen dead
// from another pid namespace may be alive there). Returns how many were removed.
std::size_t sweep_stale_temps(const std::filesystem::path& folder, std::chrono::seconds min_age);
// Removes, in `folder` only, the temporaries this process named (temp_file_name) and left: after
// Ctrl-C, when every writer of this process has stopped. Returns how many were removed.
std::size_t remove_own_temps(const std::filesystem::path& folder);

// Creates the missing folders of `dir` with mode 0700; folders already there are left as they are
// (check_not_shared says whether they can be trusted).
[[nodiscard]] Status create_private_dirs(const std::filesystem::path& dir);
// Ok when only this user can change `path` (absent counts as ok); else kInvalidArgument saying why:
// owned by another user, or writable by group or others (a folder with the sticky bit, like /tmp,
// is fine: others cannot rename or delete what is ours in it).
[[nodiscard]] Status check_not_shared(const std::filesystem::path& path);

}  // namespace ktune
