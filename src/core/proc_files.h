// A process's small /proc files, parsed as proc(5) describes them: what the worker's process-tree
// watch (worker/process_tree.h, worker_process.h) and the selection's load reading
// (select/machine_load.h) both read, in one place. Linux only.
//
// Each file is read with one read() into a stack buffer (every file read here is under 4 KiB):
// the worker's parent calls these every 10 ms while a candidate runs, and a worker's guardian
// while ktune is dying.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ktune {

// The file's first bytes (at most 4 KiB), or nullopt with errno set when it cannot be opened or
// read.
[[nodiscard]] std::optional<std::string> read_proc_file(const char* path);

// /proc/<pid>/<file>, as read_proc_file reads it.
[[nodiscard]] std::optional<std::string> read_proc_file(pid_t pid, const char* file);

// The numeric entries of a /proc folder (pids, or thread ids under task/).
[[nodiscard]] std::vector<pid_t> proc_numeric_entries(const char* path);

// The fields of /proc/<pid>/stat that ktune reads, counted after the command name's closing
// parenthesis (the name may hold spaces and parentheses).
struct ProcStat {
  char state = '?';
  pid_t ppid = 0;
  std::uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;  // clock ticks (fields 14-17)
  std::uint64_t start_time = 0;                                // clock ticks since boot (field 22)
};
[[nodiscard]] std::optional<ProcStat> read_proc_stat(pid_t pid);

// A kibibyte field of /proc/<pid>/<file> ("VmRSS:" of status, "\nPss:" of smaps_rollup), in
// bytes; nullopt when the file cannot be read or lacks the field.
[[nodiscard]] std::optional<std::size_t> proc_kib_field(pid_t pid, const char* file,
                                                        const char* field);
// The same in a file's text already read (several fields of one read).
[[nodiscard]] std::optional<std::size_t> proc_kib_field(const std::string& text, const char* field);

// VmRSS and VmSize of /proc/<pid>/status in bytes, from one read; nullopt when the file cannot
// be read (the process is gone) or holds no VmRSS (a zombie).
struct ProcMemory {
  std::size_t resident_bytes = 0;  // VmRSS
  std::size_t virtual_bytes = 0;   // VmSize
};
[[nodiscard]] std::optional<ProcMemory> read_proc_memory(pid_t pid);

// The direct children of `pid`, from each of its threads' children files
// (/proc/<pid>/task/<tid>/children; empty where the kernel has none: proc_children_files).
[[nodiscard]] std::vector<pid_t> proc_children(pid_t pid);
// Whether the kernel has children files (CONFIG_PROC_CHILDREN): asked once, of ourselves.
[[nodiscard]] bool proc_children_files();

}  // namespace ktune
