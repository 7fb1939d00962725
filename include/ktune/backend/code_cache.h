// CodeCache: compiled artifacts on disk, content-addressed, so nothing is compiled twice.
// Layout: <dir>/code/<key[0:2]>/<key>.<ext>, each file with <key>.<ext>.sha256 beside it (the
// SHA-256 of its bytes, recorded when it was committed). Writers fill a temporary created
// exclusively and rename it into place; find() serves a file only while it matches its record.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

// One compiled artifact as the code cache holds it: every file of one key.
struct CodeCacheEntry {
  std::string key;  // 32 hex digits (Artifact::key)
  // <key>.<ext> and their <key>.<ext>.sha256 records, in the key's shard folder.
  std::vector<std::filesystem::path> files;
  std::uintmax_t bytes = 0;
  // The latest access or modification time of its files (seconds since the epoch): when it was
  // last compiled or, where the file system records reads (atime, relatime), last loaded.
  std::int64_t last_used_unix = 0;
};

class CodeCache {
 public:
  explicit CodeCache(std::filesystem::path dir);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::filesystem::path path_for(std::string_view key, std::string_view ext) const;
  // The file when it is there and matches the digest recorded at commit (owned by this user,
  // not writable by others); a file that does not is a miss, with a warning on stderr, and the
  // caller's compile replaces it.
  [[nodiscard]] std::optional<std::filesystem::path> find(std::string_view key,
                                                          std::string_view ext) const;
  // A fresh file (empty, created exclusively, mode 0600) in the same folder as
  // path_for(key, ext), for a writer to fill. Missing folders are created 0700.
  [[nodiscard]] Result<std::filesystem::path> temp_path_for(std::string_view key,
                                                            std::string_view ext) const;
  // Records the SHA-256 of `temp`, then renames it onto path_for(key, ext) atomically; returns
  // the final path.
  [[nodiscard]] Result<std::filesystem::path> commit(const std::filesystem::path& temp,
                                                     std::string_view key,
                                                     std::string_view ext) const;
  // Removes the temporaries that writers killed before their rename left behind: ktune's by
  // name, this user's, their process gone and older than `min_age`. Returns how many.
  std::size_t sweep_temporaries(std::chrono::seconds min_age) const;
  // Removes this process's own temporaries, whatever their age: after Ctrl-C (the CLI), once no
  // compile of this process is running. Returns how many.
  std::size_t remove_own_temporaries() const;

  // Every artifact in the cache, by key (sorted): only the files this class names (<key>.<ext>
  // with a known extension, <key>.<ext>.sha256), only regular files, in shard folders that are
  // real folders named by the key's first two digits; links, temporaries and anything else are
  // left out and never followed.
  [[nodiscard]] std::vector<CodeCacheEntry> entries() const;
  // Removes the files of `entry` that are still regular files of that name (each artifact before
  // its digest record, so that a reader meets a miss, never a file without its record). Returns
  // the bytes freed; the first failure ends it with kIo.
  [[nodiscard]] Result<std::uintmax_t> remove(const CodeCacheEntry& entry) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace ktune
