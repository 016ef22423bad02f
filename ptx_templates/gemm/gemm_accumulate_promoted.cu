// Promotion (fp8 without fast accumulation): wgmma adds fp8 products into
// its accumulators with fewer bits than f32 keeps, so a stage's products
// start afresh in sums of their own, and once their wgmma completed they
// are added into the tile's f32 accumulators, which the piece zeroed before
// its first stage (kPromotes). Always adding, never copying the sums over on
// a first stage, keeps the accumulators in their registers (a copy let
// ptxas swap the two sets and move them back every stage) and costs no
// select per value.

// Part `part`'s sums (kPartAccumulators registers of each slice: its
// columns, as wgmma's fragment orders registers by column) into the tile's.
__device__ __forceinline__ void add_stage_sums(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const float (&stage_sums)[plan::kMSlices][plan::kPartAccumulators],
    int part) {
#pragma unroll
  for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
    for (int i = 0; i < plan::kPartAccumulators; ++i) {
      acc[s][part * plan::kPartAccumulators + i] += stage_sums[s][i];
    }
  }
}

// The stage part after part of the tile's columns, through one set of
// sums of a part's size: the fewest parts whose sums fit beside the
// accumulators. While one consumer adds, the other's wgmma keeps the
// tensor cores busy.
__device__ __forceinline__ void accumulate_stage(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned accumulate) {
  float stage_sums[plan::kMSlices][plan::kPartAccumulators];
{{PARTS}}}
