// CodeCache: <dir>/code/<key[0:2]>/<key>.<ext>. Writers fill a temporary created exclusively in
// the same folder (folders are created 0700) and rename it into place, so readers never see a
// partial file and concurrent writers of the same key both succeed. Each committed file has the
// SHA-256 of its bytes recorded beside it first; find() serves only files that still match it
// (backend/artifact_digest.h), so a file swapped in after compiling is compiled again, not used.
#include "ktune/backend/code_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
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

namespace {

// The extensions the backends commit (cpu: so, cpp; cuda: cubin, cu, names; opencl: clbin, cl,
// clopt).
constexpr std::array<std::string_view, 8> kExtensions = {"so",    "cpp", "cubin", "cu",
                                                         "names", "cl",  "clbin", "clopt"};
constexpr std::size_t kKeyDigits = 32;

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The key of a file the code cache names ("<key>.<ext>" or "<key>.<ext>.sha256"), else empty.
std::string key_of(std::string_view name) {
  if (name.size() < kKeyDigits + 2 || name[kKeyDigits] != '.') return {};
  const std::string_view key = name.substr(0, kKeyDigits);
  if (!is_hex(key)) return {};
  std::string_view ext = name.substr(kKeyDigits + 1);
  if (ext.ends_with(".sha256")) ext.remove_suffix(7);
  if (std::find(kExtensions.begin(), kExtensions.end(), ext) == kExtensions.end()) return {};
  return std::string(key);
}

}  // namespace

std::vector<CodeCacheEntry> CodeCache::entries() const {
  std::map<std::string, CodeCacheEntry> by_key;
  std::error_code ec;
  for (const auto& shard : std::filesystem::directory_iterator(dir_ / "code", ec)) {
    std::error_code sec;
    const std::string shard_name = shard.path().filename().string();
    if (shard.is_symlink(sec) || !shard.is_directory(sec) || shard_name.size() != 2 ||
        !is_hex(shard_name)) {
      continue;
    }
    std::error_code fec;
    for (const auto& file : std::filesystem::directory_iterator(shard.path(), fec)) {
      const std::string name = file.path().filename().string();
      const std::string key = key_of(name);
      if (key.empty() || !key.starts_with(shard_name)) continue;
      struct stat st {};
      // lstat: a link is not a regular file here, and is never followed.
      if (::lstat(file.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      CodeCacheEntry& e = by_key[key];
      e.key = key;
      e.files.push_back(file.path());
      e.bytes += static_cast<std::uintmax_t>(st.st_size);
      e.last_used_unix = std::max<std::int64_t>(
          e.last_used_unix, std::max<std::int64_t>(st.st_atim.tv_sec, st.st_mtim.tv_sec));
    }
  }
  std::vector<CodeCacheEntry> out;
  out.reserve(by_key.size());
  for (auto& [key, entry] : by_key) {
    std::sort(entry.files.begin(), entry.files.end());
    out.push_back(std::move(entry));
  }
  return out;
}

Result<std::uintmax_t> CodeCache::remove(const CodeCacheEntry& entry) const {
  std::vector<std::filesystem::path> files = entry.files;
  // The artifacts first, their digest records after.
  std::stable_partition(files.begin(), files.end(),
                        [](const std::filesystem::path& p) { return p.extension() != ".sha256"; });
  std::uintmax_t freed = 0;
  for (const std::filesystem::path& p : files) {
    // Only what entries() would list now: a file replaced by a link since is left alone.
    if (p.parent_path().parent_path() != dir_ / "code" ||
        key_of(p.filename().string()) != entry.key) {
      continue;
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlink(p.c_str()) != 0) {
      if (errno == ENOENT) continue;  // removed by another process meanwhile
      return make_error(ErrorCode::kIo, fmt::format("code cache: cannot remove '{}': {}",
                                                    p.string(), std::strerror(errno)));
    }
    freed += static_cast<std::uintmax_t>(st.st_size);
  }
  return freed;
}

}  // namespace ktune
