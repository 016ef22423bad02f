// Split-K: stores two adjacent f32 partial sums of slice `split` into the
// workspace ([split][m][n] floats), for the reduce kernel to add up;
// pair_stores allows one 8-byte store for both.
__device__ __forceinline__ void store_partial(float* workspace, int split,
    int m, int n, int row, int column, float low, float high, int pair_stores) {
  if (row >= m || column >= n) return;
  float* out = workspace + ((unsigned long long)split * m + row) * n + column;
  if (pair_stores && column + 1 < n) {
    *(float2*)out = make_float2(low, high);
    return;
  }
  out[0] = low;
  if (column + 1 < n) out[1] = high;
}
