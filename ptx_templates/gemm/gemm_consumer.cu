// A consumer warpgroup's main loop over one piece of work: for each of its
// k-tiles, wait for the stage, accumulate its products, keep
// kMmaGroupsInFlight wgmma group(s) in flight, and release each stage once
// the group that read it completed. `released` is the stage whose group is
// still in flight (-1: none); it carries over to the next piece.
__device__ __forceinline__ void mma_piece(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators], const Work& w,
    const StageRing& stages, PipelineState& ring, int& released, unsigned base,
    int share, int lane, const TileScales& scales) {
  // Promoted sums add into zeros; so does a split-K slice of no k-tiles.
  if (plan::kPromotes || w.kt_begin == w.kt_end) {
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int i = 0; i < plan::kSliceAccumulators; ++i) acc[s][i] = 0;
    }
  }
  // Block scales: each stage's loaded one stage ahead, so that no wgmma
  // waits on their loads (a form without them reads none).
  StageScales next = stage_scales(scales, w.kt_begin);
  for (int kt = w.kt_begin; kt < w.kt_end; ++kt) {
    const StageScales current = next;
    next = stage_scales(scales, kt + 1);
    const unsigned stage_base = base + ring.stage * plan::kStageBytes;
    const unsigned a_tile = stage_base + share * plan::kConsumerABytes;
    const unsigned b_tile = stage_base + plan::kATileBytes;
    stages.consumer_wait(ring);
    // The first k-tile overwrites the accumulators, the rest add.
    accumulate_stage(acc, matrix_descriptor(plan::kADescriptor, a_tile),
                     matrix_descriptor(plan::kBDescriptor, b_tile),
                     kt != w.kt_begin, current, scales.b_split);
    wgmma_wait_in_flight();
{{PIN_ACCUMULATORS}}
    if (plan::kMmaGroupsInFlight == 0) released = ring.stage;
    if (released >= 0) stages.consumer_release(released, lane);
    released = plan::kMmaGroupsInFlight == 0 ? -1 : ring.stage;
    stages.advance(ring);
  }
  if (plan::kMmaGroupsInFlight != 0) {
    wgmma_wait_group_0();
  }
{{PIN_ACCUMULATORS}}
  if (released >= 0) {
    stages.consumer_release(released, lane);
    released = -1;
  }
}

// A consumer warpgroup: every piece of the cluster's work through the main
// loop, then (with stream-K) the meeting of the pieces of shared tiles, then
// the epilogue of the tiles it completes. Cooperative consumers take every
// piece, each its share of the tile's rows; ping-pong consumers take every
// other piece whole, and their turns at the tensor cores.
__device__ __forceinline__ void consume(const EpilogueArgs& out, unsigned base,
                                        unsigned barriers,
                                        const volatile Schedule& schedule,
                                        int cluster, unsigned rank,
                                        int cluster_rows, int tiles_n,
                                        int k_tiles) {
  const int consumer = threadIdx.x / plan::kThreadsPerWarpgroup - 1;
  // Its share of each tile's rows: ping-pong consumers take them all.
  const int share = plan::kPingPong ? 0 : consumer;
  const int thread = threadIdx.x % plan::kThreadsPerWarpgroup;
  const int lane = threadIdx.x % 32;
  Accumulator acc[plan::kMSlices][plan::kSliceAccumulators];
  const StageRing stages{barriers};
  PipelineState ring = pipeline_start();
  int released = -1;
  int piece = 0;  // of the cluster's work
  int meetings = 0;  // tiles met in the cluster so far (split-K meeting)
  for (Work w = first_work(cluster); next_piece(schedule, w); ++piece) {
    if constexpr (plan::kPingPong) {
      if (piece % plan::kConsumers != consumer) {
        stages.skip(ring, w.kt_end - w.kt_begin);  // the other's stages
        continue;
      }
      if (piece > 0) wait_mma_turn(consumer);
    }
    const TileScales scales = tile_scales(out, w, cluster_rows, tiles_n, rank,
                                          share, thread, k_tiles);
    mma_piece(acc, w, stages, ring, released, base, share, lane, scales);
    if constexpr (plan::kPingPong) pass_mma_turn(consumer);
    // Located after the main loop: nothing of it stays live through it.
    int batch, m0, n0;
    locate_tile(w, cluster_rows, tiles_n, rank, batch, m0, n0);
    m0 += share * plan::kRowsPerConsumer;
    // A group's stores stop at its last row.
    EpilogueArgs tile_out = out;
    if constexpr (plan::kGrouped) tile_out.m = w.row_end;
    if constexpr (plan::kStreamK) {
      if (!stream_k_fixup(acc, w, out.workspace, schedule, cluster, rank,
                          consumer, thread, k_tiles)) {
        continue;  // its partial sums wait in the workspace
      }
    } else if constexpr (plan::kSplitKInCluster) {
      if (!meet_in_cluster(acc, w, base, barriers, consumer, thread, meetings)) {
        continue;  // rank 0 adds its partial sums and stores the tile
      }
    }
{{FINISH_TILE}}    store_tile(acc, tile_out, batch, m0, n0, w.unit, consumer, thread);
  }
  store_drain(thread);
}
