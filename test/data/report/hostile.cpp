// A template whose compile error and parameter value carry markup (test/report/, the report
// tests): the HTML report must show them as text. FAULT 1 does not compile (its message holds a
// script that would mark the page if it ran), FAULT 2 is wrong, FAULT 0 and 3 are correct, 3
// slower. TAG is a string parameter that only names the candidates.
#ifndef FAULT
#define FAULT 0  // the reference's compilation
#endif
void add(float* C, const float* A, const float* B, int n) {
#if FAULT == 1
#error "<script>document.body.setAttribute('data-pwned','1')</script><img src=x onerror=alert(1)>"
#endif
  const int reps = FAULT == 3 ? 20 : 1;
  for (int r = 0; r < reps; ++r)
    for (int i = 0; i < n; ++i) C[i] = A[i] + B[i] + 0.0f * r;
#if FAULT == 2
  C[n / 3] += 1.0f;
#endif
}

void add_ref(float* C, const float* A, const float* B, int n) {
  for (int i = 0; i < n; ++i) C[i] = A[i] + B[i];
}
