// CodeCache: <dir>/code/<key[0:2]>/<key>.<ext>. Writers fill a temporary created exclusively in
// the same folder (folders are created 0700) and rename it into place, so readers never see a
// partial file and concurrent writers of the same key both succeed. Each committed file has the
// SHA-256 of its bytes recorded beside it first; find() serves only files that still match it
// (backend/artifact_digest.h), so a file swapped in after compiling is compiled again, not used.
#include "ktune/backend/code_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <system_error>
#include <utility>

#include "backend/artifact_digest.h"
#include "core/file_util.h"

namespace ktune {

CodeCache::CodeCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path CodeCache::path_for(std::string_view key, std::string_view ext) const {
  std::string_view shard = key.substr(0, 2);
  return dir_ / "code" / std::string(shard) / fmt::format("{}.{}", key, ext);
}

std::optional<std::filesystem::path> CodeCache::find(std::string_view key,
                                                     std::string_view ext) const {
  std::filesystem::path p = path_for(key, ext);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) return std::nullopt;
  if (Result<std::string> ok = read_verified_artifact(p); !ok) {
    std::fputs(fmt::format("ktune: warning: code cache: {}; compiling again\n", ok.error().message)
                   .c_str(),
               stderr);
    return std::nullopt;
  }
  return p;
}

Result<std::filesystem::path> CodeCache::temp_path_for(std::string_view key,
                                                       std::string_view ext) const {
  std::filesystem::path folder = path_for(key, ext).parent_path();
  if (Status s = create_private_dirs(folder); !s) {
    return make_error(ErrorCode::kIo, "code cache: " + s.error().message);
  }
  // Created here, exclusively: the name is this writer's before any compiler opens it.
  std::filesystem::path tmp = folder / temp_file_name(fmt::format("{}.{}", key, ext));
  auto fd = create_exclusive(tmp);
  if (!fd) return make_error(ErrorCode::kIo, "code cache: " + fd.error().message);
  return tmp;
}

Result<std::filesystem::path> CodeCache::commit(const std::filesystem::path& temp,
                                                std::string_view key, std::string_view ext) const {
  std::filesystem::path final_path = path_for(key, ext);
  Result<std::string> bytes = read_file(temp);
  if (!bytes) {
    return make_error(ErrorCode::kIo, fmt::format("code cache: cannot commit '{}': {}",
                                                  temp.string(), bytes.error().message));
  }
  // Nobody but this user may change it once in place (a umask of 002 would let the group).
  struct stat st {};
  if (::stat(temp.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    ::chmod(temp.c_str(), st.st_mode & 0755);
  }
  if (Status s = create_private_dirs(final_path.parent_path()); !s) {
    return make_error(ErrorCode::kIo, "code cache: " + s.error().message);
  }
  // The digest first: a file in place always has its record (a reader that meets the record of
  // a concurrent writer's equal file still matches).
  if (Status s = record_artifact_digest(final_path, *bytes); !s) {
    return make_error(ErrorCode::kIo, "code cache: " + s.error().message);
  }
  std::error_code ec;
  std::filesystem::rename(temp, final_path, ec);
  if (ec) {
    return make_error(ErrorCode::kIo,
                      fmt::format("code cache: cannot rename '{}' to '{}': {}", temp.string(),
                                  final_path.string(), ec.message()));
  }
  return final_path;
}

std::size_t CodeCache::sweep_temporaries(std::chrono::seconds min_age) const {
  std::size_t removed = 0;
  std::error_code ec;
  const std::filesystem::path code = dir_ / "code";
  for (const auto& shard : std::filesystem::directory_iterator(code, ec)) {
    std::error_code sec;
    if (shard.is_directory(sec) && !shard.is_symlink(sec)) {
      removed += sweep_stale_temps(shard.path(), min_age);
    }
  }
  return removed;
}

std::size_t CodeCache::remove_own_temporaries() const {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& shard : std::filesystem::directory_iterator(dir_ / "code", ec)) {
    std::error_code sec;
    if (shard.is_directory(sec) && !shard.is_symlink(sec))
      removed += remove_own_temps(shard.path());
  }
  return removed;
}

}  // namespace ktune
