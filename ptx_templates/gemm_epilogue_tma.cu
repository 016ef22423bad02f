// The TMA-store strategy (plain epilogue: D = alpha * A.B): round to
// {{ELEMENT}} and stage this consumer's
// kRowsPerConsumer x kBlockN rows with stmatrix in 128B-swizzled
// kStoreChunkColumns-column chunks of kStoreChunkBytes bytes,
// kStorePassChunks per pass; after each pass one thread stores its chunks
// with TMA, which clips them to m x n. A pass may write the buffer once the
// store before it (this tile's or the previous one's) has read it.
__device__ __forceinline__ void store_tile(
    const float (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const EpilogueArgs& e, int batch, int m0, int n0, int unit, int consumer,
    int thread, int lane) {
  const unsigned c_tile = e.base + plan::kCTileOffset + consumer * plan::kConsumerCBytes;
  const unsigned warp_row = (thread / 32) * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
#pragma unroll
  for (int pass = 0; pass < plan::kStorePasses; ++pass) {
    if (thread == 0) {
      {{WAIT_BUFFER}}
    }
    {{SYNC_CONSUMER}}
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int j = 0; j < plan::kStorePassChunks * 4; ++j) {
        // Lanes 8q..8q+7 address the rows of matrix q: rows 0-7 and 8-15 of
        // the warp's 16, in 8-column chunks 2j and 2j+1 of the pass; value
        // q packs accumulators 8c+2q and 8c+2q+1 of the tile's 16-column
        // step c.
        const int c = pass * plan::kStorePassChunks * 4 + j;
        const unsigned row = s * plan::kWgmmaM + warp_row;
        const unsigned chunk = 2 * j + lane / 16;
        const unsigned offset =
            (chunk / 8) * plan::kStoreChunkBytes + row * plan::kStoreRowBytes + (chunk % 8) * 16u;
        unsigned values[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          {{PACK}}
        }
        {{STORE_MATRIX}}
      }
    }
    {{FENCE_PROXY}}
    {{SYNC_CONSUMER}}
    if (thread == 0) {
#pragma unroll
      for (int chunk = 0; chunk < plan::kStorePassChunks; ++chunk) {
        {{STORE_CHUNK}}
      }
      {{COMMIT}}
    }
  }
}

// The last TMA stores must have read the staging buffer before the block
// exits.
__device__ __forceinline__ void store_drain(int thread) {
  if (thread == 0) {
    {{DRAIN}}
  }
}
