// read_cpu_clock: /proc/stat and /proc/<pid>/stat (machine_load.h; the latter through
// core/proc_files.h). Clock ticks are 10 ms on
// Linux, so a span shorter than a few hundred milliseconds reads coarsely; the selection reads
// it over its whole measurement, which lasts seconds.
#include "select/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "core/proc_files.h"

namespace ktune {
namespace {

double tick_s() {
  static const double tick = [] {
    const long hz = ::sysconf(_SC_CLK_TCK);
    return hz > 0 ? 1.0 / static_cast<double>(hz) : 0.01;
  }();
  return tick;
}

// utime + stime + cutime + cstime of /proc/<pid>/stat in seconds; 0 when the process is gone.
double process_cpu_s(pid_t pid) {
  const std::optional<ProcStat> s = read_proc_stat(pid);
  if (!s) return 0;
  return static_cast<double>(s->utime + s->stime + s->cutime + s->cstime) * tick_s();
}

}  // namespace

std::optional<CpuClock> read_cpu_clock() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  // cpu user nice system idle iowait irq softirq steal (guest time is inside user).
  double v[8] = {};
  if (!(stat >> cpu) || cpu != "cpu") return std::nullopt;
  for (double& x : v) {
    if (!(stat >> x)) return std::nullopt;
  }
  CpuClock c;
  c.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  c.machine_s = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * tick_s();
  // This process, and its live children (from every thread's children list).
  const pid_t self = ::getpid();
  c.ours_s = process_cpu_s(self);
  for (pid_t pid : proc_children(self)) c.ours_s += process_cpu_s(pid);
  return c;
}

double others_load(const CpuClock& from, const CpuClock& to) {
  const double wall = to.wall_s - from.wall_s;
  if (wall <= 0) return 0;
  const double others = (to.machine_s - from.machine_s) - (to.ours_s - from.ours_s);
  return std::max(0.0, others / wall);
}

}  // namespace ktune
