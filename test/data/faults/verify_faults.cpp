// Planted faults of issue 16's verification classes (test/faults/verify_faults_test.cpp), chosen
// by FAULT: kernels that one verification call on one data set, unchecked timed runs or a check
// of the view's elements alone would let through. C = A + B over n floats, where C's view has
// stride 2 after one element of offset (its storage: a prefix, then element, gap, element, ...)
// and A's view has stride 2 (element, gap, ...). 0 is correct; vadd_ref is the reference and
// vadd_ref_crash a reference that crashes (it must cost a worker, not ktune).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#ifndef FAULT
#define FAULT 0
#endif

void vadd(float* C, float* A, const float* B, int n) {
  if (FAULT == 30) {  // right on its first call only: a static call counter
    static int calls = 0;
    if (++calls > 1) return;
  }
  if (FAULT == 33) {  // remembers its argument pointers and returns at once on a repeated call
    static const void* last[3] = {nullptr, nullptr, nullptr};
    if (last[0] == C && last[1] == A && last[2] == B) return;
    last[0] = C;
    last[1] = A;
    last[2] = B;
  }
  if (FAULT == 38) {  // right on its first 40 calls, then skips three calls in four: honest
    // while the first timed runs are checked, cheap once they no longer all are
    static int calls = 0;
    if (++calls > 40 && calls % 4 != 0) return;
  }
  bool lose = false;
  if (FAULT == 36) {  // a race lost one call in two, at random (an unsynchronised combine)
    unsigned char byte = 0;
    const int fd = ::open("/dev/urandom", O_RDONLY);
    if (fd >= 0 && ::read(fd, &byte, 1) == 1) lose = (byte & 1) != 0;
    if (fd >= 0) ::close(fd);
  }
  for (int i = 0; i < n; ++i) {
    float v = A[2 * i] + B[i];
    if (FAULT == 31) v = std::clamp(v, -2.0f, 2.0f);  // right while |A + B| < 2 only
    if (FAULT == 32) {  // its integer part in 4 bits, which wraps past 7 (an overflow)
      const int whole = static_cast<int>(v);
      v = static_cast<float>(((whole + 8) & 15) - 8) + (v - static_cast<float>(whole));
    }
    C[2 * i] = v;
  }
  if (lose) C[n / 2] += 0.5f;
  if (FAULT == 34) C[1] = 0.0f;                // the gap between C's first two elements
  if (FAULT == 35) C[-1] = 0.0f;               // the prefix before C's offset
  if (FAULT == 37) A[2 * (n / 2) + 1] = 0.0f;  // a gap of the input A
}

void vadd_ref(float* C, const float* A, const float* B, int n) {
  for (int i = 0; i < n; ++i) C[2 * i] = A[2 * i] + B[i];
}

void vadd_ref_crash(float* C, const float* A, const float* B, int n) {
  *(volatile int*)nullptr = n;
  vadd_ref(C, A, B, n);
}
