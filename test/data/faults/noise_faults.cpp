// Planted faults of issue 16's classes 1 (a pick wrong only on some calls), 7 (a stall in a
// measurement) and 11 (a busy machine), chosen by NOISE (test/faults/noise_faults_test.cpp).
// C = A + B over n floats. 0 is correct and slow (4 passes), 1 correct and fast; the faults are
// fast, so that a tuner they fool picks them.
#include <unistd.h>

void add(float* C, float* A, const float* B, int n) {
  static int calls = 0;
  ++calls;
  // 32: correct, but its 3rd and 4th calls stall 300 ms each: the first measurement (after the
  // verification and the warm-up) has two slow samples of three.
  if (NOISE == 32 && (calls == 3 || calls == 4)) ::usleep(300 * 1000);
  const int reps = NOISE == 0 ? 4 : 1;
  for (int r = 0; r < reps; ++r) {
    for (int i = 0; i < n; ++i) C[i] = A[i] + B[i];
  }
  // 30: right on its first call (the verification), then wrong on every third call: state
  // across calls, as a data race that is wrong only sometimes.
  if (NOISE == 30 && calls > 1 && calls % 3 == 0) C[n / 2] += 1.0f;
}
