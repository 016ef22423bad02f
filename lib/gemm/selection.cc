// Layer: choosing configurations, above problem.cc (which it calls) and
// below plan.cc, gemm.cc, autotune.cc and prepare.cc: the heuristic's pick,
// the autotuner's candidates, and the launch grid of a configuration.
#include "ptxgen/gemm/selection.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gemm {
namespace {

// The deepest ring that fits the target's shared memory. Deep rings hide
// L2 latency where few tiles run long: 64x128 tiles at 1024x1024x8192 ran
// 5-7% faster with 8 stages than with 6 (cuBLAS's kernel there has 8 too).
// At least 2, as a wgmma group in flight needs (where not even 2 fit,
// FitsTarget says so).
gen::GemmConfig WithDeepestRing(gen::GemmConfig config, ptx::ScalarType element,
                                const GemmTarget& target) {
  config.stages = std::max(
      2, gen::MaxStagesThatFit(config, element,
                               target.max_shared_bytes_per_block_optin));
  return config;
}

// Whether `config`'s ring, beside the rest of its layout, fits the target's
// shared memory.
bool FitsTarget(const gen::GemmConfig& config, ptx::ScalarType element,
                const GemmTarget& target) {
  return config.stages <=
         gen::MaxStagesThatFit(config, element,
                               target.max_shared_bytes_per_block_optin);
}

// block_k spans one 128-byte swizzle row of the problem's inputs (64 f16,
// 128 fp8, 32 tf32 values); an fp8 kernel that promotes its sums keeps no
// wgmma group in flight (gen::PromotesAccumulators).
gen::GemmConfig WarpSpecialized(const GemmProblem& problem, int block_m,
                                int block_n, int consumers, int cluster_m,
                                gen::GemmEpilogue epilogue) {
  gen::GemmConfig config;
  config.schedule = gen::GemmSchedule::kWarpSpecialized;
  config.block_m = block_m;
  config.block_n = block_n;
  config.block_k = 128 / ptx::SizeInBytes(problem.element);
  config.consumers = consumers;
  config.mma_groups_in_flight =
      gen::PromotesAccumulators(FormOf(problem)) ? 0 : 1;
  config.cluster_m = cluster_m;
  config.epilogue = epilogue;
  config.persistent = true;
  return config;
}

// Two consumers taking turns with whole tiles (gen::GemmSchedule::kPingPong).
gen::GemmConfig PingPong(const GemmProblem& problem, int block_m, int block_n,
                         int cluster_m, gen::GemmEpilogue epilogue) {
  gen::GemmConfig config =
      WarpSpecialized(problem, block_m, block_n, 2, cluster_m, epilogue);
  config.schedule = gen::GemmSchedule::kPingPong;
  return config;
}

// What ptxas spilled of ping-pong (the candidate sweep): 128x128 tiles
// beside the TMA store's transform of C and an activation (24-248 bytes),
// block scales at 64x256 in a cluster (28 bytes).
bool PingPongSpills(const GemmProblem& problem, const gen::GemmConfig& config) {
  return (config.block_m == 128 &&
          config.epilogue == gen::GemmEpilogue::kTmaStore &&
          gen::HasEpilogueOps(FormOf(problem))) ||
         (problem.scaling == GemmScaling::kBlock && config.block_n == 256 &&
          config.cluster_m == 2);
}

// What ptxas spilled of grouped fp8 candidates (the candidate sweep),
// beside the group walk's state and scale addressing: masked block-scaled
// in two 64-row slices of 128 columns per consumer, ping-pong's or
// 256x128's (12-40 bytes); ping-pong staged for the TMA store (4-112
// bytes).
bool GroupedCandidateSpills(const GemmProblem& problem,
                            const gen::GemmConfig& config) {
  if (problem.grouping == Grouping::kNone || !ptx::IsFp8(problem.element)) {
    return false;
  }
  const bool pingpong = config.schedule == gen::GemmSchedule::kPingPong;
  const bool masked_block_scales =
      problem.scaling == GemmScaling::kBlock &&
      problem.grouping == Grouping::kMasked && config.block_m >= 128 &&
      config.block_n == 128 && (pingpong || config.block_m == 256);
  return masked_block_scales ||
         (pingpong && config.epilogue == gen::GemmEpilogue::kTmaStore);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Over the whole batch.
int64_t Tiles(const GemmProblem& problem, int block_m, int block_n) {
  return problem.batch * CeilDiv(problem.m, block_m) *
         CeilDiv(problem.n, block_n);
}

// The share of a persistent grid's MMA work that lands in C, from `clusters`
// resident clusters: tiles hanging over the edges of C and clusters idle in
// the last wave are lost (stream-K keeps the last wave busy).
double GridEfficiency(const GemmProblem& problem, const gen::GemmConfig& config,
                      int64_t clusters) {
  const int64_t units =
      gen::GemmWorkUnits(config, problem.m, problem.n, problem.batch);
  const int64_t waves = CeilDiv(units, clusters);
  const double busy =
      config.stream_k ? 1.0 : static_cast<double>(units) / (waves * clusters);
  const double covered = static_cast<double>(units) * config.cluster_m *
                         config.block_m * config.block_n;
  return busy * static_cast<double>(problem.m) * problem.n / covered;
}

// Stream-K measured faster on the H200 only where the last wave leaves most
// clusters idle and each cluster's share of it is long: at 8192^3 (a 52%
// full last wave, 66 k-tiles a share) it gained 2.6%; with an 88% full
// wave, or shares of 8 k-tiles (K = 1024), it lost 2-5%. (And the kernel
// must be able to count the k-tiles: gen::CheckGemmLaunch.)
bool StreamKPays(const GemmProblem& problem, const gen::GemmConfig& config,
                 int64_t clusters) {
  const int64_t tail =
      gen::GemmWorkUnits(config, problem.m, problem.n, problem.batch) %
      clusters;
  const int64_t k_tiles = CeilDiv(problem.k, config.block_k);
  const int64_t sharers = std::min<int64_t>(
      clusters, tail * std::min<int64_t>(k_tiles, gen::kStreamKMaxPieces));
  gen::GemmGrid grid;
  grid.x = clusters * config.cluster_m;
  grid.cluster_x = config.cluster_m;
  gen::GemmConfig stream_k = config;
  stream_k.stream_k = true;
  return tail > 0 && tail <= clusters * 6 / 10 &&
         tail * k_tiles >= 32 * sharers &&
         gen::CheckGemmLaunch(stream_k, problem.m, problem.n, problem.k, grid)
             .ok();
}

// Rows of cluster tiles visited together: 16, unless that leaves a shorter
// last group, then 8. At 3000x5000x2048 (24 rows of 128) 8 ran 4-6% faster
// than 16 on the H200; where 16 divides the rows it was as fast or faster.
int RasterGroup(const GemmProblem& problem, const gen::GemmConfig& config) {
  const int64_t cluster_rows =
      CeilDiv(CeilDiv(problem.m, config.block_m), config.cluster_m);
  return cluster_rows % 16 == 0 || cluster_rows % 8 != 0 ? 16 : 8;
}

// Block scaling: tiles that straddle B's 128-column scale blocks choose a
// scale per eight columns at run time and promote in narrower parts:
// 128x192 ran at 0.62-0.63x of per-tensor scaling, 128x256 at 0.86-0.93x
// (H200, 2026-12-02).
bool TilesOfWholeScaleBlocks(const GemmProblem& problem, int block_n) {
  gen::GemmTileShape tile;
  tile.block_n = block_n;
  return problem.scaling != GemmScaling::kBlock ||
         gen::TilesAlignToScaleBlocks(tile);
}

// With at least two waves of tiles: 128x256 tiles with two consumer
// warpgroups, or 128x192 where those waste >3% less of the grid
// (3000x5000: the autotuner's pick, 4% faster).
gen::GemmConfig ManyTilesConfig(const GemmProblem& problem,
                                const GemmTarget& target, int cluster_m,
                                gen::GemmEpilogue epilogue) {
  const int64_t clusters = std::max(1, target.sm_count / cluster_m);
  gen::GemmConfig best;
  double best_efficiency = 0;
  for (int block_n : {256, 192}) {
    if (!TilesOfWholeScaleBlocks(problem, block_n)) continue;
    gen::GemmConfig config =
        WarpSpecialized(problem, 128, block_n, 2, cluster_m, epilogue);
    // fp8 promotion holds two 128x256 tiles' sums in no thread's registers.
    if (!gen::ValidateGemmConfigForForm(
             WithDeepestRing(config, problem.element, target), FormOf(problem))
             .ok()) {
      continue;
    }
    config.raster_group = RasterGroup(problem, config);
    gen::GemmConfig stream_k = WithDeepestRing(config, problem.element, target);
    stream_k.stream_k = true;
    config.stream_k =
        StreamKPays(problem, config, clusters) &&
        gen::ValidateGemmConfigForForm(stream_k, FormOf(problem)).ok();
    const double efficiency = GridEfficiency(problem, config, clusters);
    if (efficiency > 1.03 * best_efficiency) {
      best = config;
      best_efficiency = efficiency;
    }
  }
  return best;
}

// The TMA-store epilogue staging half of each consumer's C rows at a time:
// the other half of the C tile's shared memory holds one more stage.
gen::GemmConfig WithHalfStagedC(gen::GemmConfig config) {
  const int chunks = gen::StoreChunkCount(config);
  if (config.epilogue == gen::GemmEpilogue::kTmaStore && chunks % 2 == 0) {
    config.store_chunks = chunks / 2;
  }
  return config;
}

// Whether D's rows (and batches) start on 16-byte boundaries and its rows
// end on one, as a TMA store needs: it writes whole 16-byte granules, so a
// row of n ending inside one would overwrite what follows it (measured on
// the H200: n = 257 with ldd = 272 wrote columns 257-263). Reduced first:
// any int64 may come here, and the products must not wrap.
bool DRowsAligned(const GemmProblem& resolved) {
  constexpr int64_t kGranule = ptx::kTensorGlobalAlignmentBytes;
  const int64_t out_bytes = ptx::SizeInBytes(*resolved.output);
  auto aligned = [&](int64_t elements) {
    return elements % kGranule * out_bytes % kGranule == 0;
  };
  return aligned(resolved.n) && aligned(resolved.ldd) &&
         (resolved.batch == 1 || aligned(resolved.stride_d));
}

// The TMA-store epilogue takes the problem: its form (16-bit D) and D's
// alignment.
bool TmaStoreFits(const GemmProblem& problem) {
  return gen::TmaStoreComputes(FormOf(problem)) &&
         DRowsAligned(Resolved(problem));
}

// The largest m (or n) that takes a skinny tile: a short side no taller
// than one wgmma M goes along the tile's N, rounded up to wgmma's N step.
constexpr int64_t kMaxSkinnySide = ptx::kWgmmaM;

// A problem with one side of at most kMaxSkinnySide (m or n).
bool IsSkinny(const GemmProblem& problem) {
  return std::min(problem.m, problem.n) <= kMaxSkinnySide;
}

// The skinny tile of `width` columns (the short side rounded up to the
// granule), 64 or 128 rows with one warpgroup per 64, over the problem's
// long side: swapped (A and B exchanged) when that side is n. Decode GEMMs
// (m of 1-16, n and k in the thousands) stream B once at memory speed
// only this way: a 64x128 tile there pays for 64 rows of m and leaves
// most SMs idle (0.46-0.72x cuBLAS on the H200, 2026-12-01); 64x16 tiles
// of the swapped problem ran at 0.93-1.06x.
gen::GemmConfig SkinnyConfig(const GemmProblem& problem, int block_m,
                             int width) {
  gen::GemmConfig config =
      WarpSpecialized(problem, block_m, width, block_m / ptx::kWgmmaM, 1,
                      gen::GemmEpilogue::kDirect);
  config.swap_ab = problem.m < problem.n;
  return config;
}

int SkinnyWidth(const GemmProblem& problem) {
  const int64_t narrow = std::min(problem.m, problem.n);
  return static_cast<int>(CeilDiv(narrow, ptx::kWgmmaNStep) * ptx::kWgmmaNStep);
}

// Few 64x128 tiles over a long k (weight gradients: 256x256x28672 had 8
// tiles for 132 SMs, 0.18x cuBLAS): K cut into the most slices that still
// fit one wave, each at least kMinSliceKTiles long so that its ring runs
// full, added up by split-K's reduce kernel.
constexpr int64_t kMinSliceKTiles = 16;
int FewTilesSplitK(const GemmProblem& problem, const gen::GemmConfig& config,
                   int64_t sm_count) {
  const int64_t tiles = Tiles(problem, config.block_m, config.block_n);
  const int64_t k_tiles = CeilDiv(problem.k, config.block_k);
  int split_k = 1;
  for (int slices : {2, 4, 8, 16}) {
    if (tiles * slices <= sm_count && k_tiles >= kMinSliceKTiles * slices)
      split_k = slices;
  }
  return split_k;
}

// FewTilesSplitK for slices that meet in a cluster: two slices while they
// fill at most a wave, four or eight only within half a wave (clusters of
// 4 pack the SMs unevenly: 1024x256x65536 in s8 ran 0.55x cuBLASLt with 4
// slices, 0.79x with 2; 256x256x28672 0.70x with 8, 0.49x with 2).
int InClusterSplitK(const GemmProblem& problem, const gen::GemmConfig& config,
                    int64_t sm_count) {
  const int64_t tiles = Tiles(problem, config.block_m, config.block_n);
  const int64_t k_tiles = CeilDiv(problem.k, config.block_k);
  int split_k = 1;
  for (int slices : {2, 4, 8}) {
    const int64_t fill = slices == 2 ? sm_count : sm_count / 2;
    if (tiles * slices <= fill && k_tiles >= kMinSliceKTiles * slices)
      split_k = slices;
  }
  return split_k;
}

}  // namespace

absl::Status CheckConfigFitsProblem(const gen::GemmConfig& config,
                                    const GemmProblem& problem) {
  if (absl::Status form =
          gen::ValidateGemmConfigForForm(config, FormOf(problem));
      !form.ok()) {
    return form;
  }
  auto refuse = [&](absl::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM config '", gen::ConfigName(config), "' ", rule));
  };
  const GemmProblem r = KernelProblem(config, Resolved(problem));
  if (config.epilogue == gen::GemmEpilogue::kTmaStore && !DRowsAligned(r)) {
    return refuse(absl::StrCat(
        "stores D with TMA, which needs rows (and batches) of D on 16-byte "
        "boundaries (n=",
        r.n, ", ldd=", r.ldd, ", stride_d=", r.stride_d, ")"));
  }
  if (gen::ReducesSlicesInWorkspace(config) &&
      (r.batch != 1 || r.ldd != r.n || r.alpha != 1.0f)) {
    return refuse(
        "splits K into slices that its reduce kernel adds into a packed D of "
        "one GEMM without scaling: it needs batch 1, ldd = n and alpha = 1");
  }
  return absl::OkStatus();
}

absl::StatusOr<gen::GemmGrid> PlanGemmLaunch(const GemmProblem& problem,
                                             const gen::GemmConfig& config,
                                             int resident_clusters) {
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  if (absl::Status fits = CheckConfigFitsProblem(config, problem); !fits.ok()) {
    return fits;
  }
  const GemmProblem kernel = KernelProblem(config, problem);
  const gen::GemmGrid grid =
      gen::GemmLaunchGrid(config, kernel.m, kernel.n, resident_clusters,
                          kernel.batch, kernel.grouping);
  if (absl::Status launch =
          gen::CheckGemmLaunch(config, kernel.m, kernel.n, kernel.k, grid,
                               kernel.batch, kernel.grouping);
      !launch.ok()) {
    return launch;
  }
  return grid;
}

namespace {

// Whether the target runs `config` for `problem`: the problem's rules
// (CheckConfigFitsProblem), the ring in its shared memory, a cluster on its
// SMs.
bool RunsOnTarget(const gen::GemmConfig& config, const GemmProblem& problem,
                  const GemmTarget& target) {
  return CheckConfigFitsProblem(config, problem).ok() &&
         FitsTarget(config, problem.element, target) &&
         gen::ClusterCtas(config) <= target.sm_count;
}

// For a target that cannot run `pick` (two stages of its tile overflow the
// target's shared memory, or its cluster the SMs): the largest smaller
// tile of its schedule, with the pick's epilogue or the direct one, that
// runs there, without a cluster, split-K or stream-K; else `pick`, which
// PlanGemm then refuses naming the shortfall. Measured on no such device:
// the tiles only shrink until they fit.
gen::GemmConfig SmallerTileThatRuns(const GemmProblem& problem,
                                    const gen::GemmConfig& pick,
                                    const GemmTarget& target) {
  const bool pingpong = pick.schedule == gen::GemmSchedule::kPingPong;
  for (const auto& [block_m, block_n] :
       {std::pair<int, int>{128, 128}, {64, 128}, {64, 64}}) {
    for (gen::GemmEpilogue epilogue :
         {pick.epilogue, gen::GemmEpilogue::kDirect}) {
      gen::GemmConfig config =
          pingpong ? PingPong(problem, block_m, block_n, 1, epilogue)
                   : WarpSpecialized(problem, block_m, block_n,
                                     block_m / ptx::kWgmmaM, 1, epilogue);
      if (pingpong && PingPongSpills(problem, config)) continue;
      config = WithDeepestRing(config, problem.element, target);
      if (RunsOnTarget(config, problem, target)) return config;
    }
  }
  return pick;
}

// The heuristic's pick for a skinny problem (IsSkinny), when the problem
// and the target take it: stream-K where 64-row tiles leave SMs idle
// (4096x16x4096: 6% faster, 4096x16x14336: 13%); with a wave of them or more,
// 128-row tiles of two consumers, which keep twice the bytes in flight per SM
// (4x28672x4096 and 14336x8x4096: 6% faster than 64 rows).
std::optional<gen::GemmConfig> SkinnyHeuristic(const GemmProblem& problem,
                                               const GemmTarget& target) {
  if (!IsSkinny(problem)) return std::nullopt;
  const gen::GemmConfig config = WithDeepestRing(
      SkinnyConfig(problem, 64, SkinnyWidth(problem)), problem.element, target);
  const GemmProblem kernel = KernelProblem(config, Resolved(problem));
  const int64_t units =
      gen::GemmWorkUnits(config, kernel.m, kernel.n, kernel.batch);
  gen::GemmConfig tuned = config;
  if (units < target.sm_count) {
    tuned.stream_k = true;
  } else {
    tuned = WithDeepestRing(SkinnyConfig(problem, 128, SkinnyWidth(problem)),
                            problem.element, target);
  }
  if (RunsOnTarget(tuned, problem, target)) return tuned;
  if (RunsOnTarget(config, problem, target)) return config;
  return std::nullopt;
}

// A k-step's time on one SM for 16-bit tiles, a roofline fitted to bf16
// runs on the H200 (2026-12-04, bench/RESULTS.md, #35's second round):
// the tensor cores at 5.3 TFLOP/s per SM (5.0 with one consumer),
// operands from L2 at 108 GB/s per SM and 11.5 TB/s over the GPU, and a
// floor of 395 ns with two consumers (200 ns with one) that 128x96 to
// 128x128 tiles and 64x64 ones ran at.
double KStepSeconds(int block_m, int block_n, int block_k, int64_t active_sms) {
  const bool one_consumer = block_m == ptx::kWgmmaM;
  const double flops = 2.0 * block_m * block_n * block_k;
  const double bytes = 2.0 * (block_m + block_n) * block_k;
  const double feed = std::min(108e9, 11.5e12 / active_sms);
  return std::max({flops / (one_consumer ? 5.0e12 : 5.3e12), bytes / feed,
                   one_consumer ? 200e-9 : 395e-9});
}

// The time a persistent grid of block_m x block_n tiles takes: its waves,
// each the k-steps of a tile and 2 us to fill the ring and store.
double PredictedSeconds(const GemmProblem& problem, int block_m, int block_n,
                        int block_k, int64_t sm_count) {
  const int64_t tiles = Tiles(problem, block_m, block_n);
  const int64_t waves = CeilDiv(tiles, sm_count);
  return waves * (CeilDiv(problem.k, block_k) *
                      KStepSeconds(block_m, block_n, block_k,
                                   std::min(tiles, sm_count)) +
                  2e-6);
}

// A grouped GEMM's tiles, planned for PlannedGroupRows per group:
// - groups of at most 64 rows (decode: B streamed once per group): 64-row
//   tiles of one consumer, stored directly;
// - larger groups store through TMA where D's rows take it (a tile
//   crossing its group's end copies its rows from the staging buffer):
//   1.0-1.15x faster than direct stores for bf16, 1.1-1.3x for fp8 (H200,
//   bench/RESULTS.md);
// - of 16-bit inputs: ping-pong's 128x128 tiles, whose consumers store
//   one tile while the other's main loop runs (6.5% faster than
//   cooperative 128x256 in geometric mean with direct stores);
// - others (fp8 promotes every stage, which ping-pong's 128x128 tiles ran
//   1.2-1.5x slower): 128 rows of two cooperative consumers;
// the widest of 256, 192, 128 and 64 columns that fills a wave, and the
// deepest ring.
gen::GemmConfig GroupedConfig(const GemmProblem& problem,
                              const GemmTarget& target) {
  const int64_t rows = PlannedGroupRows(problem);
  const bool decode = rows <= ptx::kWgmmaM;
  const gen::GemmEpilogue store = !decode && TmaStoreFits(problem)
                                      ? gen::GemmEpilogue::kTmaStore
                                      : gen::GemmEpilogue::kDirect;
  if (!decode && ptx::SizeInBytes(problem.element) == 2) {
    const gen::GemmConfig pingpong = WithDeepestRing(
        PingPong(problem, 128, 128, 1, store), problem.element, target);
    if (RunsOnTarget(pingpong, problem, target)) return pingpong;
  }
  const int block_m = decode ? ptx::kWgmmaM : 128;
  const int64_t tiles_m = CeilDiv(rows, block_m) * problem.batch;
  std::optional<gen::GemmConfig> narrowest;
  for (int block_n : {256, 192, 128, 64}) {
    const gen::GemmConfig config =
        WithDeepestRing(WarpSpecialized(problem, block_m, block_n,
                                        block_m / ptx::kWgmmaM, 1, store),
                        problem.element, target);
    if (!RunsOnTarget(config, problem, target)) continue;
    if (tiles_m * CeilDiv(problem.n, block_n) >= target.sm_count) {
      return config;
    }
    narrowest = config;
  }
  if (narrowest) return *narrowest;
  return SmallerTileThatRuns(
      problem,
      WarpSpecialized(problem, 128, 128, 2, 1, gen::GemmEpilogue::kDirect),
      target);
}

// Fewer than two waves of 128x256 tiles of 16-bit inputs: the tile of 64
// or 128 rows and 64-256 columns (the TMA store's chunks) that
// PredictedSeconds ranks first, the larger on a near tie; none where even
// that fills less than half the SMs (FewTilesSplitK's problems). Measured
// against the 128x128 / 64x128 tiles it replaced (H200, bf16, 18 shapes,
// 7 picks changed): 1000x3000x520 33% faster (128x192), 768x2048x4096 16%
// (64x192), 2000x1500x512 15% (128x192), 333x4096x7168 6% (64x192),
// 200x2112x7168 5% (64x64); level at 2500x1800x640, 2% slower at
// 3000x1000x1024 (128x256).
std::optional<gen::GemmConfig> WaveFittedConfig(const GemmProblem& problem,
                                                const GemmTarget& target,
                                                gen::GemmEpilogue epilogue) {
  if (ptx::SizeInBytes(problem.element) != 2) return std::nullopt;
  std::optional<gen::GemmConfig> best;
  double best_seconds = 0;
  for (int block_m : {128, 64}) {
    for (int block_n : {256, 192, 128, 64}) {
      const gen::GemmConfig config = WarpSpecialized(
          problem, block_m, block_n, block_m / ptx::kWgmmaM, 1, epilogue);
      if (!RunsOnTarget(WithDeepestRing(config, problem.element, target),
                        problem, target)) {
        continue;
      }
      const double seconds = PredictedSeconds(problem, block_m, block_n,
                                              config.block_k, target.sm_count);
      if (!best || seconds < 0.99 * best_seconds) {
        best = config;
        best_seconds = seconds;
      }
    }
  }
  if (best &&
      2 * Tiles(problem, best->block_m, best->block_n) < target.sm_count)
    return std::nullopt;
  return best;
}

// Fewer than two waves of 128x256 tiles, and not one nearly full wave:
// where even 128x128 tiles fill less than half the SMs, 64x128 tiles cut
// into K slices over a long k (FewTilesSplitK), their slices met in a
// cluster (InClusterSplitK) for a form the reduce kernel does not compute;
// else the wave-fitted tile of 16-bit inputs; else 128x128 tiles, or
// 64x128 where those fill less than half the SMs (split-K and stream-K
// measured slower there at 1024x1024x8192).
gen::GemmConfig FewerTilesConfig(const GemmProblem& problem,
                                 const GemmTarget& target,
                                 gen::GemmEpilogue epilogue) {
  const int64_t sms = target.sm_count;
  const bool few_wide_tiles = 2 * Tiles(problem, 128, 128) < sms;
  if (few_wide_tiles) {
    gen::GemmConfig split = WithDeepestRing(
        WarpSpecialized(problem, 64, 128, 1, 1, gen::GemmEpilogue::kDirect),
        problem.element, target);
    split.split_k = FewTilesSplitK(problem, split, sms);
    if (split.split_k > 1 && !CheckConfigFitsProblem(split, problem).ok()) {
      // A form the reduce kernel does not compute meets its slices in a
      // cluster instead (an s32 D, epilogue ops, fp8 into bf16).
      split.split_k = InClusterSplitK(problem, split, sms);
      split.split_k_in_cluster = true;
      split = WithDeepestRing(split, problem.element, target);
    }
    if (split.split_k > 1 && RunsOnTarget(split, problem, target)) return split;
  }
  if (const std::optional<gen::GemmConfig> fitted =
          WaveFittedConfig(problem, target, epilogue)) {
    return *fitted;
  }
  return few_wide_tiles ? WarpSpecialized(problem, 64, 128, 1, 1, epilogue)
                        : WarpSpecialized(problem, 128, 128, 2, 1, epilogue);
}

// int8 sums leave each tile with a long epilogue (4-byte s32 stores): where
// the heuristic picked 128x256 tiles without a cluster, ping-pong's 128x128
// tiles run it beside the other consumer's main loop. s8 -> s32 on the
// H200 (2026-12-03, same run): 2048^3 10%, 4096^3 7%, 6144^3 5%, 8192^3 2%
// faster; where 128x192 tiles or a cluster were picked, 3% and 27% slower.
gen::GemmConfig PingPongInt8(const GemmProblem& problem,
                             const gen::GemmConfig& picked) {
  if (!ptx::IsInt8(problem.element) || picked.block_m != 128 ||
      picked.block_n != 256 || picked.cluster_m != 1 || picked.split_k != 1) {
    return picked;
  }
  return PingPong(problem, 128, 128, 1, gen::GemmEpilogue::kDirect);
}

}  // namespace

// Rules read off measurements on the H200 over the benchmark suites
// (bench/JOURNAL.md):
// - a problem with a side of at most 64 (m or n): SkinnyConfig's tile,
//   stream-K where 64-row tiles fill less than one wave, else 128 rows;
// - with at least two waves of 128x256 tiles, ManyTilesConfig; a 2-CTA
//   cluster sharing B pays off when rows of A and B do not start on
//   128-byte boundaries;
// - one wave of 128x256 tiles that leaves at most a tenth of the SMs idle
//   (2048^3: 128 tiles on 132 SMs): those tiles, with a fourth stage in the
//   shared memory that storing C in halves frees; 2-4% faster than 128x128
//   tiles there, 1-2% faster than the same tiles with 3 stages;
// - with fewer (FewerTilesConfig): split-K where 64x128 tiles fill at most
//   half a wave over a long k; else, for 16-bit inputs, the tile of 64 or
//   128 rows and 64-256 columns whose waves a roofline of a k-step ranks
//   fastest (WaveFittedConfig), where it fills at least half the SMs; else
//   128x128 tiles, or 64x128 with fewer than half the SMs' worth of those;
// - the TMA-store epilogue wherever rows of C allow it;
// - int8 inputs where 128x256 tiles would run without a cluster:
//   ping-pong's 128x128 tiles (PingPongInt8), 2-10% faster;
// - on a target that cannot run the pick (less shared memory than two of
//   its stages need), the largest smaller tile that runs there
//   (SmallerTileThatRuns).
gen::GemmConfig HeuristicConfig(const GemmProblem& problem,
                                const GemmTarget& target) {
  if (problem.grouping != Grouping::kNone) {
    return GroupedConfig(problem, target);
  }
  const int sm_count = target.sm_count;
  if (std::optional<gen::GemmConfig> skinny =
          SkinnyHeuristic(problem, target)) {
    return *skinny;
  }
  const GemmProblem resolved = Resolved(problem);
  const bool tma_store = TmaStoreFits(problem);
  const gen::GemmEpilogue epilogue =
      tma_store ? gen::GemmEpilogue::kTmaStore : gen::GemmEpilogue::kDirect;
  // Rows as stored, whichever the major order: the layouts measured within
  // 1.2% of K-major at 8192^3 and 4096^3 (bench/RESULTS.md) ran without a
  // cluster.
  const bool aligned_rows =
      (resolved.lda * ptx::SizeInBytes(problem.element)) % 128 == 0 &&
      (resolved.ldb * ptx::SizeInBytes(problem.element)) % 128 == 0;
  const int64_t wide_tiles = Tiles(problem, 128, 256);
  const int64_t sms = sm_count;  // 64 bits: 9 * sm_count must not wrap
  gen::GemmConfig config;
  if (wide_tiles >= 2 * sms) {
    config = ManyTilesConfig(problem, target, aligned_rows ? 1 : 2, epilogue);
  } else if (wide_tiles <= sms && 10 * wide_tiles >= 9 * sms) {
    const int block_n = gen::PromotesAccumulators(FormOf(problem)) &&
                                TilesOfWholeScaleBlocks(problem, 192)
                            ? 192
                            : 256;
    config =
        WithHalfStagedC(WarpSpecialized(problem, 128, block_n, 2, 1, epilogue));
  } else {
    config = FewerTilesConfig(problem, target, epilogue);
  }
  config = PingPongInt8(problem, config);
  // A pick the form cannot take (an MN-major B split between a cluster's
  // CTAs) runs without the cluster; asked of the whole config, ring
  // included (with one stage every config is refused).
  config = WithDeepestRing(config, problem.element, target);
  if (config.cluster_m == 2 && !RunsOnTarget(config, problem, target)) {
    config.cluster_m = 1;
    config = WithDeepestRing(config, problem.element, target);
  }
  if (!RunsOnTarget(config, problem, target)) {
    return SmallerTileThatRuns(problem, config, target);
  }
  return config;
}

gen::GemmConfig PingPongConfig(const GemmProblem& problem,
                               const GemmTarget& target) {
  const gen::GemmEpilogue epilogue = TmaStoreFits(problem)
                                         ? gen::GemmEpilogue::kTmaStore
                                         : gen::GemmEpilogue::kDirect;
  gen::GemmConfig config = PingPong(problem, 128, 128, 1, epilogue);
  // Where that spills: one 64-row slice of 256 columns instead.
  if (PingPongSpills(problem, config)) {
    config = PingPong(problem, 64, 256, 1, epilogue);
  }
  config = WithDeepestRing(WithHalfStagedC(config), problem.element, target);
  if (!FitsTarget(config, problem.element, target)) {
    return SmallerTileThatRuns(problem, config, target);
  }
  return config;
}

bool PickedDespiteSpills(const gen::GemmForm& form,
                         const gen::GemmConfig& config) {
  return gen::IsGrouped(form) && ptx::IsFp8(form.element) &&
         config.block_m == 128 && config.block_n == 256 &&
         config.epilogue == gen::GemmEpilogue::kTmaStore;
}

std::vector<gen::GemmConfig> CandidateConfigs(const GemmProblem& problem,
                                              const GemmTarget& target) {
  std::vector<gen::GemmConfig> candidates;
  // Each configuration once: a variant may come out as one already listed.
  auto add = [&](gen::GemmConfig config) {
    config = WithDeepestRing(config, problem.element, target);
    if (std::find(candidates.begin(), candidates.end(), config) ==
            candidates.end() &&
        !GroupedCandidateSpills(problem, config) &&
        RunsOnTarget(config, problem, target)) {
      candidates.push_back(config);
    }
  };
  const gen::GemmEpilogue epilogues[] = {gen::GemmEpilogue::kDirect,
                                         gen::GemmEpilogue::kTmaStore};
  // A 256x128 tile gives each consumer two 64-row slices of accumulators;
  // with C or an activation to compute beside them ptxas spills (8-668
  // bytes, gemm_generator_test), so such forms are not offered it.
  const bool epilogue_ops = gen::HasEpilogueOps(FormOf(problem));
  for (const auto& [block_m, block_n] :
       {std::pair<int, int>{128, 256}, {256, 128}, {128, 192}}) {
    if (epilogue_ops && block_m == 256) continue;
    for (int cluster_m : {1, 2}) {
      for (gen::GemmEpilogue epilogue : epilogues) {
        for (int raster_group : {8, 16}) {
          gen::GemmConfig config = WarpSpecialized(problem, block_m, block_n, 2,
                                                   cluster_m, epilogue);
          config.raster_group = raster_group;
          add(config);
          add(WithHalfStagedC(config));
        }
        gen::GemmConfig stream_k =
            WarpSpecialized(problem, block_m, block_n, 2, cluster_m, epilogue);
        stream_k.raster_group = 16;
        stream_k.stream_k = true;
        add(stream_k);
        add(WithHalfStagedC(stream_k));
      }
    }
  }
  for (const auto& [block_m, block_n, consumers] :
       {std::tuple<int, int, int>{128, 128, 2}, {64, 256, 1}, {64, 128, 1}}) {
    for (gen::GemmEpilogue epilogue : epilogues) {
      gen::GemmConfig config =
          WarpSpecialized(problem, block_m, block_n, consumers, 1, epilogue);
      add(config);
      config.stream_k = true;
      add(config);
    }
  }
  // Ping-pong: a consumer's whole tile in its registers, so at most 128x128
  // of f32 sums (or 64x256).
  for (const auto& [block_m, block_n] :
       {std::pair<int, int>{128, 128}, {64, 256}, {64, 128}}) {
    for (int cluster_m : {1, 2}) {
      for (gen::GemmEpilogue epilogue : epilogues) {
        const gen::GemmConfig config =
            PingPong(problem, block_m, block_n, cluster_m, epilogue);
        if (PingPongSpills(problem, config)) continue;
        add(config);
        add(WithHalfStagedC(config));
      }
    }
  }
  // Skinny tiles, for problems with a short side, in a few widths.
  if (IsSkinny(problem)) {
    const int width = SkinnyWidth(problem);
    for (int block_n : {width, std::max(width, 16), std::max(width, 32)}) {
      for (int block_m : {64, 128}) {
        gen::GemmConfig config = SkinnyConfig(problem, block_m, block_n);
        add(config);
        config.stream_k = true;
        add(config);
      }
    }
  }
  // Split-K only where 128x128 tiles leave SMs idle: elsewhere its f32
  // workspace costs memory and traffic for nothing.
  if (Tiles(problem, 128, 128) < 256) {
    for (int split_k : {2, 4}) {
      for (const auto& [block_m, block_n] :
           {std::pair<int, int>{128, 128}, {128, 256}}) {
        gen::GemmConfig config = WarpSpecialized(problem, block_m, block_n, 2,
                                                 1, gen::GemmEpilogue::kDirect);
        config.split_k = split_k;
        add(config);
      }
    }
    // Slices meeting in a cluster: no workspace and the whole epilogue in
    // the kernel, any form.
    for (gen::GemmEpilogue epilogue : epilogues) {
      for (const auto& [block_m, consumers, split_k] :
           {std::tuple<int, int, int>{128, 2, 2},
            {128, 2, 4},
            {64, 1, 2},
            {64, 1, 4},
            {64, 1, 8}}) {
        gen::GemmConfig config =
            WarpSpecialized(problem, block_m, 128, consumers, 1, epilogue);
        config.split_k = split_k;
        config.split_k_in_cluster = true;
        add(config);
      }
    }
  }
  // A target whose shared memory holds none of the tiles above still gets
  // one: the heuristic's smaller tile.
  if (candidates.empty())
    candidates.push_back(HeuristicConfig(problem, target));
  return candidates;
}

std::vector<gen::GemmConfig> V1SeedSpace() {
  const std::pair<int, int> tiles[] = {
      {64, 128}, {128, 128}, {128, 256}, {256, 128}, {256, 256}};
  std::vector<gen::GemmConfig> space;
  for (const auto& [block_m, block_n] : tiles) {
    for (int block_k : {16, 32, 64}) {
      gen::GemmConfig config;
      config.block_m = block_m;
      config.block_n = block_n;
      config.block_k = block_k;
      space.push_back(config);
    }
  }
  return space;
}

std::vector<gen::GemmConfig> V1CandidateConfigs(ptx::ScalarType element) {
  std::vector<gen::GemmConfig> candidates;
  for (const gen::GemmConfig& config : V1SeedSpace()) {
    if (gen::ValidateGemmConfigForForm(config, gen::PlainForm(element)).ok())
      candidates.push_back(config);
  }
  return candidates;
}

}  // namespace ptxgen::gemm
