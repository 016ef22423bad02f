// What every epilogue part may read: D (or its TMA map), C, the bias, the
// per-tensor scales, D's amax, their leading dimensions and batch strides,
// alpha and beta.
struct EpilogueArgs {
  void* d;
  const void* c;
  const void* bias;
  const float* scale_a;
  const float* scale_b;
  const float* scale_d;
  float* amax_d;
  float* workspace;
  unsigned long long d_map_address;
  unsigned base;
  int m, n, pair_stores;
  long long ldc, ldd, stride_c, stride_d, stride_bias;
  float alpha, beta;
};
