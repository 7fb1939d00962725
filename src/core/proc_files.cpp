// A process's small /proc files (proc_files.h).
#include "core/proc_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/unique_fd.h"

namespace ktune {

std::optional<std::string> read_proc_file(const char* path) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::string> read_proc_file(pid_t pid, const char* file) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), file);
  return read_proc_file(path);
}

std::vector<pid_t> proc_numeric_entries(const char* path) {
  std::vector<pid_t> out;
  DIR* dir = ::opendir(path);
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && v > 0) out.push_back(static_cast<pid_t>(v));
  }
  ::closedir(dir);
  return out;
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  const std::optional<std::string> text = read_proc_file(pid, "stat");
  if (!text) return std::nullopt;
  const std::size_t close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return std::nullopt;
  ProcStat s;
  s.state = (*text)[close + 2];
  const char* p = text->c_str() + close + 3;
  // The fields after the state, from 1: ppid (stat's field 4), utime 11 (14) to cstime 14 (17),
  // starttime 19 (22).
  for (int field = 1; field <= 19 && *p != '\0'; ++field) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p) break;
    switch (field) {
      case 1:
        s.ppid = static_cast<pid_t>(v);
        break;
      case 11:
        s.utime = v;
        break;
      case 12:
        s.stime = v;
        break;
      case 13:
        s.cutime = v;
        break;
      case 14:
        s.cstime = v;
        break;
      case 19:
        s.start_time = v;
        break;
      default:
        break;
    }
    p = end;
  }
  return s;
}

std::optional<std::size_t> proc_kib_field(const std::string& text, const char* field) {
  const char* at = std::strstr(text.c_str(), field);
  if (at == nullptr) return std::nullopt;
  return static_cast<std::size_t>(std::strtoull(at + std::strlen(field), nullptr, 10)) * 1024;
}

std::optional<std::size_t> proc_kib_field(pid_t pid, const char* file, const char* field) {
  const std::optional<std::string> text = read_proc_file(pid, file);
  if (!text) return std::nullopt;
  return proc_kib_field(*text, field);
}

std::optional<ProcMemory> read_proc_memory(pid_t pid) {
  const std::optional<std::string> status = read_proc_file(pid, "status");
  if (!status) return std::nullopt;
  const std::optional<std::size_t> resident = proc_kib_field(*status, "VmRSS:");
  if (!resident) return std::nullopt;
  return ProcMemory{*resident, proc_kib_field(*status, "VmSize:").value_or(0)};
}

std::vector<pid_t> proc_children(pid_t pid) {
  std::vector<pid_t> out;
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  for (pid_t tid : proc_numeric_entries(path)) {
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid),
                  static_cast<int>(tid));
    const std::optional<std::string> text = read_proc_file(path);
    if (!text) continue;
    const char* p = text->c_str();
    for (;;) {
      char* end = nullptr;
      const long v = std::strtol(p, &end, 10);
      if (end == p) break;
      out.push_back(static_cast<pid_t>(v));
      p = end;
    }
  }
  return out;
}

bool proc_children_files() {
  static const bool exist = ::access("/proc/thread-self/children", R_OK) == 0;
  return exist;
}

}  // namespace ktune
