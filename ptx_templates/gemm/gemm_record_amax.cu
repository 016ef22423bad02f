// The amax of D (records_amax): the largest |D| before scale_d of this
// thread's values inside m x n, then of its warp's, raised into the f32 at
// e.amax_d by one lane. Magnitudes are never negative, so their f32 bits
// order as unsigned integers do, and integer maxima compare them.
__device__ __forceinline__ float raised_amax(const EpilogueArgs& e, float amax,
                                             float value, int batch, int row,
                                             int column) {
  return fmaxf(amax, fabsf(epilogue_value(e, value, batch, row, column)));
}

__device__ __forceinline__ float raised_amax_inside_m_n(
    const EpilogueArgs& e, float amax, float value, int batch, int row,
    int column) {
  if (row >= e.m || column >= e.n) return amax;
  return raised_amax(e, amax, value, batch, row, column);
}

// A tile inside m x n skips the clipping (which, with stream-K's state
// live beside it, made ptxas spill a 128x256 fp8 tile).
__device__ __forceinline__ void record_amax(
    const Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const EpilogueArgs& e, int batch, int m0, int n0, int thread) {
  const int row = m0 + accumulator_row(thread, 0);
  const int column = n0 + accumulator_column(thread, 0);
  float amax = 0.0f;
  if (m0 + plan::kRowsPerConsumer <= e.m && n0 + plan::kBlockN <= e.n) {
{{RAISE_INSIDE}}  } else {
{{RAISE_CLIPPED}}  }
  const unsigned bits = __float_as_uint(amax);
  unsigned warp_bits;
  redux_sync_max_u32(warp_bits, bits);
  if (thread % 32 == 0) {
    red_global_max_u32((unsigned long long)e.amax_d, warp_bits);
  }
}
