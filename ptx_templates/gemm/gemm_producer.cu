// The GEMM's ring: each stage holds the A and B tiles of one k-tile.
using StageRing = Pipeline<plan::kStages, plan::kEmptyArrivals, plan::kStageTxBytes>;

// The producer thread: for every k-tile of every piece of this cluster's
// work, TMA loads of the A tile and the B tile into the next stage of the
// ring; with a 2-CTA cluster, this CTA's share of B multicast into both
// CTAs of the cluster.
__device__ __forceinline__ void produce(unsigned long long a_map_address,
                                        unsigned long long b_map_address,
                                        unsigned base, const StageRing& stages,
                                        const volatile Schedule& schedule,
                                        int cluster, unsigned rank,
                                        int cluster_rows, int tiles_n) {
  PipelineState ring = pipeline_start();
  for (Work w = first_work(cluster); next_piece(schedule, w);) {
    int batch, m0, n0;
    locate_tile(w, cluster_rows, tiles_n, rank, batch, m0, n0);
    for (int kt = w.kt_begin; kt < w.kt_end; ++kt) {
      const unsigned full = stages.producer_acquire(ring);
      const unsigned a_tile = base + ring.stage * plan::kStageBytes;
      const unsigned b_tile = a_tile + plan::kATileBytes;
      const int k0 = kt * plan::kBlockK;
      {{LOAD_A}}
      {{LOAD_B}}
      stages.advance(ring);
    }
  }
}
