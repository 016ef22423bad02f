// The GEMM kernels' tile scheduler and tile orders, run on the host from the
// kernels' own device text (ptx_templates/gemm/gemm_scheduler.cu and the two
// gemm_tile_order_*.cu): every cluster of a launch is simulated as the
// warp-specialized kernel drives it, and the work they do together is
// checked against what the kernel relies on.
//
// What a launch does, as in the kernel: cluster c of `clusters` runs
//   Schedule s = make_schedule(units, k_tiles, c, clusters, stream_k,
//                              kStreamKMaxPieces);
//   for (Work w = first_work(c); next_work(s, w, split_k);) ...
// on k-tiles [w.kt_begin, w.kt_end) of unit w.unit: output tile
// tile_of(w.unit / split_k, ...), K slice w.unit % split_k. With stream-K a
// piece that does not end its tile (kt_end != k_tiles) publishes partial
// sums in its CTA's one workspace slot; the piece that ends it waits for
// sharers (kt_begin == 0 ? c : first_sharer(s, unit)) .. c - 1.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ptxgen/gen/gemm.h"

// The device text calls CUDA's min and max of ints, unqualified, also on
// volatile fields: std::min and std::max deduce no type from (int,
// volatile int), so each namespace gets int overloads like CUDA's.
#define __device__
#define __forceinline__ inline
#define CUDA_INT_MIN_MAX                                                  \
  [[maybe_unused]] inline int min(int a, int b) { return a < b ? a : b; } \
  [[maybe_unused]] inline int max(int a, int b) { return a > b ? a : b; }
namespace scheduler {
CUDA_INT_MIN_MAX
#include "ptx_templates/gemm/gemm_scheduler.inc"
}  // namespace scheduler
namespace raster {
CUDA_INT_MIN_MAX
#include "ptx_templates/gemm/gemm_tile_order_raster.inc"
}  // namespace raster
namespace hilbert {
CUDA_INT_MIN_MAX
#include "ptx_templates/gemm/gemm_tile_order_hilbert.inc"
}  // namespace hilbert
#undef CUDA_INT_MIN_MAX
#undef __forceinline__
#undef __device__

