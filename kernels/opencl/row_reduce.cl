// Row sum: out[r] = sum over c of X[r, c], X row-major [rows, cols], f32.
//
// One work-group of WGS work-items per row; each work-item sums every WGS-th chunk of VW
// elements (vload when VW > 1; cols % VW == 0, the host checks), then a tree reduction in local
// memory. Parameters arrive as -D defines: WGS (a power of two), VW.

#if VW == 1
#define LOADV(p) (*(p))
#define realV float
#define HSUM(v) (v)
#elif VW == 2
#define LOADV(p) vload2(0, p)
#define realV float2
#define HSUM(v) ((v).x + (v).y)
#elif VW == 4
#define LOADV(p) vload4(0, p)
#define realV float4
#define HSUM(v) ((v).x + (v).y + (v).z + (v).w)
#endif

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1))) void row_sum(__global float* out,
                                                                       __global const float* X,
                                                                       const int rows,
                                                                       const int cols) {
  __local float partial[WGS];
  const int row = get_group_id(0), t = get_local_id(0);
  if (row >= rows) return;  // the whole group leaves together
  __global const float* x = X + (long)row * cols;
  realV acc = (realV)(0.0f);
  for (int c = t * VW; c < cols; c += WGS * VW) acc += LOADV(x + c);
  partial[t] = HSUM(acc);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WGS / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) out[row] = partial[0];
}

// The reference: one work-item per row, a plain loop.
__kernel void row_sum_naive(__global float* out, __global const float* X, const int rows,
                            const int cols) {
  const int row = get_global_id(0);
  if (row >= rows) return;
  float acc = 0.0f;
  for (int c = 0; c < cols; ++c) acc += X[(long)row * cols + c];
  out[row] = acc;
}
