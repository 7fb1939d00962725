// One kernel per planted fault, chosen by FAULT (ktune's fault-injection suite, test/faults/).
// C = A + B over n floats; the correct variants are 0, 1 and 2 (2 is slower on purpose).
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

void add(float* C, float* A, const float* B, int n) {
  if (FAULT == 10) *(volatile int*)nullptr = 1;  // segfault
  if (FAULT == 11) std::abort();
  if (FAULT == 12) std::exit(0);
  if (FAULT == 13)
    for (;;) __asm__ volatile("");  // spin forever
  if (FAULT == 14) ::sleep(1000);
  if (FAULT == 21) {  // allocate and touch memory without bound
    for (;;) {
      void* p = std::malloc(64 << 20);
      if (p) std::memset(p, 1, 64 << 20);
    }
  }
  if (FAULT == 22) {  // print megabytes, then compute correctly
    static char line[1024];
    std::memset(line, 'x', sizeof line - 1);
    for (int i = 0; i < 20 * 1024; ++i) std::puts(line);
    std::fflush(stdout);
  }
  if (FAULT == 23) {  // close the worker's protocol pipes
    ::close(3);
    ::close(4);
  }
  if (FAULT == 24) std::raise(SIGSTOP);
  const int reps = FAULT == 2 ? 50 : 1;
  const int written = FAULT == 18 ? n - 1 : n;
  for (int r = 0; r < reps; ++r) {
    if (FAULT == 1) {
      for (int i = written - 1; i >= 0; --i) C[i] = B[i] + A[i];
    } else {
      for (int i = 0; i < written; ++i) C[i] = A[i] + B[i];
    }
  }
  if (FAULT == 15) C[n] = 0.0f;                     // one element past the end
  if (FAULT == 16) C[(long)n + (1L << 34)] = 0.0f;  // far out of bounds
  if (FAULT == 17) A[0] = 42.0f;                    // write into an input
  if (FAULT == 19) C[n / 3] = NAN;
  if (FAULT == 20) C[n / 2] += 1.0f;      // a wrong value
  if (FAULT == 25) ::usleep(400 * 1000);  // correct but slow (the SIGKILL test)
}
