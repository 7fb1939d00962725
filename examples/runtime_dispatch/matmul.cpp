// A blocked matmul; BLOCK changes the blocking of the K loop, not the result.
void matmul(float* C, const float* A, const float* B, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) C[i] = 0;
  for (int k0 = 0; k0 < K; k0 += BLOCK)
    for (int i = 0; i < M; ++i)
      for (int k = k0; k < k0 + BLOCK && k < K; ++k)
        for (int j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];
}
