// A consumer warpgroup: its kRowsPerConsumer rows of the CTA's Q block
// against every block of keys they see, last first. Per block: S = Q·Kᵀ
// by wgmma from shared memory; the scores masked where the block crosses
// the sequence's end or the causal diagonal; the online softmax turns them
// into weights, which rounded to the input type are P, wgmma's register A
// operand for O += P·V. The wgmma of P·V for one block runs while the
// softmax of the block before it does (FlashAttention-3's overlap
// within a warpgroup): each group issues the next S and the last P·V
// together. With ping-pong the two consumers take turns issuing their
// groups, so that one's softmax runs while the other's wgmma do.

// S = Q·Kᵀ of the consumer's rows and a K stage, issued.
__device__ __forceinline__ void issue_scores(float (&s)[plan::kScoreRegisters],
                                             unsigned q_rows, unsigned k_tile) {
#pragma unroll
  for (int step = 0; step < plan::kHeadDimSteps; ++step) {
    wgmma_qk(s, matrix_descriptor(plan::kQDescriptor, q_rows + plan::kQSteps[step]),
             matrix_descriptor(plan::kKDescriptor, k_tile + plan::kKSteps[step]),
             step > 0 ? 1u : 0u);
  }
}

// O += P·V of a V stage, issued.
__device__ __forceinline__ void issue_output(float (&o)[plan::kOutputRegisters],
                                             const unsigned (&p)[plan::kPSlices][4],
                                             unsigned v_tile) {
#pragma unroll
  for (int j = 0; j < plan::kPSlices; ++j) {
    wgmma_pv(o, p[j], matrix_descriptor(plan::kVDescriptor, v_tile + plan::kVSteps[j]), 1u);
  }
}

// The block of keys from `key0`'s scores into the running softmax (masked
// where some row of the block must not see some key): each score becomes
// its weight, and `rescale` each row's factor for O.
__device__ __forceinline__ void take_scores(OnlineSoftmax& softmax,
                                            float (&s)[plan::kScoreRegisters],
                                            float (&rescale)[2], int key0, int row0,
                                            float scale_log2, const AttentionTile& t,
                                            int thread) {
  if (key0 + plan::kBlockN > t.unmasked_keys) mask_scores(s, thread, row0, key0, t);
  softmax_update(softmax, s, scale_log2, rescale);
}

// P: the weights rounded to the input type, in place as wgmma's register A.
__device__ __forceinline__ void to_probabilities(const float (&s)[plan::kScoreRegisters],
                                                 unsigned (&p)[plan::kPSlices][4]) {
#pragma unroll
  for (int j = 0; j < plan::kPSlices; ++j) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      pack_probabilities(p[j][r], s[register_a_accumulator(j, r, 1)],
                         s[register_a_accumulator(j, r, 0)]);
    }
  }
}

// A consumer's turn at the tensor cores: consumer 0 has the first; the
// other consumer gets the next unless `last` is consumer 1's last (the
// turns alternate, so consumer 0's last one is followed by consumer 1's).
__device__ __forceinline__ void begin_turn(int consumer) {
  if constexpr (plan::kPingPong) wait_mma_turn(consumer);
}
__device__ __forceinline__ void end_turn(int consumer, bool last) {
  if constexpr (plan::kPingPong) {
    if (consumer == 0 || !last) pass_mma_turn(consumer);
  }
}

