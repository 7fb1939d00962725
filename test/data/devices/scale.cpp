// y = 2x, computed WORK times over (the barrier keeps the compiler from folding the repeats), so
// that the configs' times differ clearly and every run picks the same one (WORK 1). FAULT 1
// crashes its worker (SIGSEGV), FAULT 2 hangs it, FAULT 3 writes a wrong element: each must cost
// that candidate alone, on whichever device it ran. PINNED 1 writes the right answer only in a
// worker pinned to one core that was told so (OMP_NUM_THREADS=1): the devices of --devices 0,1.
#include <sched.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>

void scale(float* Y, const float* X, int n) {
  if (FAULT == 1) ::raise(SIGSEGV);
  if (FAULT == 2) {
    for (;;) asm volatile("" ::: "memory");
  }
  int end = n;
  if (PINNED) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const char* threads = std::getenv("OMP_NUM_THREADS");
    const bool one = ::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
                     threads != nullptr && std::strcmp(threads, "1") == 0;
    if (!one) end = n - 1;
  }
  for (int r = 0; r < WORK; ++r) {
    for (int i = 0; i < end; ++i) Y[i] = 2.0f * X[i];
    asm volatile("" ::: "memory");
  }
  if (FAULT == 3) Y[n / 2] += 1.0f;
}
