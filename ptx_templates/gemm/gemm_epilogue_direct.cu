// The direct store strategy: each thread stores its accumulator pairs where
// the wgmma fragment layout (accumulator_row, accumulator_column) puts them,
// through store_pair, clipped to m x n.
__device__ __forceinline__ void store_tile(
    const Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const EpilogueArgs& e, int batch, int m0, int n0, int unit, int consumer,
    int thread) {
  const Output out = make_output(e, batch, unit);
  const int pair_stores = e.pair_stores;
  const int row = m0 + accumulator_row(thread, 0);
  const int column = n0 + accumulator_column(thread, 0);
{{STORES}}
}

// Direct stores need no draining.
__device__ __forceinline__ void store_drain(int thread) {}
