// ensure_benchmark_environment: one re-exec with OMP_WAIT_POLICY=passive.
#include "ktune/bench_env.h"

#include <unistd.h>

#include <cstdlib>

namespace ktune {

void ensure_benchmark_environment(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (::setenv("OMP_WAIT_POLICY", "passive", 0) != 0) return;
  ::execv("/proc/self/exe", argv);  // returns only on failure: carry on as we are
}

}  // namespace ktune