namespace ptxgen::gen {
namespace {

using scheduler::Schedule;
using scheduler::Work;

// A tile order: a raster group of rows, or kHilbertOrder.
constexpr int kHilbertOrder = 0;
constexpr int kOrders[] = {1, 2, 8, 16, 32, kHilbertOrder};
static_assert(kMaxRasterGroup == 32, "the sweep's largest raster group");

std::string OrderName(int order) {
  return order == kHilbertOrder ? "hilbert" : "g" + std::to_string(order);
}

void TileOf(int order, int t, int cluster_rows, int tiles_n, int& cluster_row,
            int& tile_n) {
  if (order == kHilbertOrder) {
    hilbert::tile_of(t, cluster_rows, tiles_n, 0, cluster_row, tile_n);
  } else {
    raster::tile_of(t, cluster_rows, tiles_n, order, cluster_row, tile_n);
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One launch: a problem's grid of cluster tiles and how it is cut.
struct Launch {
  int64_t m = 0, n = 0;
  int block_m = 128, block_n = 256, cluster_m = 1;
  int cluster_rows = 0, tiles_n = 0;
  int k_tiles = 0;
  int split_k = 1;
  bool stream_k = false;
  int clusters = 0;
  int order = 8;
  int units = 0;

  int Tiles() const { return cluster_rows * tiles_n; }
};

std::string Describe(const Launch& l) {
  std::ostringstream text;
  text << l.m << "x" << l.n << " in " << l.block_m << "x" << l.block_n << " m"
       << l.cluster_m << " (" << l.cluster_rows << " x " << l.tiles_n
       << " cluster tiles), k_tiles " << l.k_tiles << ", split_k " << l.split_k
       << (l.stream_k ? ", stream-K" : "") << ", " << l.clusters
       << " clusters, " << OrderName(l.order);
  return text.str();
}

// A piece of work as one cluster did it.
struct Piece {
  int cluster = 0;
  int sequence = 0;  // its place in the cluster's own order
  int unit = 0, kt_begin = 0, kt_end = 0;
  bool publishes = false;     // stream-K: leaves partial sums for another
  std::vector<int> waits_on;  // stream-K: the sharers whose sums it adds
};

struct Outcome {
  std::vector<Schedule> schedules;  // each cluster's
  std::vector<Piece> pieces;
  bool runaway = false;  // a cluster did not run out of work
};

Outcome Simulate(const Launch& l) {
  Outcome run;
  // A cluster has at most units + 1 pieces (its data-parallel units, then
  // one piece per shared unit its share touches): more is a runaway loop.
  const int64_t limit = int64_t{l.units} + 2;
  for (int c = 0; c < l.clusters; ++c) {
    const Schedule s = scheduler::make_schedule(
        l.units, l.k_tiles, c, l.clusters, l.stream_k, kStreamKMaxPieces);
    run.schedules.push_back(s);
    int sequence = 0;
    for (Work w = scheduler::first_work(c);
         scheduler::next_work(s, w, l.split_k);) {
      if (sequence > limit) {
        run.runaway = true;
        break;
      }
      Piece p;
      p.cluster = c;
      p.sequence = sequence++;
      p.unit = w.unit;
      p.kt_begin = w.kt_begin;
      p.kt_end = w.kt_end;
      if (l.stream_k) {
        if (w.kt_end != l.k_tiles) {
          p.publishes = true;
        } else {
          for (int sharer =
                   w.kt_begin == 0 ? c : scheduler::first_sharer(s, w.unit);
               sharer < c && static_cast<int>(p.waits_on.size()) <= l.clusters;
               ++sharer) {
            p.waits_on.push_back(sharer);
          }
        }
      }
      run.pieces.push_back(std::move(p));
    }
  }
  return run;
}

std::string PieceText(const Piece& p) {
  std::ostringstream text;
  text << "cluster " << p.cluster << " piece " << p.sequence << ": unit "
       << p.unit << " k-tiles [" << p.kt_begin << ", " << p.kt_end << ")";
  return text.str();
}

// The sweep: problems from one tile to thousands, ragged and exact, over
// clusters from 1 to a full H200, K from 1 to 128 k-tiles, split-K 1..4 and
// 16, and stream-K (with split_k 1 only, as the validator requires).
struct Problem {
  int64_t m, n;
  int block_m, block_n, cluster_m;
};
constexpr Problem kProblems[] = {
    {1, 1, 128, 256, 1},         // 1 tile, ragged
    {128, 256, 128, 256, 1},     // 1 tile, exact
    {129, 257, 128, 256, 1},     // 2 x 2, just past the tile
    {256, 512, 128, 128, 2},     // 1 x 4, CTA pairs, exact
    {300, 700, 128, 256, 1},     // 3 x 3, ragged
    {4096, 128, 128, 128, 1},    // a column of 32
    {128, 8192, 128, 256, 1},    // a row of 32
    {1024, 1024, 128, 256, 2},   // 4 x 4, CTA pairs, exact
    {3000, 5000, 128, 256, 1},   // 24 x 20, ragged
    {7777, 3333, 128, 256, 2},   // 31 x 14, CTA pairs, ragged
    {8192, 8192, 128, 256, 1},   // 64 x 32, exact
    {2048, 13312, 128, 256, 1},  // 16 x 52: the selector's stream-K at K 8192
};
constexpr int kClusterCounts[] = {1, 2, 7, 66, 132};
constexpr int kKTiles[] = {1, 2, 3, 17, 128};
constexpr int kSplits[] = {1, 2, 3, 4, 16};

GemmConfig ConfigOf(const Launch& l) {
  GemmConfig config;
  config.schedule = GemmSchedule::kWarpSpecialized;
  config.block_m = l.block_m;
  config.block_n = l.block_n;
  config.cluster_m = l.cluster_m;
  config.split_k = l.split_k;
  config.stream_k = l.stream_k;
  if (l.order == kHilbertOrder) {
    config.tile_order = TileOrder::kHilbert;
  } else {
    config.raster_group = l.order;
  }
  return config;
}

const std::vector<Launch>& Sweep() {
  static const std::vector<Launch>* const sweep = [] {
    auto* launches = new std::vector<Launch>;
    int problem_index = 0;
    for (const Problem& problem : kProblems) {
      ++problem_index;
      for (int resident : kClusterCounts) {
        for (int k_tiles : kKTiles) {
          for (int mode = 0; mode <= static_cast<int>(std::size(kSplits));
               ++mode) {
            Launch l;
            l.m = problem.m;
            l.n = problem.n;
            l.block_m = problem.block_m;
            l.block_n = problem.block_n;
            l.cluster_m = problem.cluster_m;
            l.cluster_rows = static_cast<int>(CeilDiv(
                CeilDiv(problem.m, problem.block_m), problem.cluster_m));
            l.tiles_n = static_cast<int>(CeilDiv(problem.n, problem.block_n));
            l.k_tiles = k_tiles;
            l.stream_k = mode == static_cast<int>(std::size(kSplits));
            l.split_k = l.stream_k ? 1 : kSplits[mode];
            // Every tile order in turn, so that each meets every cut.
            l.order = kOrders[(problem_index + resident + k_tiles + mode) %
                              std::size(kOrders)];
            l.units = l.Tiles() * l.split_k;
            // The resident clusters, and the grid the host launches for
            // them where it is smaller (fewer units than clusters).
            const GemmConfig config = ConfigOf(l);
            const GemmGrid grid = GemmLaunchGrid(config, l.m, l.n, resident);
            const int launched = static_cast<int>(grid.x / grid.cluster_x);
            l.clusters = resident;
            launches->push_back(l);
            if (launched != resident) {
              l.clusters = launched;
              launches->push_back(l);
            }
          }
        }
      }
    }
    return launches;
  }();
  return *sweep;
}

// Runs every launch of the sweep (those `applies` to) and checks it;
// `check` returns "" or what went wrong. Reports how many launches fail
// and the first few.
template <typename Applies, typename Check>
void ExpectForEveryLaunch(Applies applies, Check check) {
  int checked = 0, failures = 0;
  std::ostringstream examples;
  for (const Launch& l : Sweep()) {
    if (!applies(l)) continue;
    ++checked;
    const Outcome run = Simulate(l);
    const std::string why =
        run.runaway ? std::string("a cluster did not run out of work")
                    : check(l, run);
    if (why.empty()) continue;
    if (++failures <= 16) examples << "\n  " << Describe(l) << ":\n    " << why;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(failures, 0) << "of " << checked
                         << " launches; the first:" << examples.str();
}

bool AnyLaunch(const Launch&) { return true; }
bool StreamK(const Launch& l) { return l.stream_k; }
bool SplitK(const Launch& l) { return l.split_k > 1; }

// The pieces of each unit, in the order the run produced them.
std::vector<std::vector<const Piece*>> PiecesByUnit(const Launch& l,
                                                    const Outcome& run,
                                                    std::string& why) {
  std::vector<std::vector<const Piece*>> by_unit(l.units);
  for (const Piece& p : run.pieces) {
    if (p.unit < 0 || p.unit >= l.units || p.kt_begin < 0 ||
        p.kt_end > l.k_tiles || p.kt_begin > p.kt_end) {
      if (why.empty()) why = PieceText(p) + " is outside the work";
      continue;
    }
    by_unit[p.unit].push_back(&p);
  }
  return by_unit;
}

// --- The sweep itself ------------------------------------------------------

TEST(SchedulerSweepTest, CoversTheCasesTheSchedulerMustHandle) {
  bool fewer_tiles_than_clusters = false, many_more_tiles = false,
       one_tile = false, empty_slices = false, stream_k_tail = false,
       stream_k_only = false;
  for (const Launch& l : Sweep()) {
    one_tile |= l.Tiles() == 1;
    fewer_tiles_than_clusters |= l.Tiles() < l.clusters;
    many_more_tiles |= l.Tiles() >= 10 * l.clusters && l.clusters > 1;
    empty_slices |= l.k_tiles < l.split_k;
    stream_k_tail |=
        l.stream_k && l.units > l.clusters && l.units % l.clusters != 0;
    stream_k_only |= l.stream_k && l.units < l.clusters;
    // The host counts the same work units as the simulation.
    ASSERT_EQ(GemmWorkUnits(ConfigOf(l), l.m, l.n), l.units) << Describe(l);
  }
  EXPECT_TRUE(one_tile);
  EXPECT_TRUE(fewer_tiles_than_clusters);
  EXPECT_TRUE(many_more_tiles);
  EXPECT_TRUE(empty_slices);
  EXPECT_TRUE(stream_k_tail);
  EXPECT_TRUE(stream_k_only);
}

// --- Every schedule ---------------------------------------------------------

TEST(TileSchedulerTest, EveryClusterRunsOutOfWork) {
  ExpectForEveryLaunch(
      AnyLaunch, [](const Launch&, const Outcome&) { return std::string(); });
}

// In the output's coordinates: tile_of of the unit's cluster tile, then
// the piece's k-tiles, across split-K slices and stream-K pieces alike.
TEST(TileSchedulerTest, ComputesEveryKTileOfEveryOutputTileExactlyOnce) {
  ExpectForEveryLaunch(AnyLaunch, [](const Launch& l, const Outcome& run) {
    std::vector<int> count(static_cast<size_t>(l.Tiles()) * l.k_tiles, 0);
    for (const Piece& p : run.pieces) {
      if (p.unit < 0 || p.unit >= l.units || p.kt_begin < 0 ||
          p.kt_end > l.k_tiles) {
        return PieceText(p) + " is outside the work";
      }
      int row = -1, col = -1;
      TileOf(l.order, p.unit / l.split_k, l.cluster_rows, l.tiles_n, row, col);
      if (row < 0 || row >= l.cluster_rows || col < 0 || col >= l.tiles_n) {
        return PieceText(p) + " maps outside the grid";
      }
      for (int kt = p.kt_begin; kt < p.kt_end; ++kt) {
        ++count[(static_cast<size_t>(row) * l.tiles_n + col) * l.k_tiles + kt];
      }
    }
    for (size_t i = 0; i < count.size(); ++i) {
      if (count[i] != 1) {
        std::ostringstream text;
        text << "tile (" << i / l.k_tiles / l.tiles_n << ", "
             << i / l.k_tiles % l.tiles_n << ") k-tile " << i % l.k_tiles
             << " computed " << count[i] << " times";
        return text.str();
      }
    }
    return std::string();
  });
}

// Empty pieces only where K has fewer k-tiles than slices: the kernel
// zeros the accumulators of such a slice and still stores them.
TEST(TileSchedulerTest,
     NoPieceIsEmptyButSplitKSlicesWhenKHasFewerTilesThanSlices) {
  ExpectForEveryLaunch(AnyLaunch, [](const Launch& l, const Outcome& run) {
    const bool may_be_empty = !l.stream_k && l.k_tiles < l.split_k;
    for (const Piece& p : run.pieces) {
      if (p.kt_begin > p.kt_end || (p.kt_begin == p.kt_end && !may_be_empty)) {
        return PieceText(p) + " is empty";
      }
    }
    return std::string();
  });
}

// Each unit once, an empty split-K slice included: its zero partial sums
// must be written for the reduce kernel to add.
TEST(TileSchedulerTest, WithoutStreamKVisitsEveryWorkUnitOnceEvenAnEmptySlice) {
  ExpectForEveryLaunch(
      [](const Launch& l) { return !l.stream_k; },
      [](const Launch& l, const Outcome& run) {
        std::string why;
        const auto by_unit = PiecesByUnit(l, run, why);
        if (!why.empty()) return why;
        for (int unit = 0; unit < l.units; ++unit) {
          if (by_unit[unit].size() != 1) {
            return "unit " + std::to_string(unit) + " visited " +
                   std::to_string(by_unit[unit].size()) + " times";
          }
        }
        return std::string();
      });
}

TEST(TileSchedulerTest, WithoutStreamKDealsUnitsRoundRobin) {
  ExpectForEveryLaunch([](const Launch& l) { return !l.stream_k; },
                       [](const Launch& l, const Outcome& run) {
                         for (const Piece& p : run.pieces) {
                           if (p.unit % l.clusters != p.cluster ||
                               p.unit / l.clusters != p.sequence) {
                             return PieceText(p) + " is not the cluster's turn";
                           }
                         }
                         return std::string();
                       });
}

TEST(TileSchedulerTest, SplitKSlicesOfATileAreDisjointContiguousAndInOrder) {
  ExpectForEveryLaunch(SplitK, [](const Launch& l, const Outcome& run) {
    std::string why;
    const auto by_unit = PiecesByUnit(l, run, why);
    if (!why.empty()) return why;
    for (int tile = 0; tile < l.Tiles(); ++tile) {
      int next = 0;  // where the next slice must begin
      for (int slice = 0; slice < l.split_k; ++slice) {
        const auto& pieces = by_unit[tile * l.split_k + slice];
        if (pieces.size() != 1) {
          return "tile " + std::to_string(tile) + " slice " +
                 std::to_string(slice) + " visited " +
                 std::to_string(pieces.size()) + " times";
        }
        if (pieces[0]->kt_begin != next) {
          return PieceText(*pieces[0]) + " does not begin where slice " +
                 std::to_string(slice - 1) + " ends (" + std::to_string(next) +
                 ")";
        }
        next = pieces[0]->kt_end;
      }
      if (next != l.k_tiles) {
        return "the slices of tile " + std::to_string(tile) +
               " end at k-tile " + std::to_string(next);
      }
    }
    return std::string();
  });
}

// --- Stream-K ---------------------------------------------------------------

// Whole waves of units data-parallel, fewer than `clusters` shared; the
// schedule's constants the same in every cluster (first_sharer relies on
// sk_share being everyone's).
TEST(StreamKTest, LeavesOnlyThePartialLastWaveToShareAndEveryClusterAgrees) {
  ExpectForEveryLaunch(StreamK, [](const Launch& l, const Outcome& run) {
    for (const Schedule& s : run.schedules) {
      const Schedule& first = run.schedules[0];
      if (s.dp_units != first.dp_units || s.sk_share != first.sk_share ||
          s.k_tiles != l.k_tiles || s.clusters != l.clusters) {
        return std::string("the clusters' schedules disagree");
      }
    }
    const int dp_units = run.schedules[0].dp_units;
    if (dp_units % l.clusters != 0 || l.units - dp_units < 0 ||
        l.units - dp_units >= l.clusters) {
      return "dp_units " + std::to_string(dp_units) + " of " +
             std::to_string(l.units);
    }
    return std::string();
  });
}

TEST(StreamKTest, DataParallelUnitsAreWholeAndDoneByOneCluster) {
  ExpectForEveryLaunch(StreamK, [](const Launch& l, const Outcome& run) {
    std::string why;
    const auto by_unit = PiecesByUnit(l, run, why);
    if (!why.empty()) return why;
    for (int unit = 0; unit < run.schedules[0].dp_units; ++unit) {
      if (by_unit[unit].size() != 1) {
        return "data-parallel unit " + std::to_string(unit) + " has " +
               std::to_string(by_unit[unit].size()) + " pieces";
      }
      const Piece& p = *by_unit[unit][0];
      if (p.kt_begin != 0 || p.kt_end != l.k_tiles ||
          p.cluster != unit % l.clusters || p.publishes ||
          !p.waits_on.empty()) {
        return PieceText(p) + " is not a whole unit of cluster " +
               std::to_string(unit % l.clusters);
      }
    }
    return std::string();
  });
}

// The piece ending a shared tile adds up the partial sums of exactly the
// other clusters that computed pieces of it, one piece per cluster.
TEST(StreamKTest, ThePieceEndingATileWaitsOnExactlyTheOtherClustersSharingIt) {
  ExpectForEveryLaunch(StreamK, [](const Launch& l, const Outcome& run) {
    std::string why;
    const auto by_unit = PiecesByUnit(l, run, why);
    if (!why.empty()) return why;
    for (int unit = run.schedules[0].dp_units; unit < l.units; ++unit) {
      const Piece* ender = nullptr;
      std::set<int> others;
      std::set<int> clusters;
      for (const Piece* p : by_unit[unit]) {
        if (!clusters.insert(p->cluster).second) {
          return PieceText(*p) + ": a second piece of the unit in one cluster";
        }
        if (p->kt_end == l.k_tiles) {
          if (ender != nullptr)
            return PieceText(*p) + ": a second piece ending the unit";
          ender = p;
        } else {
          if (!p->publishes) return PieceText(*p) + " does not publish";
          others.insert(p->cluster);
        }
      }
      if (ender == nullptr) return "no piece ends unit " + std::to_string(unit);
      const std::set<int> waits(ender->waits_on.begin(), ender->waits_on.end());
      if (waits.size() != ender->waits_on.size() || waits != others) {
        std::ostringstream text;
        text << PieceText(*ender) << " waits on clusters";
        for (int c : ender->waits_on) text << " " << c;
        text << "; the others sharing it:";
        for (int c : others) text << " " << c;
        return text.str();
      }
    }
    return std::string();
  });
}

// So that a resident grid cannot deadlock: cluster 0 waits on none, and
// each cluster only on those that can finish without it.
TEST(StreamKTest, NoPieceWaitsOnAClusterOfEqualOrHigherIndex) {
  ExpectForEveryLaunch(StreamK, [](const Launch&, const Outcome& run) {
    for (const Piece& p : run.pieces) {
      for (int sharer : p.waits_on) {
        if (sharer < 0 || sharer >= p.cluster) {
          return PieceText(p) + " waits on cluster " + std::to_string(sharer);
        }
      }
    }
    return std::string();
  });
}

// A CTA has one workspace slot and one flag: a cluster that published two
// partial tiles would overwrite the first before it is added.
TEST(StreamKTest, EachClusterPublishesAtMostOnePartialTileAndBeforeItWaits) {
  ExpectForEveryLaunch(StreamK, [](const Launch& l, const Outcome& run) {
    std::vector<int> published(l.clusters, 0);
    std::vector<bool> waited(l.clusters, false);
    for (const Piece& p : run.pieces) {
      if (p.publishes) {
        if (++published[p.cluster] > 1)
          return PieceText(p) + " publishes a second time";
        if (waited[p.cluster]) return PieceText(p) + " publishes after waiting";
      }
      if (!p.waits_on.empty()) waited[p.cluster] = true;
    }
    return std::string();
  });
}

// make_schedule's promise (and gemm.h's for kStreamKMaxPieces): few partial
// sums for the piece ending a tile to add up.
//
// A tile can start on the last k-tile of a share: shares are long enough
// that the rest of it spans max_pieces - 1 more at most (found by this
// test: 17 k-tiles in shares of 5, or 128 in shares of 39, 2048x13312x8192
// in 128x256 tiles on 132 clusters, made 5 pieces).
TEST(StreamKTest, NoTileIsSharedByMoreThanMaxPiecesClusters) {
  ExpectForEveryLaunch(StreamK, [](const Launch& l, const Outcome& run) {
    std::vector<int> pieces(l.units, 0);
    for (const Piece& p : run.pieces) {
      if (p.unit >= 0 && p.unit < l.units) ++pieces[p.unit];
    }
    for (int unit = 0; unit < l.units; ++unit) {
      if (pieces[unit] > kStreamKMaxPieces) {
        const Schedule& s = run.schedules[0];
        std::ostringstream text;
        text << "unit " << unit << " has " << pieces[unit]
             << " pieces (dp_units " << s.dp_units << ", "
             << l.units - s.dp_units << " shared tiles, sk_share " << s.sk_share
             << " k-tiles)";
        return text.str();
      }
    }
    return std::string();
  });
}

// --- Tile orders ------------------------------------------------------------

std::vector<std::pair<int, int>> Grids() {
  std::vector<std::pair<int, int>> grids;
  for (int rows = 1; rows <= 40; ++rows) {
    for (int cols = 1; cols <= 40; ++cols) grids.push_back({rows, cols});
  }
  for (const auto& grid : {std::pair<int, int>{31, 14},
                           {64, 32},
                           {32, 64},
                           {128, 128},
                           {1000, 3},
                           {3, 1000},
                           {255, 129},
                           {2048, 1},
                           {1, 2048}}) {
    grids.push_back(grid);
  }
  return grids;
}

// Returns "" or the first cluster tile that lands outside the grid or on
// a tile another one took.
std::string CheckOneToOne(int order, int cluster_rows, int tiles_n) {
  std::vector<int> taken(static_cast<size_t>(cluster_rows) * tiles_n, -1);
  for (int t = 0; t < cluster_rows * tiles_n; ++t) {
    int row = -1, col = -1;
    TileOf(order, t, cluster_rows, tiles_n, row, col);
    const auto where = [&] {
      std::ostringstream text;
      text << OrderName(order) << " on " << cluster_rows << " x " << tiles_n
           << ": cluster tile " << t << " -> (" << row << ", " << col << ")";
      return text.str();
    };
    if (row < 0 || row >= cluster_rows || col < 0 || col >= tiles_n) {
      return where() + " is outside";
    }
    int& owner = taken[static_cast<size_t>(row) * tiles_n + col];
    if (owner >= 0) return where() + " taken by " + std::to_string(owner);
    owner = t;
  }
  return std::string();
}

TEST(TileOrderTest, RasterMapsClusterTilesOntoTheGridOneToOne) {
  for (int group : {1, 2, 8, 16, 32}) {
    for (const auto& [rows, cols] : Grids()) {
      const std::string why = CheckOneToOne(group, rows, cols);
      ASSERT_TRUE(why.empty()) << why;
    }
  }
}

TEST(TileOrderTest, HilbertMapsClusterTilesOntoTheGridOneToOne) {
  for (const auto& [rows, cols] : Grids()) {
    const std::string why = CheckOneToOne(kHilbertOrder, rows, cols);
    ASSERT_TRUE(why.empty()) << why;
  }
}

// The raster order finishes a group of raster_group rows (the last one
// shorter) before it starts the next.
TEST(TileOrderTest, RasterWalksOneGroupOfRowsAfterAnother) {
  for (int group : {1, 2, 8, 16, 32}) {
    for (const auto& [rows, cols] : Grids()) {
      for (int t = 0; t < rows * cols; ++t) {
        int row = -1, col = -1;
        raster::tile_of(t, rows, cols, group, row, col);
        ASSERT_EQ(row / group, t / (group * cols))
            << "g" << group << " on " << rows << " x " << cols << ": tile "
            << t;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Grouped GEMMs: clusters walk the groups' units, counted from the rows on
// the device (next_grouped_work), as the kernel drives them.

struct GroupedLaunch {
  std::vector<int> group_rows;  // as the device holds them
  bool contiguous = true;
  int m = 0;  // rows of A and D, or of each group
  int tiles_n = 1, cluster_block_m = 128, clusters = 1;
};

// The units each group has, from its rows as the kernel clips them.
std::vector<int> UnitsPerGroup(const GroupedLaunch& l) {
  std::vector<int> units;
  int previous_end = 0;
  for (int row : l.group_rows) {
    const int begin = l.contiguous ? previous_end : 0;
    const int end = std::min(std::max(row, begin), l.m);
    if (l.contiguous) previous_end = end;
    units.push_back(
        static_cast<int>(CeilDiv(end - begin, l.cluster_block_m) * l.tiles_n));
  }
  return units;
}

// (group, unit within it) -> how many times a cluster took it; false when
// a cluster ran past every unit there is.
bool WalkGroups(const GroupedLaunch& l,
                std::map<std::pair<int, int>, int>& taken,
                std::vector<std::vector<int>>& rows_seen) {
  const std::vector<int> units = UnitsPerGroup(l);
  const int64_t total = std::accumulate(units.begin(), units.end(), int64_t{0});
  for (int c = 0; c < l.clusters; ++c) {
    const Schedule s = scheduler::make_grouped_schedule(
        l.group_rows.data(), static_cast<int>(l.group_rows.size()),
        l.contiguous, l.m, l.tiles_n, l.cluster_block_m, 7, l.clusters);
    int pieces = 0;
    for (Work w = scheduler::first_work(c);
         scheduler::next_grouped_work(s, w);) {
      if (++pieces > total + 1) return false;
      if (w.kt_begin != 0 || w.kt_end != 7) return false;
      ++taken[{w.group, w.unit - w.group_unit}];
      rows_seen.push_back({w.group, w.row_begin, w.row_end});
    }
  }
  return true;
}

std::vector<GroupedLaunch> GroupedLaunches() {
  std::vector<GroupedLaunch> launches;
  uint32_t state = 12345;
  auto next = [&](int bound) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % static_cast<uint32_t>(bound));
  };
  for (bool contiguous : {true, false}) {
    for (int groups : {1, 2, 8, 33, 256}) {
      for (int cluster_block_m : {64, 128, 256}) {
        for (int clusters : {1, 7, 132}) {
          GroupedLaunch l;
          l.contiguous = contiguous;
          l.cluster_block_m = cluster_block_m;
          l.clusters = clusters;
          l.tiles_n = 1 + next(5);
          int end = 0;
          for (int g = 0; g < groups; ++g) {
            // Empty groups, groups inside one tile, groups of many tiles.
            const int rows = next(4) == 0 ? 0 : next(3 * cluster_block_m);
            end += rows;
            l.group_rows.push_back(contiguous ? end : rows);
            l.m = std::max(l.m, contiguous ? end : rows);
          }
          l.m = std::max(l.m, 1);
          launches.push_back(l);
        }
      }
    }
  }
  return launches;
}

TEST(GroupedSchedulerTest, TakesEveryUnitOfEveryGroupExactlyOnce) {
  for (const GroupedLaunch& l : GroupedLaunches()) {
    std::map<std::pair<int, int>, int> taken;
    std::vector<std::vector<int>> rows_seen;
    ASSERT_TRUE(WalkGroups(l, taken, rows_seen)) << "a cluster ran away";
    const std::vector<int> units = UnitsPerGroup(l);
    int64_t expected = 0;
    for (size_t g = 0; g < units.size(); ++g) {
      for (int u = 0; u < units[g]; ++u) {
        ++expected;
        ASSERT_EQ((taken[{static_cast<int>(g), u}]), 1)
            << "group " << g << " unit " << u << ", " << l.clusters
            << " clusters";
      }
    }
    ASSERT_EQ(static_cast<int64_t>(taken.size()), expected);
  }
}

TEST(GroupedSchedulerTest, GroupsSpanTheirOwnRowsOnly) {
  for (const GroupedLaunch& l : GroupedLaunches()) {
    std::map<std::pair<int, int>, int> taken;
    std::vector<std::vector<int>> rows_seen;
    ASSERT_TRUE(WalkGroups(l, taken, rows_seen));
    for (const std::vector<int>& seen : rows_seen) {
      const int g = seen[0];
      const int begin = l.contiguous && g > 0 ? l.group_rows[g - 1] : 0;
      EXPECT_EQ(seen[1], begin);
      EXPECT_EQ(seen[2], l.group_rows[g]);
    }
  }
}

// Row ends a router gets wrong are clipped: inside 0..m, and a contiguous
// group starts where the previous one ended, as clipped, and never ends
// before it, so that no two groups share a row.
TEST(GroupedSchedulerTest, ClipsRowsOutsideZeroToM) {
  const std::vector<int> wrong = {100, 50, 100000, -7, 300};
  for (bool contiguous : {true, false}) {
    const Schedule s = scheduler::make_grouped_schedule(
        wrong.data(), 5, contiguous, 400, 1, 1, 3, 1);
    std::map<int, std::pair<int, int>> rows;
    for (Work w = scheduler::first_work(0);
         scheduler::next_grouped_work(s, w);) {
      rows[w.group] = {w.row_begin, w.row_end};
    }
    // Empty groups take no unit.
    const std::map<int, std::pair<int, int>> expected =
        contiguous
            ? std::map<int, std::pair<int, int>>{{0, {0, 100}}, {2, {100, 400}}}
            : std::map<int, std::pair<int, int>>{
                  {0, {0, 100}}, {1, {0, 50}}, {2, {0, 400}}, {4, {0, 300}}};
    EXPECT_EQ(rows, expected) << (contiguous ? "contiguous" : "masked");
  }
}

}  // namespace
}  // namespace ptxgen::gen
