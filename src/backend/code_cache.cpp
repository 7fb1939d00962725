// CodeCache: <dir>/code/<key[0:2]>/<key>.<ext>. Writers fill a unique temporary name in the same
// folder and rename it into place, so readers never see a partial file and concurrent writers of
// the same key both succeed (the contents are identical by construction).
#include "ktune/backend/code_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <system_error>
#include <utility>

namespace ktune {
namespace {

std::uint64_t next_temp_counter() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

CodeCache::CodeCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path CodeCache::path_for(std::string_view key, std::string_view ext) const {
  std::string_view shard = key.substr(0, 2);
  return dir_ / "code" / std::string(shard) / fmt::format("{}.{}", key, ext);
}

std::optional<std::filesystem::path> CodeCache::find(std::string_view key,
                                                     std::string_view ext) const {
  std::filesystem::path p = path_for(key, ext);
  std::error_code ec;
  if (std::filesystem::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

Result<std::filesystem::path> CodeCache::temp_path_for(std::string_view key,
                                                       std::string_view ext) const {
  std::filesystem::path final_path = path_for(key, ext);
  std::filesystem::path folder = final_path.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, fmt::format("code cache: cannot create '{}': {}",
                                                  folder.string(), ec.message()));
  }
  std::random_device rd;
  std::uint64_t salt = (std::uint64_t{rd()} << 32) ^ rd();
  return folder /
         fmt::format(".tmp-{}-{}-{}-{:016x}.{}", key, ::getpid(), next_temp_counter(), salt, ext);
}

Result<std::filesystem::path> CodeCache::commit(const std::filesystem::path& temp,
                                                std::string_view key, std::string_view ext) const {
  std::filesystem::path final_path = path_for(key, ext);
  std::error_code ec;
  std::filesystem::create_directories(final_path.parent_path(), ec);
  std::filesystem::rename(temp, final_path, ec);
  if (ec) {
    return make_error(ErrorCode::kIo,
                      fmt::format("code cache: cannot rename '{}' to '{}': {}", temp.string(),
                                  final_path.string(), ec.message()));
  }
  return final_path;
}

}  // namespace ktune
