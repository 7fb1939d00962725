// read_cpu_clock: /proc/stat and /proc/<pid>/stat (machine_load.h). Clock ticks are 10 ms on
// Linux, so a span shorter than a few hundred milliseconds reads coarsely; the selection reads
// it over its whole measurement, which lasts seconds.
#include "select/machine_load.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
// The fields are counted after the command name's closing parenthesis, which may itself hold
// spaces and parentheses.
double process_cpu_s(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  double ticks = 0;
  // After ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime(14) stime cutime cstime(17).
  for (int i = 3; i <= 17 && fields >> field; ++i) {
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks * tick_s();
}

// Pids of this process's live children, from every thread's children list.
std::vector<std::string> child_pids() {
  std::vector<std::string> pids;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    std::string pid;
    while (in >> pid) pids.push_back(pid);
  }
  return pids;
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
  c.ours_s = process_cpu_s("self");
  for (const std::string& pid : child_pids()) c.ours_s += process_cpu_s(pid);
  return c;
}

double others_load(const CpuClock& from, const CpuClock& to) {
  const double wall = to.wall_s - from.wall_s;
  if (wall <= 0) return 0;
  const double others = (to.machine_s - from.machine_s) - (to.ours_s - from.ours_s);
  return std::max(0.0, others / wall);
}

}  // namespace ktune
