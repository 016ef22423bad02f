// Where work unit `unit` (a cluster tile of one batch, or with split-K one
// of its K slices) lies: its batch and the origin of this CTA's tile in it.
// Units run batch after batch; inside a batch the tile order decides.
__device__ __forceinline__ void locate_tile(int unit, int cluster_rows, int tiles_n,
                                            unsigned rank, int& batch, int& m0,
                                            int& n0) {
  const int tiles_per_batch = cluster_rows * tiles_n;
  const int tile = unit / plan::kSplitK;
  batch = plan::kBatched ? tile / tiles_per_batch : 0;
  int cluster_row, tile_n;
  tile_of(plan::kBatched ? tile % tiles_per_batch : tile, cluster_rows, tiles_n,
          plan::kRasterGroup, cluster_row, tile_n);
  m0 = (cluster_row * plan::kClusterM + (int)rank) * plan::kBlockM;
  n0 = tile_n * plan::kBlockN;
}
