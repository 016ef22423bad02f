// The attention kernel's rings: each stage holds one block of kBlockN keys
// of K, or of V.
using KeyRing = Pipeline<plan::kStages, plan::kEmptyArrivals, plan::kKvTxBytes>;
using ValueRing = Pipeline<plan::kStages, plan::kEmptyArrivals, plan::kKvTxBytes>;
// The Q blocks: a ring of kQueryStages, each released once its tile's O,
// staged where its Q was, has been stored. With two, the next tile's Q
// loads while this one's is used.
using QueryRing = Pipeline<plan::kQueryStages, plan::kEmptyArrivals, plan::kQTxBytes>;

// The producer thread, tile after tile of this CTA: the Q block into the
// next stage of its ring, then for
// every block of keys its rows see, last first, the K block and the V
// block into the next stages of their rings. Each block is kColumns boxes
// of kBoxColumns head-dim columns. The rings run on from tile to tile, so
// the next tile's keys load while this one's last are used.
__device__ __forceinline__ void produce(unsigned long long q_map, unsigned long long k_map,
                                        unsigned long long v_map, unsigned base,
                                        const QueryRing& queries, const KeyRing& keys,
                                        const ValueRing& values, const AttentionTiles& tiles) {
  PipelineState query_stage = pipeline_start();
  PipelineState key_stage = pipeline_start();
  PipelineState value_stage = pipeline_start();
  for (unsigned k = 0; cta_tile(k) < (unsigned)tile_count(tiles); ++k) {
    const AttentionTile t = attention_tile((int)cta_tile(k), tiles);
    if (t.rows <= 0) continue;
    const unsigned q_full = queries.producer_acquire(query_stage);
    const unsigned q_tile = base + plan::kQOffset + query_stage.stage * plan::kQStageBytes;
#pragma unroll
    for (int c = 0; c < plan::kColumns; ++c) {
      tma_load_4d(q_tile + c * plan::kQColumnBytes, q_map,
                  {(unsigned)(c * plan::kBoxColumns), (unsigned)(t.q_start + t.m0),
                   (unsigned)t.head, (unsigned)t.map_batch},
                  q_full);
    }
    queries.advance(query_stage);
    for (int n = t.key_blocks - 1; n >= 0; --n) {
      const unsigned key0 = (unsigned)(t.k_start + n * plan::kBlockN);
      const unsigned k_full = keys.producer_acquire(key_stage);
      const unsigned k_tile = base + plan::kKOffset + key_stage.stage * plan::kKvStageBytes;
#pragma unroll
      for (int c = 0; c < plan::kColumns; ++c) {
        tma_load_4d(k_tile + c * plan::kKvColumnBytes, k_map,
                    {(unsigned)(c * plan::kBoxColumns), key0, (unsigned)t.kv_head,
                     (unsigned)t.map_batch},
                    k_full);
      }
      keys.advance(key_stage);
      const unsigned v_full = values.producer_acquire(value_stage);
      const unsigned v_tile = base + plan::kVOffset + value_stage.stage * plan::kKvStageBytes;
#pragma unroll
      for (int c = 0; c < plan::kColumns; ++c) {
        tma_load_4d(v_tile + c * plan::kKvColumnBytes, v_map,
                    {(unsigned)(c * plan::kBoxColumns), key0, (unsigned)t.kv_head,
                     (unsigned)t.map_batch},
                    v_full);
      }
      values.advance(value_stage);
    }
  }
}
