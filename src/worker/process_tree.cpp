// Process trees and threads through /proc (process_tree.h).
//
// Only small files are read, each with one read() into a stack buffer: the parent calls these
// every 10 ms while a candidate runs, and the guardian calls kill_tree while ktune is dying.
#include "worker/process_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/unique_fd.h"

namespace ktune::worker_detail {
namespace {

// The file's first bytes (at most 4 KiB: every file read here is shorter), or nullopt with
// errno set when it cannot be opened or read.
std::optional<std::string> read_small(const char* path) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

// The numeric entries of a /proc folder (pids, or thread ids under task/).
std::vector<pid_t> numeric_entries(const char* path) {
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

struct StatLine {
  char state = '?';
  pid_t ppid = 0;
  std::uint64_t start_time = 0;
};

// /proc/<pid>/stat past the command name (which may hold spaces and parentheses).
std::optional<StatLine> read_stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const std::optional<std::string> text = read_small(path);
  if (!text) return std::nullopt;
  const std::size_t close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return std::nullopt;
  StatLine s;
  s.state = (*text)[close + 2];
  const char* p = text->c_str() + close + 3;
  // Fields after the state: ppid is the first, starttime the 19th.
  for (int field = 1; field <= 19 && *p != '\0'; ++field) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (field == 1) s.ppid = static_cast<pid_t>(v);
    if (field == 19) s.start_time = v;
    p = end;
  }
  return s;
}

// Whether the kernel has children files (CONFIG_PROC_CHILDREN): asked once, of ourselves.
bool children_files_exist() {
  static const bool exist = ::access("/proc/thread-self/children", R_OK) == 0;
  return exist;
}

// The direct children of `pid`, from each of its threads' children files.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  for (pid_t tid : numeric_entries(path)) {
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid),
                  static_cast<int>(tid));
    const std::optional<std::string> text = read_small(path);
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

// Without children files: one pass over every process's parent.
std::vector<pid_t> children_by_scan(pid_t pid, std::vector<std::pair<pid_t, pid_t>>& parents) {
  if (parents.empty()) {
    for (pid_t p : numeric_entries("/proc")) {
      if (std::optional<StatLine> s = read_stat(p)) parents.emplace_back(p, s->ppid);
    }
  }
  std::vector<pid_t> out;
  for (const auto& [child, parent] : parents) {
    if (parent == pid) out.push_back(child);
  }
  return out;
}

bool contains(const std::vector<ProcessId>& v, pid_t pid) {
  return std::any_of(v.begin(), v.end(), [pid](const ProcessId& p) { return p.pid == pid; });
}

}  // namespace

std::optional<ProcessId> process_id(pid_t pid) {
  const std::optional<StatLine> s = read_stat(pid);
  if (!s || s->state == 'Z' || s->state == 'X') return std::nullopt;
  return ProcessId{pid, s->start_time};
}

std::vector<ProcessId> descendants(pid_t root) {
  std::vector<ProcessId> out;
  const bool by_files = children_files_exist();
  std::vector<std::pair<pid_t, pid_t>> parents;  // filled once, by the scan only
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty() && out.size() < 4096) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    for (pid_t c : by_files ? children_of(p) : children_by_scan(p, parents)) {
      if (c == root || contains(out, c)) continue;
      const std::optional<StatLine> s = read_stat(c);
      if (!s) continue;
      frontier.push_back(c);
      if (s->state != 'Z' && s->state != 'X') out.push_back({c, s->start_time});
    }
  }
  return out;
}

