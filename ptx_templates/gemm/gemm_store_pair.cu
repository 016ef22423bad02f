// Where the direct epilogue writes: batch `batch` of D, in the output type.
struct Output {
  {{OUTPUT_CTYPE}}* d;
  long long ldd;
  float scale;  // scale_d, which an fp8 D of a scaled form is multiplied by
};

__device__ __forceinline__ Output make_output(const EpilogueArgs& e, int batch, int unit) {
  Output out;
  out.d = ({{OUTPUT_CTYPE}}*)e.d + batch * e.stride_d;
  out.ldd = e.ldd;
  if constexpr (plan::kScalesD) out.scale = *e.scale_d;
  return out;
}

// Stores two results of adjacent columns (an s32 D: the exact sums; else
// each through the epilogue's transform, with an fp8 D of a scaled form
// times scale_d, rounded to the output type) where they fall inside the
// m x n output;
// pair_stores allows one store for both (the pair adjacent in memory and
// aligned: D [m, n] with ldd and the batch stride even).
__device__ __forceinline__ void store_pair(const Output& destination,
    const EpilogueArgs& e, int batch, int row, int column, {{VALUE_TYPE}} low,
    {{VALUE_TYPE}} high, int pair_stores) {
  if (row >= e.m || column >= e.n) return;
  // D [m, n]: the pair is adjacent; D stored [n, m]: a row of it apart.
  {{OUTPUT_CTYPE}}* out = destination.d + (plan::kDTransposed
                                               ? column * destination.ldd + row
                                               : row * destination.ldd + column);
  const bool has_high = column + 1 < e.n;
{{TRANSFORM}}  if constexpr (plan::kScalesD) {
    low *= destination.scale;
    high *= destination.scale;
  }
  if (pair_stores && has_high) {
{{STORE_BOTH}}
    return;
  }
{{STORE_LOW}}
  if (has_high) {
{{STORE_HIGH}}
  }
}
