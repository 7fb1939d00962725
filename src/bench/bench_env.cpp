// ensure_benchmark_environment: one re-exec with the measurement environment.
#include "ktune/bench/bench_env.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/measurement_env.h"

namespace ktune {

void ensure_benchmark_environment(char** argv) {
  bool changed = false;
  for (const auto& [name, value] : kMeasurementEnvironment) {
    const std::string n(name);
    if (std::getenv(n.c_str()) != nullptr) continue;  // the user's value wins
    if (::setenv(n.c_str(), std::string(value).c_str(), 0) != 0) return;
    changed = true;
  }
  if (changed) ::execv("/proc/self/exe", argv);  // returns only on failure: carry on as we are
}

}  // namespace ktune
