// A kernel with an error on line 6 (column 5): the compiler's message must name this file.
void bad(float* C, const float* A, const float* B, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) {
    C[i] = 0;
    for (int k = 0; k < K; ++k) C[i] += A[k] * B[k] * SCALE;
    undeclared_name = 1;
  }
}
