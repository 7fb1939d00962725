// A naive tiled matmul for ktune's spec tests: C[M,N] = A[M,K] * B[K,N], row-major, A with a row
// stride of K. TILE_M, TILE_N and ORDER arrive as #defines.
#define ijk 1
#define ikj 2

void matmul(float* C, const float* A, const float* B, int M, int N, int K) {
  for (int i0 = 0; i0 < M; i0 += TILE_M) {
    for (int j0 = 0; j0 < N; j0 += TILE_N) {
      for (int i = i0; i < i0 + TILE_M && i < M; ++i) {
        for (int j = j0; j < j0 + TILE_N && j < N; ++j) C[i * N + j] = 0;
#if ORDER == ijk
        for (int j = j0; j < j0 + TILE_N && j < N; ++j) {
          float acc = 0;
          for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
          C[i * N + j] = acc;
        }
#else
        for (int k = 0; k < K; ++k) {
          for (int j = j0; j < j0 + TILE_N && j < N; ++j)
            C[i * N + j] += A[i * K + k] * B[k * N + j];
        }
#endif
      }
    }
  }
}
