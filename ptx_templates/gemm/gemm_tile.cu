// The cluster's next piece of work: the scheduler's, or a grouped GEMM's
// walk over its groups' units.
__device__ __forceinline__ bool next_piece(const volatile Schedule& s, Work& w) {
  if constexpr (plan::kGrouped) {
    return next_grouped_work(s, w);
  } else {
    return next_work(s, w, plan::kSplitK);
  }
}

// Where a piece's work unit (a cluster tile of one batch, or with split-K
// one of its K slices) lies: its batch (grouped: its group) and the origin
// of this CTA's tile in it. Units run batch after batch (group after
// group); inside a batch (a group's rows) the tile order decides.
__device__ __forceinline__ void locate_tile(const Work& w, int cluster_rows, int tiles_n,
                                            unsigned rank, int& batch, int& m0,
                                            int& n0) {
  int cluster_row, tile_n;
  if constexpr (plan::kGrouped) {
    batch = w.group;
    tile_of(w.unit - w.group_unit, w.group_cluster_rows, tiles_n,
            plan::kRasterGroup, cluster_row, tile_n);
    m0 = w.row_begin + (cluster_row * plan::kClusterM + (int)rank) * plan::kBlockM;
  } else {
    const int tiles_per_batch = cluster_rows * tiles_n;
    const int tile = w.unit / plan::kSplitK;
    batch = plan::kBatched ? tile / tiles_per_batch : 0;
    tile_of(plan::kBatched ? tile % tiles_per_batch : tile, cluster_rows, tiles_n,
            plan::kRasterGroup, cluster_row, tile_n);
    m0 = (cluster_row * plan::kClusterM + (int)rank) * plan::kBlockM;
  }
  n0 = tile_n * plan::kBlockN;
}
