// What the rest of the machine did while ktune measured: CPU time of every process on the machine
// (/proc/stat) minus that of ktune's own process tree (this process, its live children such as
// workers and their reaped children, /proc/<pid>/stat), over a span of wall time. Linux only;
// elsewhere, or when /proc cannot be read, nothing is known and the load reads as 0.
#pragma once

#include <optional>

#include "core/parallel_for.h"  // usable_cores

namespace ktune {

// CPU seconds at one moment.
struct CpuClock {
  double wall_s = 0;     // steady clock
  double machine_s = 0;  // busy time of all CPUs (user, nice, system, irq, softirq, steal)
  double ours_s = 0;     // this process and its children, live and reaped
};

// Reads the clock; nullopt when /proc/stat cannot be read.
[[nodiscard]] std::optional<CpuClock> read_cpu_clock();

// Cores' worth of CPU that other processes used between two readings (>= 0).
[[nodiscard]] double others_load(const CpuClock& from, const CpuClock& to);

}  // namespace ktune
