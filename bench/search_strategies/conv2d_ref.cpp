// The reference of conv2d_cpu.cpp: the plain loop nest, accumulated in double.
void conv2d_ref(float* out, const float* in, const float* filter, int W, int H) {
  const int ldi = W + FW - 1;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double s = 0;
      for (int fy = 0; fy < FH; ++fy)
        for (int fx = 0; fx < FW; ++fx)
          s += (double)in[(long)(y + fy) * ldi + x + fx] * filter[fy * FW + fx];
      out[(long)y * W + x] = (float)s;
    }
}
