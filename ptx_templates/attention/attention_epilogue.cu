// What the epilogue writes beyond the tile: O through its map, or row by
// row at `o` with its strides (elements); the LSE, kept [heads_q,
// lse_rows] per batch entry (lse_rows: seq_q, or with variable lengths
// the total rows, the sequence's start counted in).
struct OutputArgs {
  unsigned long long o_map;
  void* o;
  float* lse;
  int lse_rows;
  int heads_q;
  long long o_seq_stride;
  long long o_head_stride;
  long long o_batch_stride;
};

// Where byte `offset` of the consumer's staged O lies: the Q block's
// layout (kColumns columns of kSpanBytes a row), its rows swizzled.
__device__ __forceinline__ unsigned staged_offset(int consumer, int row, int unit) {
  constexpr int kUnitsPerColumn = plan::kSpanBytes / 16;
  const unsigned offset = (unit / kUnitsPerColumn) * plan::kQColumnBytes +
                          (consumer * plan::kRowsPerConsumer + row) * plan::kSpanBytes +
                          (unit % kUnitsPerColumn) * 16u;
  return swizzled(offset);
}

// A consumer's rows crossing its sequence's end (variable lengths): its
// threads copy the staged rows inside the sequence to O, 16 bytes (8
// values) at a time, since a TMA box would write the next sequence's rows.
__device__ __forceinline__ void store_staged_rows(const AttentionTile& t, const OutputArgs& out,
                                                  unsigned tile, int consumer, int row0,
                                                  int thread) {
  constexpr int kUnitsPerRow = plan::kHeadDim / 8;
  unsigned short* o = (unsigned short*)out.o + t.map_batch * out.o_batch_stride +
                      t.head * out.o_head_stride;
#pragma unroll 1
  for (int u = thread; u < plan::kRowsPerConsumer * kUnitsPerRow;
       u += plan::kThreadsPerWarpgroup) {
    const int row = u / kUnitsPerRow;
    const int unit = u % kUnitsPerRow;
    if (row0 + row >= t.seq_q) continue;
    unsigned values[4];
    ld_shared_v4_b32(values, tile + staged_offset(consumer, row, unit));
    *(uint4*)(o + (long long)(t.q_start + row0 + row) * out.o_seq_stride + unit * 8) =
        make_uint4(values[0], values[1], values[2], values[3]);
  }
}

// The consumer's O rows, each divided by its sum of weights and rounded,
// staged with stmatrix where the consumer's Q rows were in `tile` (its last S has
// read them), then stored by TMA, which clips them to the sequence; the
// LSE of each row by the first lane of its quad.
__device__ __forceinline__ void store_output(const float (&o)[plan::kOutputRegisters],
                                             const float (&inverse)[2], const float (&lse)[2],
                                             const AttentionTile& t, const OutputArgs& out,
                                             unsigned tile, int consumer, int thread) {
  const int row0 = t.m0 + consumer * plan::kRowsPerConsumer;
  if (out.lse != nullptr && thread % plan::kRowLanes == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = row0 + accumulator_row(thread, 0) + r * plan::kRowStep;
      if (row < t.seq_q) {
        out.lse[((long long)t.map_batch * out.heads_q + t.head) * out.lse_rows + t.q_start +
                row] = lse[r];
      }
    }
  }
  const int address_row = stmatrix_row(thread);
#pragma unroll
  for (int step = 0; step < plan::kOutputSteps; ++step) {
    unsigned values[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int high = stmatrix_register(step, q, 1);
      const int low = stmatrix_register(step, q, 0);
      pack_output(values[q], o[high] * inverse[plan::kOutputRow[high]],
                  o[low] * inverse[plan::kOutputRow[low]]);
    }
    stmatrix_x4(tile + staged_offset(consumer, address_row, stmatrix_column(thread, step) / 8),
                values);
  }
  fence_proxy_async_shared();
  named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
  if (plan::kVariableLengths && row0 + plan::kRowsPerConsumer > t.seq_q) {
    store_staged_rows(t, out, tile, consumer, row0, thread);
  } else if (thread == 0) {
#pragma unroll
    for (int c = 0; c < plan::kColumns; ++c) {
      tma_store_4d(out.o_map,
                   {(unsigned)(c * plan::kBoxColumns), (unsigned)(t.q_start + row0),
                    (unsigned)t.head, (unsigned)t.map_batch},
                   tile + c * plan::kQColumnBytes + consumer * plan::kConsumerQBytes);
    }
    bulk_commit_group();
    // Q's block is released (or the CTA exits) once the stores have read
    // the staged rows.
    bulk_wait_group_read_0();
  }
}
