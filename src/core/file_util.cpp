// File reading, atomic writes and the default cache folder.
#include "core/file_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ktune {

Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const bool missing = !std::filesystem::exists(path);
    return make_error(missing ? ErrorCode::kNotFound : ErrorCode::kIo,
                      fmt::format("{}: cannot read: {}", path.string(),
                                  missing ? "no such file" : std::strerror(errno)));
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp =
      path.string() + fmt::format(".tmp{}.{}", ::getpid(), counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return make_error(ErrorCode::kIo,
                        fmt::format("{}: cannot write: {}", tmp.string(), std::strerror(errno)));
    }
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      return make_error(ErrorCode::kIo, fmt::format("{}: write failed", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error(ErrorCode::kIo,
                      fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
  }
  return {};
}

std::filesystem::path default_cache_dir() {
  if (const char* d = std::getenv("KTUNE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return std::filesystem::path(x) / "ktune";
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    return std::filesystem::path(h) / ".cache" / "ktune";
  }
  return std::filesystem::temp_directory_path() / "ktune-cache";
}

}  // namespace ktune
