// The trusted reference for psum.cpp: one pass, its scratch buffer untouched.
void psum_ref(float* S, float*, const float* X, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += X[i];
  S[0] = static_cast<float>(s);
}
