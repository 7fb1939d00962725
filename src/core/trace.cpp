// Chrome trace events appended to KTUNE_TRACE's file (trace.h).
#include "core/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

namespace ktune::trace {
namespace {

// The trace file's descriptor, or -1; opened on first use. O_NOFOLLOW: a link planted at the
// path (in /tmp, say) is not followed; 0600: the timeline names the user's kernels.
int open_trace() {
  const char* path = std::getenv("KTUNE_TRACE");
  if (path == nullptr || *path == '\0') return -1;
  const int fd =
      ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, S_IRUSR | S_IWUSR);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  // The first process to write starts the array; a worker opening it later sees it non-empty.
  if (st.st_size == 0) (void)!::write(fd, "[\n", 2);
  return fd;
}

int trace_fd() {
  static const int fd = open_trace();
  return fd;
}

}  // namespace

bool enabled() { return trace_fd() >= 0; }

std::int64_t now_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void complete(std::string_view name, std::string_view category, std::int64_t start_us,
              std::int64_t dur_us, std::string_view detail) {
  const int fd = trace_fd();
  if (fd < 0) return;
  nlohmann::json j = {{"name", std::string(name)},
                      {"cat", std::string(category)},
                      {"ph", "X"},
                      {"ts", start_us},
                      {"dur", dur_us},
                      {"pid", static_cast<long>(::getpid())},
                      {"tid", static_cast<long>(::syscall(SYS_gettid))}};
  if (!detail.empty()) j["args"] = {{"detail", std::string(detail)}};
  // Invalid UTF-8 in a kernel's name is replaced, never thrown.
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ",\n";
  (void)!::write(fd, line.data(), line.size());
}

Span::Span(std::string_view name, std::string_view category, std::string_view detail)
    : on_(enabled()) {
  if (!on_) return;
  start_us_ = now_us();
  name_ = name;
  category_ = category;
  detail_ = detail;
}

void Span::end() {
  if (!on_) return;
  on_ = false;
  complete(name_, category_, start_us_, now_us() - start_us_, detail_);
}

}  // namespace ktune::trace
