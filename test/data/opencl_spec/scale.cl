// y = 2 x, ITEMS elements per work-item; FAULT plants one broken config each:
// 1 writes past the end of y (a redzone violation), 2 never returns (the worker is stopped), 3
// gets one element wrong (a wrong result, for the host references of host_ref.yaml and
// expected.yaml).
__kernel void scale(__global float* y, __global const float* x, int n) {
  const int base = get_group_id(0) * (WG * ITEMS) + get_local_id(0);
  for (int i = 0; i < ITEMS; ++i) {
    const int j = base + i * WG;
    if (j < n) y[j] = (FAULT == 3 && j == n / 2) ? 1.0f + 3.0f * x[j] : 2.0f * x[j];
  }
#if FAULT == 1
  if (get_global_id(0) == 0) y[n + 3] = 1.0f;
#elif FAULT == 2
  volatile __global float* spin = y;
  for (;;) spin[0] = 1.0f;
#endif
}
