// Output tile of cluster tile t: rows of tiles in groups of raster_group.
__device__ __forceinline__ void tile_of(int t, int cluster_rows, int tiles_n,
                                        int raster_group, int& cluster_row,
                                        int& tile_n) {
  const int span = raster_group * tiles_n;
  const int first = t / span * raster_group;
  const int height = min(cluster_rows - first, raster_group);
  cluster_row = first + (t % span) % height;
  tile_n = (t % span) / height;
}
