// Where the direct epilogue writes with split-K: the f32 slice of the
// unit's K split in the workspace ([split][m][n] floats), for the reduce
// kernel to add up (split-K computes the plain form only).
struct Output {
  float* slice;
};

__device__ __forceinline__ Output make_output(const EpilogueArgs& e, int batch, int unit) {
  Output out;
  out.slice = e.workspace + (unsigned long long)(unit % plan::kSplitK) * e.m * e.n;
  return out;
}

// Stores two adjacent f32 partial sums inside the m x n slice; pair_stores
// allows one 8-byte store for both.
__device__ __forceinline__ void store_pair(const Output& destination,
    const EpilogueArgs& e, int batch, int row, int column, float low,
    float high, int pair_stores) {
  if (row >= e.m || column >= e.n) return;
  float* out = destination.slice + (unsigned long long)row * e.n + column;
  if (pair_stores && column + 1 < e.n) {
    *(float2*)out = make_float2(low, high);
    return;
  }
  out[0] = low;
  if (column + 1 < e.n) out[1] = high;
}
