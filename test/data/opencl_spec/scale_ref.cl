__kernel void scale_ref(__global float* y, __global const float* x, int n) {
  const int j = get_global_id(0);
  if (j < n) y[j] = 2.0f * x[j];
}
