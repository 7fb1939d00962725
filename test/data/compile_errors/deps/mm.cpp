// A matmul whose helpers live in headers: one beside it (found because the source's folder is an
// include path) and one in a -I folder that the test adds to the spec's flags.
#include "helper.h"
#include <scale.h>

void mm(float* C, const float* A, const float* B, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int k0 = 0; k0 < K; k0 += BLOCK)
        for (int k = k0; k < k0 + BLOCK && k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = helper_scale(s) * KTUNE_TEST_SCALE;
    }
}
