// How the attention kernel locates its tiles, run on the host from the very
// text it is generated from (ptx_templates/attention/attention_tile.cu): with
// variable lengths every sequence's offsets come from the caller's device
// memory, and whatever they hold, a tile's rows and keys lie inside Q/O and
// K/V; a sequence whose offsets break the rules (out of order, outside the
// rows allocated, longer than planned) gets no rows, so none of its tiles
// reads or writes (issue #48). Well-formed sequences get every row.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

// The device text calls CUDA's min and max of ints, unqualified, and reads
// blockIdx and gridDim: each namespace gets its own, and its plan.
#define __device__
#define __forceinline__ inline
#define CUDA_INT_MIN_MAX                                                  \
  [[maybe_unused]] inline int min(int a, int b) { return a < b ? a : b; } \
  [[maybe_unused]] inline int max(int a, int b) { return a > b ? a : b; } \
  [[maybe_unused]] struct { unsigned x = 0; } blockIdx, gridDim;
// Variable lengths, without and with the causal mask: a CTA a tile.
namespace varlen {
CUDA_INT_MIN_MAX
namespace plan {
constexpr bool kVariableLengths = true;
constexpr bool kCausal = false;
constexpr bool kFoldCausalBlocks = false;
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr unsigned kTilesPerTurn = 1;
}  // namespace plan
#include "ptx_templates/attention/attention_tile.inc"
}  // namespace varlen
namespace varlen_causal {
CUDA_INT_MIN_MAX
namespace plan {
constexpr bool kVariableLengths = true;
constexpr bool kCausal = true;
constexpr bool kFoldCausalBlocks = false;
constexpr int kBlockM = 192;
constexpr int kBlockN = 176;
constexpr unsigned kTilesPerTurn = 1;
}  // namespace plan
#include "ptx_templates/attention/attention_tile.inc"
}  // namespace varlen_causal
#undef CUDA_INT_MIN_MAX
#undef __forceinline__
#undef __device__

