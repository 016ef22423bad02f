// The tile scheduler: which work each cluster does, in what order. Plain
// device code without slots: the kernels pass their planned constants, and
// a host test runs the same text.
//
// The work of one cluster: first whole work units (a unit is a cluster
// tile, or with split-K one of its K slices) cluster, cluster + clusters,
// ... below dp_units; then, with stream-K, its share [sk_begin, sk_end) of
// the k-tile iterations of the tiles left over, laid end to end. Pieces of
// the share are taken from its end backwards: a cluster computes the start
// of a tile before the end of another, so the partial sums that the piece
// ending a tile adds up are ready by then. Iterations are counted in 32
// bits (the host checks that they fit), which keeps divisions inline.
//
// A grouped GEMM's units are counted as they are walked, not planned: its
// groups' rows are on the device. Group g's units are its cluster rows
// times tiles_n, the groups' laid end to end; every cluster walks the
// groups in order, so each reads each group's rows at most once.
struct Schedule {
  int dp_units, k_tiles, clusters;
  int sk_share;       // k-tiles per cluster; the last ones may get fewer
  int sk_begin, sk_end;
  // Grouped only: per group a cumulative row end (contiguous) or a row
  // count (masked), `groups` of them; m, the rows they may reach; the
  // rows of a cluster tile.
  const int* group_rows;
  int groups, tiles_n, m, cluster_block_m;
  bool contiguous;
};

// A piece of work: k-tiles [kt_begin, kt_end) of work unit `unit`.
// `cursor` says what comes next: the next data-parallel unit while it is
// below dp_units, then -1 - (the end of the share not taken yet).
// Grouped, also the group of `unit`: its index, its first unit and how
// many it has, its rows [row_begin, row_end) (of A and D when contiguous,
// of the group's own when masked) and its cluster rows.
struct Work {
  int unit, kt_begin, kt_end;
  int cursor;
  int group, group_unit, group_units;
  int row_begin, row_end, group_cluster_rows;
};

// The work before a cluster's first piece.
__device__ __forceinline__ Work first_work(int cluster) {
  Work w;
  w.unit = -1;
  w.kt_begin = w.kt_end = 0;
  w.cursor = cluster;
  w.group = -1;
  w.group_unit = w.group_units = 0;
  w.row_begin = w.row_end = w.group_cluster_rows = 0;
  return w;
}

// The cluster whose share holds the first k-tile of stream-K unit `unit`.
__device__ __forceinline__ int first_sharer(const volatile Schedule& s, int unit) {
  return (unit - s.dp_units) * s.k_tiles / s.sk_share;
}

// `units` work units of `k_tiles` k-tiles over `clusters` clusters. With
// stream-K the units of the last, partial wave are shared out by k-tiles,
// in at most `max_pieces` pieces per unit, so that a unit gathers few
// partial sums. A unit can start on the last k-tile of a share, so shares
// are at least (k_tiles - 1) / (max_pieces - 1) k-tiles: the rest of the
// unit then spans max_pieces - 1 more of them at most.
__device__ __forceinline__ Schedule make_schedule(int units, int k_tiles,
                                                  int cluster, int clusters,
                                                  bool stream_k, int max_pieces) {
  Schedule s;
  s.k_tiles = k_tiles;
  s.clusters = clusters;
  const int sk_tiles = stream_k ? units % clusters : 0;
  s.dp_units = units - sk_tiles;
  const int sk_iterations = sk_tiles * k_tiles;
  const int sharers = max(1, min(clusters, sk_tiles * min(k_tiles, max_pieces)));
  const int shortest = max_pieces > 1 ? (k_tiles - 1 + max_pieces - 2) / (max_pieces - 1)
                                      : k_tiles;
  s.sk_share = max((sk_iterations + sharers - 1) / sharers, shortest);
  s.sk_begin = min(cluster * s.sk_share, sk_iterations);
  s.sk_end = min((cluster + 1) * s.sk_share, sk_iterations);
  s.group_rows = nullptr;
  s.groups = s.tiles_n = s.m = s.cluster_block_m = 0;
  s.contiguous = false;
  return s;
}

// Moves w to the cluster's next piece of work; false when none is left.
// A data-parallel unit is split `split_k` ways along K.
__device__ __forceinline__ bool next_work(const volatile Schedule& s, Work& w,
                                          int split_k) {
  if (w.cursor >= 0) {
    if (w.cursor < s.dp_units) {
      w.unit = w.cursor;
      w.cursor += s.clusters;
      const int split = w.unit % split_k;
      w.kt_begin = split * s.k_tiles / split_k;
      w.kt_end = (split + 1) * s.k_tiles / split_k;
      return true;
    }
    w.cursor = -1 - s.sk_end;
  }
  const int sk_left = -1 - w.cursor;
  if (sk_left <= s.sk_begin) return false;
  const int tile = (sk_left - 1) / s.k_tiles;
  const int tile_begin = tile * s.k_tiles;
  const int piece_begin = max(tile_begin, s.sk_begin);
  w.unit = s.dp_units + tile;
  w.kt_begin = piece_begin - tile_begin;
  w.kt_end = sk_left - tile_begin;
  w.cursor = -1 - piece_begin;
  return true;
}

// A grouped GEMM's schedule: whole tiles, no stream-K.
__device__ __forceinline__ Schedule make_grouped_schedule(
    const int* group_rows, int groups, bool contiguous, int m, int tiles_n,
    int cluster_block_m, int k_tiles, int clusters) {
  Schedule s = make_schedule(0, k_tiles, 0, clusters, false, 1);
  s.group_rows = group_rows;
  s.groups = groups;
  s.contiguous = contiguous;
  s.m = m;
  s.tiles_n = tiles_n;
  s.cluster_block_m = cluster_block_m;
  return s;
}

// Group g's rows as the kernel uses them, whatever the device array holds:
// inside [0, m), and a contiguous group's from where the previous one
// ended (`previous_end`, as clipped) and never ending before it, so that no
// store leaves D or writes another group's rows.
__device__ __forceinline__ void group_rows_of(const volatile Schedule& s, int g,
                                              int previous_end, int& begin,
                                              int& end) {
  const int* rows = s.group_rows;
  begin = s.contiguous ? previous_end : 0;
  end = min(max(rows[g], begin), s.m);
}

// Moves w to the cluster's next grouped unit (cursor, cursor + clusters,
// ...), past groups it ends, reading their rows; false past the last group.
__device__ __forceinline__ bool next_grouped_work(const volatile Schedule& s,
                                                  Work& w) {
  w.unit = w.cursor;
  w.cursor += s.clusters;
  while (w.unit >= w.group_unit + w.group_units) {
    if (w.group + 1 >= s.groups) return false;
    w.group_unit += w.group_units;
    ++w.group;
    group_rows_of(s, w.group, w.row_end, w.row_begin, w.row_end);
    w.group_cluster_rows =
        (w.row_end - w.row_begin + s.cluster_block_m - 1) / s.cluster_block_m;
    w.group_units = w.group_cluster_rows * s.tiles_n;
  }
  w.kt_begin = 0;
  w.kt_end = s.k_tiles;
  return true;
}
