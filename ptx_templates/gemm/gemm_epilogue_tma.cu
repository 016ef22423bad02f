// A grouped tile that crosses its group's last row (e.m): every thread
// copies the staged pass's rows inside the group to D, 16 bytes (8 values)
// at a time, since a TMA box would write the next group's rows too. As for
// TMA, D's rows start and n ends on 16-byte boundaries: a unit that starts
// inside n ends inside it.
__device__ __forceinline__ void store_staged_rows(const EpilogueArgs& e, int batch, int m0,
                                                  int n0, unsigned c_tile, int thread) {
  constexpr int kUnitsPerRow = plan::kStoreRowBytes / 16;
  constexpr int kValuesPerUnit = plan::kStoreChunkColumns / kUnitsPerRow;
  constexpr int kChunkUnits = plan::kRowsPerConsumer * kUnitsPerRow;
  unsigned short* d = (unsigned short*)e.d + batch * e.stride_d;
#pragma unroll 1
  for (int u = thread; u < plan::kStorePassChunks * kChunkUnits;
       u += plan::kThreadsPerWarpgroup) {
    const int chunk = u / kChunkUnits;
    const int row = u % kChunkUnits / kUnitsPerRow;
    const int unit = u % kUnitsPerRow;
    const int column = n0 + chunk * plan::kStoreChunkColumns + unit * kValuesPerUnit;
    if (m0 + row >= e.m || column >= e.n) continue;
    const unsigned offset =
        chunk * plan::kStoreChunkBytes + row * plan::kStoreRowBytes + unit * 16u;
    unsigned values[4];
    ld_shared_v4_b32(values, c_tile + swizzled(offset));
    *(uint4*)(d + (long long)(m0 + row) * e.ldd + column) =
        make_uint4(values[0], values[1], values[2], values[3]);
  }
}

// The TMA-store strategy: alpha times each accumulator, or its
// epilogue_value, rounded to the output type; stages this consumer's
// kRowsPerConsumer x kBlockN rows with stmatrix in 128B-swizzled
// kStoreChunkColumns-column chunks of kStoreChunkBytes bytes,
// kStorePassChunks per pass; after each pass one thread stores its chunks
// with TMA, which clips them to m x n (a grouped tile crossing its group's
// end: store_staged_rows). A pass may write the buffer once the store
// before it (this tile's or the previous one's) has read it.
__device__ __forceinline__ void store_tile(
    const Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators],
    const EpilogueArgs& e, int batch, int m0, int n0, int unit, int consumer,
    int thread) {
  // One stmatrix.x4 per kStMatrixStepColumns columns of a 64-row slice.
  constexpr int kPassSteps =
      plan::kStorePassChunks * plan::kStoreChunkColumns / plan::kStMatrixStepColumns;
  const unsigned c_tile = e.base + plan::kCTileOffset + consumer * plan::kConsumerCBytes;
  const unsigned address_row = stmatrix_row(thread);
  const bool tma_stores = !plan::kGrouped || m0 + plan::kRowsPerConsumer <= e.m;
#pragma unroll
  for (int pass = 0; pass < plan::kStorePasses; ++pass) {
    if (thread == 0) {
      bulk_wait_group_read_0();
    }
    named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int j = 0; j < kPassSteps; ++j) {
        // Step c of the tile, j of the pass: this lane addresses its row at
        // its column of the step, in 16-byte units (8 values) of the pass's
        // columns; value q packs registers stmatrix_register(c, q, 0 and 1).
        const int c = pass * kPassSteps + j;
        const unsigned row = s * plan::kWgmmaM + address_row;
        const unsigned chunk = stmatrix_column(thread, j) / 8;
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
    fence_proxy_async_shared();
    named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
    if (!tma_stores) {
      store_staged_rows(e, batch, m0,
                        n0 + pass * plan::kStorePassChunks * plan::kStoreChunkColumns,
                        c_tile, thread);
    } else if (thread == 0) {
#pragma unroll
      for (int chunk = 0; chunk < plan::kStorePassChunks; ++chunk) {
        {{STORE_CHUNK}}
      }
      bulk_commit_group();
    }
  }
}

// The last TMA stores must have read the staging buffer before the block
// exits.
__device__ __forceinline__ void store_drain(int thread) {
  if (thread == 0) {
    bulk_wait_group_0();
  }
}
