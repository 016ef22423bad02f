// Per-tensor scaling: a finished tile's sums times scale_a * scale_b, read
// once the main loop is done, so that no register holds them through it.
__device__ __forceinline__ void apply_tensor_scales(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const EpilogueArgs& e) {
  const float scale = *e.scale_a * *e.scale_b;
#pragma unroll
  for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
    for (int i = 0; i < plan::kSliceAccumulators; ++i) acc[s][i] *= scale;
  }
}
