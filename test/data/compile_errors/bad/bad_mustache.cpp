// A mustache kernel with an error on line 11 (column 5), after a section that renders to nothing
// (NEVER is no parameter): the message must still name line 11.
void bad(float* C, const float* A, const float* B, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) {
    C[i] = 0;
{{#NEVER}}
    for (int k = 0; k < K; ++k) C[i] += A[k] * B[k];
    C[i] *= 2;
{{/NEVER}}
    for (int k = 0; k < K; ++k) C[i] += A[k] * B[k] * {{SCALE}};
    undeclared_name = 1;
  }
}
