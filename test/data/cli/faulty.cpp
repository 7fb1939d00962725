// A template whose FAULT parameter plants one failure per config (in-process safe ones only):
//   0 correct, 1 wrong value, 2 NaN, 3 an output element left unwritten, 4 one element written
//   past the end of C (caught by the redzone), 5 a write into input A, 6 a compile error,
//   7 correct but slow.
#include <cmath>

void add(float* C, float* A, const float* B, int n) {
#if FAULT == 6
#error "planted compile error"
#endif
  const int reps = FAULT == 7 ? 200 : 1;
  const int written = FAULT == 3 ? n - 1 : n;
  for (int r = 0; r < reps; ++r)
    for (int i = 0; i < written; ++i) C[i] = A[i] + B[i] + 0.0f * r;
#if FAULT == 1
  C[n / 2] += 1.0f;
#elif FAULT == 2
  C[n - 1] = NAN;
#elif FAULT == 4
  C[n] = 0.0f;
#elif FAULT == 5
  A[0] = 42.0f;
#endif
}
