// S = sum of X in two passes: BLOCKS partial sums in the scratch buffer P, then their sum.
// ASSUME_ZEROS 1 is planted: it adds into P without clearing it first, right only if P starts
// at zero (ktune poisons scratch buffers before every run, so it is caught).
void psum(float* S, float* P, const float* X, int n) {
  const int chunk = (n + BLOCKS - 1) / BLOCKS;
  for (int b = 0; b < BLOCKS; ++b) {
    if (!ASSUME_ZEROS) P[b] = 0;
    for (int i = b * chunk; i < n && i < (b + 1) * chunk; ++i) P[b] += X[i];
  }
  float s = 0;
  for (int b = 0; b < BLOCKS; ++b) s += P[b];
  S[0] = s;
}
