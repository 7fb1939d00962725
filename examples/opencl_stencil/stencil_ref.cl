// The reference: one work-item per point, straight from global memory.
__kernel void heat_step_naive(__global float* out, __global const float* in, const float alpha,
                              const int W, const int H) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= W || y >= H) return;
  const int IW = W + 2;
  const float c = in[(y + 1) * IW + x + 1];
  const float n = in[y * IW + x + 1], s = in[(y + 2) * IW + x + 1];
  const float w = in[(y + 1) * IW + x], e = in[(y + 1) * IW + x + 2];
  out[y * W + x] = c + alpha * (n + s + w + e - 4.0f * c);
}
