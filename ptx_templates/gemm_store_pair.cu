// Where the direct epilogue writes: batch `batch` of D, {{OUTPUT}}.
struct Output {
  {{OUTPUT_CTYPE}}* d;
  long long ldd;
{{OUTPUT_SCALE_FIELD}}};

__device__ __forceinline__ Output make_output(const EpilogueArgs& e, int batch, int unit) {
  Output out;
  out.d = ({{OUTPUT_CTYPE}}*)e.d + batch * e.stride_d;
  out.ldd = e.ldd;
{{OUTPUT_SCALE_READ}}  return out;
}

// Stores two results of adjacent columns, each through epilogue_value
// (an fp8 D of a scaled form times scale_d) and rounded to {{OUTPUT}},
// where they fall inside the m x n output;
// pair_stores allows one store for both (the pair adjacent in memory and
// aligned: D [m, n] with ldd and the batch stride even).
__device__ __forceinline__ void store_pair(const Output& destination,
    const EpilogueArgs& e, int batch, int row, int column, float low,
    float high, int pair_stores) {
  if (row >= e.m || column >= e.n) return;
  {{OUTPUT_CTYPE}}* out = destination.d + {{D_OFFSET}};
  low = epilogue_value(e, low, batch, row, column);
  const bool has_high = column + 1 < e.n;
  if (has_high) high = epilogue_value(e, high, batch, row, column + 1);
{{OUTPUT_SCALE}}  if (pair_stores && has_high) {
{{STORE_BOTH}}
    return;
  }
{{STORE_LOW}}
  if (has_high) {
{{STORE_HIGH}}
  }
}
