// The consumer's tensor-core step: wgmma over one stage's A and B tiles,
// every K step of the block and every 64-row slice of the consumer's rows,
// as one committed group. The first K step scales the accumulators by
// scale_d (0 starts a tile without a separate zeroing pass), the others
// add to them.
__device__ __forceinline__ void mma_stage(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned scale_d) {
{{PIN_ACCUMULATORS}}
  wgmma_fence();
{{MMA_BODY}}
  wgmma_commit_group();
}
