// Block scaling (DeepGEMM's recipe): a stage is one kScaleBlock-k block,
// and A's rows and B's column blocks have a scale for each. The stage's
// sums are promoted as without scales (gemm_accumulate_promoted.cu's
// reasons), each multiplied on its way into the f32 accumulators by its
// row's scale of A times its column block's of B: scales wgmma cannot
// apply, as they change along k.

// One stage's scales for this thread: A's of its rows (two per 64-row
// slice, where the accumulator fragment puts them), B's of the tile's
// first column block and of the next.
struct StageScales {
  float a[plan::kMSlices][2];
  float b_first;
  float b_second;
};

// The stage part after part of the tile's columns, through one set of
// sums of a part's size (the fewest parts whose sums fit beside the
// accumulators). Where tiles straddle B's column blocks, the tile's
// columns before b_split take b_first (tiles that align to them read no
// b_split).
__device__ __forceinline__ void accumulate_stage(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned accumulate,
    const StageScales& scales, int b_split) {
  float stage_sums[plan::kMSlices][plan::kPartAccumulators];
{{PARTS}}}