void kill_tree(pid_t root, bool include_root, const std::vector<ProcessId>& known) {
  std::vector<ProcessId> stopped;
  bool fresh = true;
  auto stop = [&](const ProcessId& p) {
    if (contains(stopped, p.pid)) return;
    ::kill(p.pid, SIGSTOP);
    stopped.push_back(p);
    fresh = true;
  };
  for (int round = 0; fresh && round < 64; ++round) {
    fresh = false;
    if (include_root) {
      if (std::optional<ProcessId> r = process_id(root)) stop(*r);
    }
    for (const ProcessId& d : descendants(root)) stop(d);
    for (const ProcessId& k : known) {
      if (process_id(k.pid) != k) continue;  // gone, or its pid now names another process
      stop(k);
      for (const ProcessId& d : descendants(k.pid)) stop(d);
    }
  }
  for (const ProcessId& p : stopped) {
    if (process_id(p.pid) == p) ::kill(p.pid, SIGKILL);
  }
}

std::optional<TreeMemory> tree_memory(pid_t root, std::vector<ProcessId>* found) {
  // A kibibyte field of a /proc/<pid>/ file; false when the file cannot be read.
  auto field_kib = [](pid_t pid, const char* file, const char* field, std::size_t& out) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), file);
    const std::optional<std::string> text = read_small(path);
    if (!text) return false;
    const char* at = std::strstr(text->c_str(), field);
    if (at == nullptr) return false;
    out = std::strtoull(at + std::strlen(field), nullptr, 10) * 1024;
    return true;
  };
  TreeMemory m;
  if (!field_kib(root, "status", "VmRSS:", m.resident_bytes)) return std::nullopt;
  field_kib(root, "status", "VmSize:", m.virtual_bytes);
  m.processes = 1;
  std::vector<ProcessId> tree = descendants(root);
  if (!tree.empty()) {
    // A forked child shares its parent's pages until either writes them, so VmRSS summed over
    // the tree counts each shared page once per process: eight forks of a 40 MiB worker would
    // read as 320 MiB. The proportional set size charges a page shared by n processes 1/n to
    // each, so its sum is what the tree holds. A process whose smaps_rollup cannot be read
    // (made non-dumpable, or a kernel before 4.14) counts its VmRSS: never less than its share.
    auto resident = [&field_kib](pid_t pid, std::size_t& out) {
      return field_kib(pid, "smaps_rollup", "\nPss:", out) ||
             field_kib(pid, "status", "VmRSS:", out);
    };
    resident(root, m.resident_bytes);
    for (const ProcessId& d : tree) {
      std::size_t bytes = 0;
      if (resident(d.pid, bytes)) {
        m.resident_bytes += bytes;
        ++m.processes;
      }
    }
  }
  if (found != nullptr) *found = std::move(tree);
  return m;
}

std::vector<pid_t> threads(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  return numeric_entries(path);
}

ThreadState thread_state(pid_t pid, pid_t tid, std::string* what) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", static_cast<int>(pid),
                static_cast<int>(tid));
  const std::optional<std::string> text = read_small(path);
  if (!text) return errno == ENOENT || errno == ESRCH ? ThreadState::kGone : ThreadState::kUnknown;
  std::string line = text->substr(0, text->find('\n'));
  if (what != nullptr) *what = line;
  // "running", "-1 <sp> <pc>" (blocked outside a system call), or
  // "<nr> <arg1> ... <arg6> <sp> <pc>" with the arguments in hex.
  unsigned long long v[7] = {};
  const char* p = line.c_str();
  int n = 0;
  for (; n < 7; ++n) {
    char* end = nullptr;
    v[n] = n == 0 ? static_cast<unsigned long long>(std::strtoll(p, &end, 10))
                  : std::strtoull(p, &end, 16);
    if (end == p) break;
    p = end;
  }
  if (n < 7) return ThreadState::kBusy;
  const unsigned long long nr = v[0];
  if (nr == SYS_futex) {
    const unsigned long long op =
        v[2] & ~static_cast<unsigned long long>(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    const bool wait = op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET;
    return wait && v[4] == 0 ? ThreadState::kParked : ThreadState::kBusy;
  }
#ifdef SYS_futex_waitv
  if (nr == SYS_futex_waitv) return v[4] == 0 ? ThreadState::kParked : ThreadState::kBusy;
#endif
  return ThreadState::kBusy;
}

}  // namespace ktune::worker_detail
