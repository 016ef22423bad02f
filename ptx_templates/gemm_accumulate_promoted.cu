// Promotion (fp8 without fast accumulation): wgmma adds fp8 products into
// its accumulators with fewer bits than f32 keeps, so a stage's products
// start afresh in sums of their own, and once its wgmma completed they are
// added into the tile's f32 accumulators, which the piece zeroed before its
// first stage (kPromotes). Always adding, never copying the sums over on a
// first stage, keeps the accumulators in their registers (a copy let ptxas
// swap the two sets and move them back every stage) and costs no select
// per value: the adds are all the promotion costs beside the wait.
__device__ __forceinline__ void accumulate_stage(
    float (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned accumulate) {
  float stage_sums[plan::kMSlices][plan::kSliceAccumulators];
  mma_stage(stage_sums, a_desc, b_desc, 0u);
  {{WAIT_ALL}}
{{PIN_STAGE_SUMS}}
#pragma unroll
  for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
    for (int i = 0; i < plan::kSliceAccumulators; ++i) acc[s][i] += stage_sums[s][i];
  }
}
