// device_lock_name and DeviceLock::acquire (select/device_lock.h).
#include "select/device_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/file_util.h"
#include "core/hash.h"
#include "select/progress_line.h"
#include "select/resume.h"

namespace ktune {
namespace {

// The pid the holder wrote into the file; 0 when none could be read.
long holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  long pid = 0;
  if (n > 0) std::from_chars(buf, buf + n, pid);
  return pid;
}

void say(std::FILE* progress, const std::string& line) { progress_note(progress, line); }

}  // namespace

std::string device_lock_name(const Backend& backend) {
  switch (backend.kind()) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda-" + Hasher().add(backend.device_fingerprint()).hex().substr(0, 12);
    case DeviceKind::kOpenCL:
      return "opencl-" + Hasher().add(backend.device_fingerprint()).hex().substr(0, 12);
  }
  return "device";
}

Result<DeviceLock> DeviceLock::acquire(const std::filesystem::path& dir, const std::string& name,
                                       std::FILE* progress) {
  DeviceLock lock;
  if (dir.empty()) return lock;
  const std::filesystem::path file = dir / (name + ".lock");
  Status usable = create_private_dirs(dir);
  if (usable) usable = check_not_shared(dir);
  if (usable) usable = check_not_shared(file);
  if (!usable) {
    say(progress, fmt::format("warning: device lock {}: {}; measuring without it", file.string(),
                              usable.error().message));
    return lock;
  }
  // O_NOFOLLOW: a link planted under the name is refused, never followed. O_CLOEXEC: workers and
  // compilers must not inherit the lock and hold it past this process.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    say(progress, fmt::format("warning: device lock {}: {}; measuring without it", file.string(),
                              std::strerror(errno)));
    return lock;
  }
  lock.fd_ = UniqueFd(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      say(progress, fmt::format("warning: device lock {}: {}; measuring without it", file.string(),
                                std::strerror(errno)));
      lock.fd_ = UniqueFd();
      return lock;
    }
    const long pid = holder_pid(fd);
    say(progress, fmt::format("waiting for another ktune measuring on {}{}", name,
                              pid > 0 ? fmt::format(" (pid {})", pid) : std::string()));
    lock.waited_ = true;
    // Ctrl-C's handler has no SA_RESTART: flock returns EINTR and the flag says why.
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        say(progress, fmt::format("warning: device lock {}: {}; measuring without it",
                                  file.string(), std::strerror(errno)));
        lock.fd_ = UniqueFd();
        return lock;
      }
      if (interrupted()) {
        return make_error(
            ErrorCode::kUnavailable,
            fmt::format("interrupted while waiting for the device lock {}", file.string()));
      }
    }
  }
  // Who holds it, for the next one's message; the lock does not depend on it.
  const std::string me = std::to_string(::getpid());
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd, me.data(), me.size(), 0);
  }
  return lock;
}

}  // namespace ktune
