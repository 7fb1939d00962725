// A grid of correct kernels of which some hang (issue 19's case: a space with hanging configs):
// C = A + B over n floats, spinning forever when V % HANG_EVERY == HANG_EVERY - 1. Used by
// test/faults/hang_deadline_test.cpp (20 configs, 3 hang) and bench/hang_deadlines.sh (100, 8).
void add(float* C, float* A, const float* B, int n) {
  if (V % HANG_EVERY == HANG_EVERY - 1)
    for (;;) __asm__ volatile("");  // spin forever
  for (int i = 0; i < n; ++i) C[i] = A[i] + B[i];
}
