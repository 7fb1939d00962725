// Writes A + B when the kernel sees OMP_WAIT_POLICY=passive, NaN otherwise: a test that the
// measurement environment reaches the process where kernels run.
#include <cmath>
#include <cstdlib>
#include <cstring>

void add(float* C, const float* A, const float* B, int n) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const bool passive = policy && std::strcmp(policy, "passive") == 0;
  for (int i = 0; i < n; ++i) C[i] = passive ? A[i] + B[i] : NAN;
}
