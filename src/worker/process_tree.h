// A worker's process tree and threads as /proc shows them, for the parent (leftover processes
// and threads, the tree's memory, killing the whole tree) and for the worker's guardian (killing
// its own descendants when ktune dies). Linux only, like the rest of the worker.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ktune::worker_detail {

// A process as seen once: its pid and start time (clock ticks since boot, /proc/<pid>/stat
// field 22), which tells a process from a later one given the same pid.
struct ProcessId {
  pid_t pid = -1;
  std::uint64_t start_time = 0;
  bool operator==(const ProcessId&) const = default;
};

// Every live descendant of `root` (root itself excluded), through the children files of each
// of their threads (/proc/<pid>/task/<tid>/children); where the kernel has none, by scanning
// every /proc/<pid>/stat for parents. Zombies are left out: they run nothing.
[[nodiscard]] std::vector<ProcessId> descendants(pid_t root);

// nullopt when `pid` is gone (or a zombie).
[[nodiscard]] std::optional<ProcessId> process_id(pid_t pid);

// Stops `root` (when `include_root`) and every descendant with SIGSTOP, walking again until a
// walk finds nothing new (a process forking in a loop cannot outrun it: stopped processes do not
// fork), then SIGKILLs all of them, and `known` too (descendants seen earlier that may have been
// re-parented away since, each checked against its start time). Reaps nothing.
void kill_tree(pid_t root, bool include_root, const std::vector<ProcessId>& known = {});

struct TreeMemory {
  std::size_t resident_bytes = 0;  // root alone: its VmRSS. With descendants: the sum of each
                                   // process's proportional set size (a page shared by n
                                   // processes counts 1/n in each), VmRSS where unreadable
  std::size_t virtual_bytes = 0;   // VmSize of root
  int processes = 0;               // root and its descendants
};
// nullopt when root is gone. `found`, when given, gets the descendants walked.
[[nodiscard]] std::optional<TreeMemory> tree_memory(pid_t root,
                                                    std::vector<ProcessId>* found = nullptr);

// The thread ids of `pid` (its main thread included).
[[nodiscard]] std::vector<pid_t> threads(pid_t pid);

// Whether a thread is parked: blocked in a futex wait without a timeout, which is how an idle
// thread pool waits (libgomp, OpenBLAS, std::condition_variable) and from which it wakes only
// when another thread wakes it. Anything else (running, sleeping, a timed wait, I/O) is busy.
enum class ThreadState { kParked, kBusy, kGone, kUnknown };
// `what` gets the /proc/<pid>/task/<tid>/syscall line, for messages. kUnknown when the file
// cannot be read (no permission: ptrace restrictions, or a process made non-dumpable).
[[nodiscard]] ThreadState thread_state(pid_t pid, pid_t tid, std::string* what = nullptr);

}  // namespace ktune::worker_detail
