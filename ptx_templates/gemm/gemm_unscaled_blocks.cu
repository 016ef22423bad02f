// A form without block scales has none to read per tile or stage: these
// stand in for gemm_block_scales.cu's, so that the consumer's main loop is
// one text for every form, and fold to nothing.
struct TileScales {
  int b_split = 0;  // not static: a static member would be a global
};

struct StageScales {};

__device__ __forceinline__ TileScales tile_scales(const EpilogueArgs&,
                                                  const Work&, int, int,
                                                  unsigned, int, int, int) {
  return {};
}

__device__ __forceinline__ StageScales stage_scales(const TileScales&, int) {
  return {};
}

// A stage's products, which take no scales.
__device__ __forceinline__ void accumulate_stage(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    unsigned long long a_desc, unsigned long long b_desc, unsigned accumulate,
    const StageScales&, int) {
  accumulate_stage(acc, a_desc, b_desc, accumulate);
}
