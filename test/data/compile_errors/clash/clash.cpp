// A template parameter named like a tuning parameter: `U` is #defined for every candidate, so
// line 4 reads `template <int 1>` to the compiler.
namespace clash {
template <int U>
void scale(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
}  // namespace clash
void scale(float* y, const float* x, long n) { clash::scale<U>(y, x, n); }
