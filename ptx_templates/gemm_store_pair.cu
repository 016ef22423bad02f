// Where the direct epilogue writes: C itself.
struct Output {
  unsigned short* c;
};

__device__ __forceinline__ Output make_output(const EpilogueArgs& e, int unit) {
  Output out;
  out.c = e.c;
  return out;
}

// Rounds two adjacent f32 results to {{ELEMENT}} and stores the ones inside
// the m x n output; pair_stores allows one 4-byte store for both.
__device__ __forceinline__ void store_pair(const Output& destination, int m, int n,
    int row, int column, float low, float high, int pair_stores) {
  if (row >= m || column >= n) return;
  unsigned short* out = destination.c + (unsigned long long)row * n + column;
  if (pair_stores && column + 1 < n) {
    unsigned packed;
    {{PACK}}
    *(unsigned*)out = packed;
    return;
  }
  unsigned short value;
  {{ROUND_LOW}}
  out[0] = value;
  if (column + 1 < n) {
    {{ROUND_HIGH}}
    out[1] = value;
  }
}