namespace ptxgen::attention {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// A launch's tiles as Run plans them: `batch` sequences of at most
// `longest` query rows, `total_q` and `total_k` rows allocated, 2 heads.
template <typename Tiles>
Tiles TilesOf(int block_m, const std::vector<int32_t>& cu_q,
              const std::vector<int32_t>& cu_k, int longest, int total_q,
              int total_k) {
  Tiles tiles;
  tiles.query_blocks = (longest + block_m - 1) / block_m;
  tiles.heads_q = 2;
  tiles.batch = static_cast<int>(cu_q.size()) - 1;
  tiles.heads_per_kv = 1;
  tiles.seq_q = longest;
  tiles.seq_k = 0;
  tiles.total_q = total_q;
  tiles.total_k = total_k;
  tiles.cu_seqlens_q = cu_q.data();
  tiles.cu_seqlens_k = cu_k.data();
  return tiles;
}

// What one launch's tiles cover: each row of Q (per head) the tiles with
// rows give, and whether any tile reaches outside Q/O or K/V.
struct Coverage {
  std::vector<int> rows_written;  // per row of Q, for head 0
  std::vector<std::string> outside;
};

template <typename Tiles, typename Tile>
Coverage Cover(const Tiles& tiles, Tile (*locate)(int, const Tiles&),
               int total_q, int total_k) {
  Coverage coverage;
  coverage.rows_written.assign(total_q, 0);
  const int count = tiles.query_blocks * tiles.heads_q * tiles.batch;
  for (int index = 0; index < count; ++index) {
    const Tile t = locate(index, tiles);
    if (t.rows <= 0) continue;
    const int64_t first_row = int64_t{t.q_start} + t.m0;
    const int64_t end_row = first_row + t.rows;
    const int64_t key_end = int64_t{t.k_start} + t.seq_k;
    if (first_row < 0 || end_row > total_q || t.k_start < 0 ||
        key_end > total_k || t.key_blocks < 0) {
      coverage.outside.push_back(
          absl::StrCat("tile ", index, ": rows ", first_row, "..", end_row,
                       " keys ", t.k_start, "..", key_end));
      continue;
    }
    if (t.head != 0) continue;
    for (int64_t row = first_row; row < end_row; ++row) {
      ++coverage.rows_written[row];
    }
  }
  return coverage;
}

// Offsets a careless or hostile caller passes, each with the sequences
// that are well formed (computed) under 3 sequences of at most 300 rows in
// 700 rows of Q and of K.
struct Offsets {
  const char* what;
  std::vector<int32_t> cu_q, cu_k;
  std::vector<bool> computed;
};

std::vector<Offsets> Hostile() {
  return {
      {"well formed", {0, 100, 400, 700}, {0, 50, 300, 650}, {1, 1, 1}},
      {"past total_q", {0, 100, 400, 800}, {0, 50, 300, 650}, {1, 1, 0}},
      {"negative", {-64, 100, 400, 700}, {0, 50, 300, 650}, {0, 1, 1}},
      {"decreasing", {0, 300, 200, 500}, {0, 50, 300, 650}, {1, 0, 1}},
      {"longer than planned", {0, 301, 400, 700}, {0, 50, 300, 650}, {0, 1, 1}},
      {"keys past total_k", {0, 100, 400, 700}, {0, 50, 300, 701}, {1, 1, 0}},
      {"keys decreasing", {0, 100, 400, 700}, {0, 50, 40, 650}, {1, 0, 1}},
      {"int32's extremes", {kMin, kMax, 0, 1}, {kMax, kMin, 0, 1}, {0, 0, 1}},
  };
}

// A sequence computed gets each of its rows once (per head); one not
// computed gets none; no tile reaches outside, whatever the offsets.
template <typename Tiles, typename Tile>
void ExpectHostileOffsetsStayInside(int block_m,
                                    Tile (*locate)(int, const Tiles&)) {
  constexpr int kTotal = 700;
  for (const Offsets& offsets : Hostile()) {
    SCOPED_TRACE(offsets.what);
    const Tiles tiles = TilesOf<Tiles>(block_m, offsets.cu_q, offsets.cu_k, 300,
                                       kTotal, kTotal);
    const Coverage coverage = Cover(tiles, locate, kTotal, kTotal);
    EXPECT_TRUE(coverage.outside.empty())
        << absl::StrJoin(coverage.outside, "; ");
    std::vector<int> want(kTotal, 0);
    for (size_t b = 0; b < offsets.computed.size(); ++b) {
      if (!offsets.computed[b]) continue;
      for (int row = offsets.cu_q[b]; row < offsets.cu_q[b + 1]; ++row) {
        ++want[row];
      }
    }
    EXPECT_EQ(coverage.rows_written, want);
  }
}

TEST(AttentionTileTest, HostileOffsetsStayInsideAndSkipTheirSequence) {
  ExpectHostileOffsetsStayInside<varlen::AttentionTiles, varlen::AttentionTile>(
      varlen::plan::kBlockM, &varlen::attention_tile);
}

TEST(AttentionTileTest, HostileOffsetsStayInsideUnderTheCausalMask) {
  ExpectHostileOffsetsStayInside<varlen_causal::AttentionTiles,
                                 varlen_causal::AttentionTile>(
      varlen_causal::plan::kBlockM, &varlen_causal::attention_tile);
}

// Random offsets, well formed or not, over many launches: no tile reaches
// outside Q/O or K/V.
TEST(AttentionTileTest, RandomOffsetsNeverReachOutside) {
  std::mt19937 random(48);
  std::uniform_int_distribution<int> small(-40, 400);
  std::uniform_int_distribution<int> pick(0, 9);
  for (int launch = 0; launch < 2000; ++launch) {
    const int batch = 1 + launch % 5;
    std::vector<int32_t> cu_q(batch + 1), cu_k(batch + 1);
    for (int i = 0; i <= batch; ++i) {
      for (int32_t* offset : {&cu_q[i], &cu_k[i]}) {
        const int choice = pick(random);
        *offset = choice == 0 ? kMin : choice == 1 ? kMax : small(random);
      }
    }
    const varlen::AttentionTiles tiles = TilesOf<varlen::AttentionTiles>(
        varlen::plan::kBlockM, cu_q, cu_k, 256, 300, 350);
    const Coverage coverage = Cover(tiles, &varlen::attention_tile, 300, 350);
    ASSERT_TRUE(coverage.outside.empty())
        << "launch " << launch << ": " << absl::StrJoin(coverage.outside, "; ");
  }
}

}  // namespace
}  // namespace ptxgen::attention
