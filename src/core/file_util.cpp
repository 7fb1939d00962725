// File reading, atomic writes, the default cache folder, and ktune's own files: exclusive
// temporaries, their sweeping after a kill, private folders and the check of shared ones.
#include "core/file_util.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
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
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.parent_path() / temp_file_name(path.filename().string());
  {
    auto fd = create_exclusive(tmp, 0644);
    if (!fd) return std::unexpected(fd.error());
    if (Status s = write_all(fd->get(), data, tmp); !s) {
      std::filesystem::remove(tmp, ec);
      return s;
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

Result<UniqueFd> create_exclusive(const std::filesystem::path& path, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) {
    return make_error(ErrorCode::kIo,
                      fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
  }
  return fd;
}

Status write_all(int fd, std::string_view data, const std::filesystem::path& what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return make_error(ErrorCode::kIo,
                        fmt::format("{}: write failed: {}", what.string(), std::strerror(errno)));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

namespace {

constexpr std::string_view kTempPrefix = ".ktune-tmp.";

// The pid in a temp_file_name(), or 0 when the name is not one.
pid_t temp_owner(std::string_view name) {
  if (!name.starts_with(kTempPrefix)) return 0;
  name.remove_prefix(kTempPrefix.size());
  long pid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || end == name.data() || *end != '.' || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::string temp_file_name(std::string_view tail) {
  // Exclusive creation makes a clash an error, not a hijack; the random part makes it unlikely.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}{}.{:016x}.{}", kTempPrefix, ::getpid(), rng(), tail);
}

std::size_t sweep_stale_temps(const std::filesystem::path& folder, std::chrono::seconds min_age) {
  std::size_t removed = 0;
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    const pid_t pid = temp_owner(name);
    if (pid == 0 || process_alive(pid)) continue;
    struct stat st {};
    // lstat: a link is removed as a link, never followed; only this user's files are touched.
    if (::lstat(e.path().c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    std::error_code tec;
    const auto mtime = std::filesystem::last_write_time(e.path(), tec);
    if (tec || now - mtime < min_age) continue;
    if (std::filesystem::remove(e.path(), tec)) ++removed;
  }
  return removed;
}

std::size_t remove_own_temps(const std::filesystem::path& folder) {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    if (temp_owner(e.path().filename().string()) != ::getpid()) continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    std::error_code rec;
    if (std::filesystem::remove(e.path(), rec)) ++removed;
  }
  return removed;
}

Status create_private_dirs(const std::filesystem::path& dir) {
  std::filesystem::path built;
  for (const auto& part : dir) {
    built /= part;
    if (::mkdir(built.c_str(), 0700) != 0 && errno != EEXIST) {
      return make_error(ErrorCode::kIo, fmt::format("{}: cannot create folder: {}", built.string(),
                                                    std::strerror(errno)));
    }
  }
  return {};
}

Status check_not_shared(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  // A link is judged by its owner (who could re-point it) and then by what it names.
  if (S_ISLNK(st.st_mode) && st.st_uid == ::geteuid() && ::stat(path.c_str(), &st) != 0) return {};
  if (st.st_uid != ::geteuid()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{} is owned by user {}, not by this user ({})", path.string(),
                                  st.st_uid, ::geteuid()));
  }
  const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_dir) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{} is writable by {} (mode {:o}) without the sticky bit", path.string(),
                    (st.st_mode & S_IWOTH) != 0 ? "everyone" : "its group", st.st_mode & 07777));
  }
  return {};
}

}  // namespace ktune
