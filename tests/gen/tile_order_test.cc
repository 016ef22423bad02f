// The Hilbert tile order, run on the host from the kernels' own device
// text: every tile exactly once, and consecutive tiles side by side.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

#include "gtest/gtest.h"

#define __device__
#define __forceinline__ inline
#include "ptx_templates/gemm/gemm_tile_order_hilbert.inc"
#undef __forceinline__
#undef __device__

namespace {

struct Walk {
  int cells_outside = 0;
  int repeats = 0;
  int unit_steps = 0;
  int diagonal_steps = 0;
  int jumps = 0;
};

Walk WalkCurve(int width, int height) {
  Walk walk;
  std::set<std::pair<int, int>> visited;
  int last_x = 0, last_y = 0;
  for (int d = 0; d < width * height; ++d) {
    int x = -1, y = -1;
    hilbert_cell(d, width, height, x, y);
    if (x < 0 || x >= width || y < 0 || y >= height) ++walk.cells_outside;
    if (!visited.insert({x, y}).second) ++walk.repeats;
    if (d > 0) {
      const int dx = std::abs(x - last_x), dy = std::abs(y - last_y);
      if (dx + dy == 1) {
        ++walk.unit_steps;
      } else if (dx == 1 && dy == 1) {
        ++walk.diagonal_steps;
      } else {
        ++walk.jumps;
      }
    }
    last_x = x;
    last_y = y;
  }
  return walk;
}

TEST(HilbertTileOrderTest, VisitsEveryTileOnceMovingToANeighbour) {
  for (int width = 1; width <= 48; ++width) {
    for (int height = 1; height <= 48; ++height) {
      SCOPED_TRACE(testing::Message() << width << " x " << height);
      const Walk walk = WalkCurve(width, height);
      EXPECT_EQ(walk.cells_outside, 0);
      EXPECT_EQ(walk.repeats, 0);
      EXPECT_EQ(walk.jumps, 0);
      // One diagonal step where the longer side is odd and the shorter
      // even and at least 4; none elsewhere.
      const int longer = std::max(width, height),
                shorter = std::min(width, height);
      const bool diagonal = longer % 2 == 1 && shorter % 2 == 0 && shorter >= 4;
      EXPECT_EQ(walk.diagonal_steps, diagonal ? 1 : 0);
      EXPECT_EQ(walk.unit_steps + walk.diagonal_steps, width * height - 1);
    }
  }
}

// The suite's grids of cluster tiles, e.g. 8192^3 in 128x256 tiles (64 x 32)
// and 7777x3333 in 128x256 tiles with 2-CTA clusters (31 x 14).
TEST(HilbertTileOrderTest, CoversTheGridsOfLargeProblems) {
  for (const auto& [width, height] : {std::pair<int, int>{32, 64},
                                      {14, 31},
                                      {128, 128},
                                      {1, 1000},
                                      {1000, 3},
                                      {255, 129}}) {
    SCOPED_TRACE(testing::Message() << width << " x " << height);
    const Walk walk = WalkCurve(width, height);
    EXPECT_EQ(walk.cells_outside + walk.repeats + walk.jumps, 0);
    EXPECT_LE(walk.diagonal_steps, 1);
  }
}

// A wave of CTAs takes consecutive tiles: on 8192^3's 64 x 32 grid any 128
// of them fit in a box of at most 16 x 16 tiles, where row after row they
// would span 4 rows of all 32 columns.
TEST(HilbertTileOrderTest, AWaveOfTilesIsACompactPatch) {
  constexpr int kWidth = 32, kHeight = 64, kWave = 128;
  for (int first = 0; first + kWave <= kWidth * kHeight; first += kWave / 2) {
    int min_x = kWidth, max_x = -1, min_y = kHeight, max_y = -1;
    for (int d = first; d < first + kWave; ++d) {
      int x = 0, y = 0;
      hilbert_cell(d, kWidth, kHeight, x, y);
      min_x = std::min(min_x, x);
      max_x = std::max(max_x, x);
      min_y = std::min(min_y, y);
      max_y = std::max(max_y, y);
    }
    EXPECT_LE(max_x - min_x + 1, 16) << "wave from tile " << first;
    EXPECT_LE(max_y - min_y + 1, 16) << "wave from tile " << first;
  }
}

}  // namespace
