// A stage's products into the tile's accumulators: wgmma adds them itself
// (accumulate 1) or overwrites them (0, a tile's first stage).
__device__ __forceinline__ void accumulate_stage(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned accumulate) {
  mma_stage(acc, a_desc, b_desc, accumulate);
}
