// A unit of work, a tile: a block of kBlockM query rows of one sequence
// and query head, and the blocks of keys those rows see. Rows and keys are
// counted from the sequence's start; map_row/map_batch address its first
// row in the tensor maps (with variable lengths every sequence lies in one
// [total, heads, dim] tensor: batch 0, rows from its cumulative offset).
struct AttentionTile {
  int head, kv_head, map_batch;
  int q_start, k_start;  // the sequence's first rows in the maps
  int seq_q, seq_k;      // its lengths
  int m0;                // the block's first row
  int rows;              // rows of the block inside the sequence
  int key_blocks;        // blocks of kBlockN keys its rows see
  // Keys before this one are visible to every row of the block: blocks
  // that end at or before it need no mask.
  int unmasked_keys;
};

// The launch's tiles: query_blocks x heads_q x batch, and what locating
// one reads.
struct AttentionTiles {
  int query_blocks, heads_q, batch, heads_per_kv;
  int seq_q, seq_k;      // fixed lengths; variable: seq_q the most a sequence may have
  int total_q, total_k;  // variable lengths: the rows allocated
  const int* cu_seqlens_q;
  const int* cu_seqlens_k;
};

__device__ __forceinline__ int tile_count(const AttentionTiles& tiles) {
  return tiles.query_blocks * tiles.heads_q * tiles.batch;
}

// The k-th tile a CTA takes: turns of kTilesPerTurn consecutive tiles,
// blockIdx.x's first, gridDim.x turns apart (one turn each where the grid
// has a CTA a tile). Unsigned: the tiles number up to INT_MAX, and the
// first index past them stays under 2^32.
__device__ __forceinline__ unsigned cta_tile(unsigned k) {
  const unsigned turn = blockIdx.x + k / plan::kTilesPerTurn * gridDim.x;
  return turn * plan::kTilesPerTurn + k % plan::kTilesPerTurn;
}

// A head's blocks are consecutive, so that the CTAs running at once share
// its K and V in L2. With a causal mask, whose blocks see more keys the
// later they lie, they are taken folded (the last, the first, the last but
// one, the second, ...) where a turn is two tiles, so that every turn has
// about as many keys; otherwise (a CTA a tile) last first, so that the
// long tiles do not all come at the end.
__device__ __forceinline__ int block_in_order(int in_head, const AttentionTiles& tiles) {
  if constexpr (plan::kFoldCausalBlocks) {
    return in_head % 2 == 0 ? tiles.query_blocks - 1 - in_head / 2 : in_head / 2;
  } else if constexpr (plan::kCausal) {
    return tiles.query_blocks - 1 - in_head;
  } else {
    return in_head;
  }
}

__device__ __forceinline__ AttentionTile attention_tile(int index, const AttentionTiles& tiles) {
  AttentionTile t;
  const int block = block_in_order(index % tiles.query_blocks, tiles);
  const int sequence_head = index / tiles.query_blocks;
  const int sequence = sequence_head / tiles.heads_q;
  t.head = sequence_head % tiles.heads_q;
  t.kv_head = t.head / tiles.heads_per_kv;
  if constexpr (plan::kVariableLengths) {
    t.map_batch = 0;
    const int q_start = tiles.cu_seqlens_q[sequence], q_end = tiles.cu_seqlens_q[sequence + 1];
    const int k_start = tiles.cu_seqlens_k[sequence], k_end = tiles.cu_seqlens_k[sequence + 1];
    // The offsets are the caller's, never checked on the host: a sequence
    // whose rows are out of order, outside Q/O or K/V, or more than the
    // launch planned for gets no rows, so none of its tiles reads or writes.
    const bool in_bounds = 0 <= q_start && q_start <= q_end && q_end <= tiles.total_q &&
                           q_end - q_start <= tiles.seq_q && 0 <= k_start && k_start <= k_end &&
                           k_end <= tiles.total_k;
    t.q_start = in_bounds ? q_start : 0;
    t.k_start = in_bounds ? k_start : 0;
    t.seq_q = in_bounds ? q_end - q_start : 0;
    t.seq_k = in_bounds ? k_end - k_start : 0;
  } else {
    t.map_batch = sequence;
    t.q_start = 0;
    t.k_start = 0;
    t.seq_q = tiles.seq_q;
    t.seq_k = tiles.seq_k;
  }
  t.m0 = block * plan::kBlockM;
  t.rows = min(plan::kBlockM, t.seq_q - t.m0);
  // Bottom-right aligned: row i sees keys 0..i + seq_k - seq_q.
  const int shift = t.seq_k - t.seq_q;
  const int key_end =
      plan::kCausal ? min(t.seq_k, t.m0 + plan::kBlockM + shift) : t.seq_k;
  t.key_blocks = max(0, (key_end + plan::kBlockN - 1) / plan::kBlockN);
  t.unmasked_keys = plan::kCausal ? min(t.seq_k, t.m0 + shift + 1) : t.seq_k;
  return t;
}