// One tile: O and each row's softmax state over every block of keys its
// rows see, the ring positions carried on to the next tile.
__device__ __forceinline__ void attend(const AttentionTile& t, unsigned base, unsigned q_tile,
                                       const KeyRing& keys, const ValueRing& values,
                                       PipelineState& key_stage, PipelineState& value_stage,
                                       float scale_log2, float (&o)[plan::kOutputRegisters],
                                       OnlineSoftmax& softmax, int consumer, int thread) {
  const int lane = thread % 32;
  const unsigned q_rows = q_tile + consumer * plan::kConsumerQBytes;
  const int row0 = t.m0 + consumer * plan::kRowsPerConsumer;
#pragma unroll
  for (int i = 0; i < plan::kOutputRegisters; ++i) o[i] = 0.0f;
  softmax_start(softmax);
  if (t.key_blocks == 0) return;
  if constexpr (plan::kPingPong) {
    if (consumer == 1) pass_mma_turn(consumer);
  }
  float s[plan::kScoreRegisters];
  unsigned p[plan::kPSlices][4];
  float rescale[2];
  // The last block: its scores alone.
  int key0 = (t.key_blocks - 1) * plan::kBlockN;
  keys.consumer_wait(key_stage);
  begin_turn(consumer);
  wgmma_fence();
  issue_scores(s, q_rows, base + plan::kKOffset + key_stage.stage * plan::kKvStageBytes);
  wgmma_commit_group();
  end_turn(consumer, false);
  wgmma_wait_group_0();
  wgmma_pin_scores(s);
  keys.consumer_release(key_stage.stage, lane);
  keys.advance(key_stage);
  take_scores(softmax, s, rescale, key0, row0, scale_log2, t, thread);
  to_probabilities(s, p);
  // Each block before it: its scores, and the P·V of the block after it.
  for (key0 -= plan::kBlockN; key0 >= 0; key0 -= plan::kBlockN) {
    keys.consumer_wait(key_stage);
    values.consumer_wait(value_stage);
    begin_turn(consumer);
    wgmma_fence();
    issue_scores(s, q_rows, base + plan::kKOffset + key_stage.stage * plan::kKvStageBytes);
    wgmma_commit_group();
    issue_output(o, p, base + plan::kVOffset + value_stage.stage * plan::kKvStageBytes);
    wgmma_commit_group();
    end_turn(consumer, false);
    wgmma_wait_group_1();
    wgmma_pin_scores(s);
    keys.consumer_release(key_stage.stage, lane);
    keys.advance(key_stage);
    take_scores(softmax, s, rescale, key0, row0, scale_log2, t, thread);
    // P·V has read P: the next P may take its registers.
    wgmma_wait_group_0();
    wgmma_pin_output(o);
    values.consumer_release(value_stage.stage, lane);
    values.advance(value_stage);
#pragma unroll
    for (int i = 0; i < plan::kOutputRegisters; ++i) o[i] *= rescale[plan::kOutputRow[i]];
    to_probabilities(s, p);
  }
  // The first block's P·V.
  values.consumer_wait(value_stage);
  begin_turn(consumer);
  wgmma_fence();
  issue_output(o, p, base + plan::kVOffset + value_stage.stage * plan::kKvStageBytes);
  wgmma_commit_group();
  end_turn(consumer, true);
  wgmma_wait_group_0();
  wgmma_pin_output(o);
  values.consumer_release(value_stage.stage, lane);
  values.advance(value_stage);
}

// A consumer warpgroup, tile after tile of this CTA: it waits for the Q
// block in the next stage of its ring, attends, stores its O rows (staged where its Q rows were) and
// then releases the Q block for the next tile's.
__device__ __forceinline__ void consume(unsigned base, const QueryRing& queries,
                                        const KeyRing& keys, const ValueRing& values,
                                        const AttentionTiles& tiles, float scale_log2,
                                        const OutputArgs& out, int consumer, int thread) {
  PipelineState query_stage = pipeline_start();
  PipelineState key_stage = pipeline_start();
  PipelineState value_stage = pipeline_start();
  for (unsigned k = 0; cta_tile(k) < (unsigned)tile_count(tiles); ++k) {
    const AttentionTile t = attention_tile((int)cta_tile(k), tiles);
    if (t.rows <= 0) continue;
    float o[plan::kOutputRegisters];
    OnlineSoftmax softmax;
    // Even with no key to see: the epilogue stages O where Q was loaded.
    queries.consumer_wait(query_stage);
    const unsigned q_tile = base + plan::kQOffset + query_stage.stage * plan::kQStageBytes;
    attend(t, base, q_tile, keys, values, key_stage, value_stage, scale_log2, o, softmax,
           consumer, thread);
    float inverse[2], lse[2];
    softmax_finish(softmax, inverse, lse);
    store_output(o, inverse, lse, t, out, q_tile, consumer, thread);
    // Every thread's reads of the staged rows are done (and the TMA store's,
    // which thread 0 waited for).
    named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
    queries.consumer_release(query_stage.stage, thread % 32);
    queries.advance(query_stage);
  }
}
