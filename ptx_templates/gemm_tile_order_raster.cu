// Output tile of cluster tile t: rows of tiles in groups of {{RASTER_GROUP}}.
__device__ __forceinline__ void tile_of(int t, int cluster_rows, int tiles_n,
                                        int& cluster_row, int& tile_n) {
  const int span = {{RASTER_GROUP}} * tiles_n;
  const int first = t / span * {{RASTER_GROUP}};
  const int height = min(cluster_rows - first, {{RASTER_GROUP}});
  cluster_row = first + (t % span) % height;
  tile_n = (t % span) / height;
}
