// Cell d (0 <= d < width * height) of a generalized Hilbert curve over a
// width x height grid. The curve is cut into rectangles recursively; the
// loop descends into the one holding cell d. Consecutive cells are
// neighbours, but for one diagonal step where the longer side is odd and
// the shorter one even and at least 4. Products stay below width * height.
__device__ __forceinline__ void hilbert_cell(int d, int width, int height,
                                             int& x, int& y) {
  // The rectangle the curve is in: it starts at corner (x, y) and spans
  // `w` cells along the major axis (ax, ay), `h` along the minor (bx, by).
  x = 0;
  y = 0;
  int ax = 1, ay = 0, w = width, bx = 0, by = 1, h = height;
  if (height > width) {
    ax = 0; ay = 1; w = height; bx = 1; by = 0; h = width;
  }
  while (w > 1 && h > 1) {
    // A side splits at the same place whichever way its axis runs: the
    // part at the lower coordinates is the smaller half.
    int w2 = ax + ay > 0 ? w / 2 : (w + 1) / 2;
    if (2 * w > 3 * h) {  // long: two halves along the major axis
      // The first half's curve ends next to the second's start only if
      // that half is even.
      if (w2 % 2 != 0 && w > 2) ++w2;
      if (d < w2 * h) {
        w = w2;
      } else {
        d -= w2 * h;
        x += ax * w2; y += ay * w2;
        w -= w2;
      }
      continue;
    }
    // Three blocks: one at the corner, the far part of the minor axis
    // across the whole major one, and the block beside the first.
    int h2 = bx + by > 0 ? h / 2 : (h + 1) / 2;
    if (h2 % 2 != 0 && h > 2) ++h2;
    if (d < h2 * w2) {  // h2 x w2 at the corner, walked with axes swapped
      int t = ax; ax = bx; bx = t;
      t = ay; ay = by; by = t;
      w = h2; h = w2;
      continue;
    }
    d -= h2 * w2;
    if (d < w * (h - h2)) {  // the far h - h2 of the minor axis, all of w
      x += bx * h2; y += by * h2;
      h -= h2;
      continue;
    }
    d -= w * (h - h2);  // h2 x (w - w2), walked back from the far end of w
    x += ax * (w - 1) + bx * (h2 - 1);
    y += ay * (w - 1) + by * (h2 - 1);
    const int w3 = w - w2;
    int t = ax; ax = -bx; bx = -t;
    t = ay; ay = -by; by = -t;
    w = h2; h = w3;
  }
  if (h == 1) {
    x += ax * d; y += ay * d;
  } else {
    x += bx * d; y += by * d;
  }
}

// Output tile of cluster tile t: along a Hilbert curve over the grid of
// cluster_rows x tiles_n cluster tiles (raster_group is the raster order's
// parameter; the curve has none).
__device__ __forceinline__ void tile_of(int t, int cluster_rows, int tiles_n,
                                        int /*raster_group*/, int& cluster_row,
                                        int& tile_n) {
  hilbert_cell(t, tiles_n, cluster_rows, tile_n, cluster_row);
}
