// y = 2x, computed WORK times over (the barrier keeps the compiler from folding the repeats), so
// that the configs' times differ clearly and every run picks the same one (WORK 1); WRONG 1
// skips the last element on purpose, so that a record holds failed outcomes too.
void scale(float* Y, const float* X, int n) {
  const int end = WRONG ? n - 1 : n;
  for (int r = 0; r < WORK; ++r) {
    for (int i = 0; i < end; ++i) Y[i] = 2.0f * X[i];
    asm volatile("" ::: "memory");
  }
}
