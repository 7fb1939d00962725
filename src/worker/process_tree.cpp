// Process trees and threads through /proc (process_tree.h), its files read and parsed by
// core/proc_files.h.
#include "worker/process_tree.h"

#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/proc_files.h"

namespace ktune::worker_detail {
namespace {

// Without children files: one pass over every process's parent.
std::vector<pid_t> children_by_scan(pid_t pid, std::vector<std::pair<pid_t, pid_t>>& parents) {
  if (parents.empty()) {
    for (pid_t p : proc_numeric_entries("/proc")) {
      if (std::optional<ProcStat> s = read_proc_stat(p)) parents.emplace_back(p, s->ppid);
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
  const std::optional<ProcStat> s = read_proc_stat(pid);
  if (!s || s->state == 'Z' || s->state == 'X') return std::nullopt;
  return ProcessId{pid, s->start_time};
}

std::vector<ProcessId> descendants(pid_t root) {
  std::vector<ProcessId> out;
  const bool by_files = proc_children_files();
  std::vector<std::pair<pid_t, pid_t>> parents;  // filled once, by the scan only
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty() && out.size() < 4096) {
    const pid_t p = frontier.back();
    frontier.pop_back();
    for (pid_t c : by_files ? proc_children(p) : children_by_scan(p, parents)) {
      if (c == root || contains(out, c)) continue;
      const std::optional<ProcStat> s = read_proc_stat(c);
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
  const std::optional<ProcMemory> own = read_proc_memory(root);
  if (!own) return std::nullopt;
  TreeMemory m{own->resident_bytes, own->virtual_bytes, 1};
  std::vector<ProcessId> tree = descendants(root);
  if (!tree.empty()) {
    // A forked child shares its parent's pages until either writes them, so VmRSS summed over
    // the tree counts each shared page once per process: eight forks of a 40 MiB worker would
    // read as 320 MiB. The proportional set size charges a page shared by n processes 1/n to
    // each, so its sum is what the tree holds. A process whose smaps_rollup cannot be read
    // (made non-dumpable, or a kernel before 4.14) counts its VmRSS: never less than its share.
    const auto resident = [](pid_t pid) {
      std::optional<std::size_t> bytes = proc_kib_field(pid, "smaps_rollup", "\nPss:");
      return bytes ? bytes : proc_kib_field(pid, "status", "VmRSS:");
    };
    if (const std::optional<std::size_t> bytes = resident(root)) m.resident_bytes = *bytes;
    for (const ProcessId& d : tree) {
      if (const std::optional<std::size_t> bytes = resident(d.pid)) {
        m.resident_bytes += *bytes;
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
  return proc_numeric_entries(path);
}

ThreadState thread_state(pid_t pid, pid_t tid, std::string* what) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", static_cast<int>(pid),
                static_cast<int>(tid));
  const std::optional<std::string> text = read_proc_file(path);
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
