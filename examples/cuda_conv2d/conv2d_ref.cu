// The reference: one thread per output, the textbook double loop, no tiling or caching.
extern "C" __global__ void conv2d_naive(float* out, const float* in, const float* filter, int W,
                                        int H) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  const int IW = W + FW - 1;
  float s = 0.0f;
  for (int i = 0; i < FH; i++)
    for (int j = 0; j < FW; j++) s += in[(size_t)(y + i) * IW + x + j] * filter[i * FW + j];
  out[(size_t)y * W + x] = s;
}
