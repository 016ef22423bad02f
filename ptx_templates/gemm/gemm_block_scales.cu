// Where one tile's block scales are for this thread (gen::BlockScales'
// layout): A's of its rows, B's of the tile's first column block and the
// next (the same one where n ends first). Rows past m read row m - 1's:
// the store drops them.
struct TileScales {
  const float* a;         // this batch's A scales at k-block 0
  const float* b_first;   // the first column block's at k-block 0
  const float* b_second;  // the next's
  int a_rows[plan::kMSlices][2];
  int m;               // floats between k-blocks of A's scales
  int last_k_block;
  int b_split;         // the tile's columns before it are b_first's
};

__device__ __forceinline__ TileScales tile_scales(const EpilogueArgs& e,
                                                  const Work& w, int cluster_rows,
                                                  int tiles_n, unsigned rank,
                                                  int share, int thread,
                                                  int k_tiles) {
  int batch, m0, n0;
  locate_tile(w, cluster_rows, tiles_n, rank, batch, m0, n0);
  const int row = m0 + share * plan::kRowsPerConsumer + {{THREAD_ROW}};
  const int n_blocks = (e.n + plan::kScaleBlock - 1) / plan::kScaleBlock;
  const int first = n0 / plan::kScaleBlock;
  TileScales t;
  // A contiguous grouped GEMM's A is one matrix of every group's rows.
  t.a = e.scale_a + (long long)(plan::kContiguousGroups ? 0 : batch) * k_tiles * e.m;
  t.b_first = e.scale_b + ((long long)batch * n_blocks + first) * k_tiles;
  t.b_second = e.scale_b +
               ((long long)batch * n_blocks + min(first + 1, n_blocks - 1)) *
                   k_tiles;
#pragma unroll
  for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      t.a_rows[s][h] =
          min(row + s * plan::kWgmmaM + h * plan::kScaleRowStep, e.m - 1);
    }
  }
  t.m = e.m;
  t.last_k_block = k_tiles - 1;
  t.b_split = (first + 1) * plan::kScaleBlock - n0;
  return t;
}

// The scales of k-block kt (the last one past it: a piece loads its next
// stage's scales ahead, and its last stage has no next).
__device__ __forceinline__ StageScales stage_scales(const TileScales& t,
                                                    int kt) {
  const int block = min(kt, t.last_k_block);
  const float* a = t.a + (long long)block * t.m;
  StageScales scales;
#pragma unroll
  for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
    for (int h = 0; h < 2; ++h) scales.a[s][h] = __ldg(a + t.a_rows[s][h]);
  }
  scales.b_first = __ldg(t.b_first + block);
  scales.b_second = __ldg(t.b_second + block);
  return scales;
}
