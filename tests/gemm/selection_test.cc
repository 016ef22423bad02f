// The heuristic's rules, the autotuner's candidates and the checks of a
// (problem, config) pair, without a GPU.
#include "ptxgen/gemm/selection.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

TEST(SelectionTest, LargeProblemsGet128x256TilesWithTheTmaStore) {
  const gen::GemmConfig config =
      HeuristicConfig({8192, 8192, 8192, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(config.block_m, 128);
  EXPECT_EQ(config.block_n, 256);
  EXPECT_EQ(config.epilogue, gen::GemmEpilogue::kTmaStore);
  EXPECT_TRUE(gen::ValidateGemmConfig(config, ScalarType::kF16).ok());
}

// fp8 and tf32 stages span one 128-byte row of K (128 and 32 values). fp8's
// promotion holds sums beside the accumulators with no wgmma group in
// flight: 128x256 fits 232 registers with a stage in four 64-column parts;
// with fast accumulation it is 128x256 with a group in flight.
TEST(SelectionTest, Fp8AndTf32TilesFitTheirRowsAndRegisters) {
  GemmProblem fp8{8192, 8192, 8192, ScalarType::kE4M3};
  const gen::GemmConfig promoted = HeuristicConfig(fp8, GemmTarget::H200());
  EXPECT_EQ(promoted.block_k, 128);
  EXPECT_EQ(promoted.block_n, 256);
  EXPECT_EQ(promoted.mma_groups_in_flight, 0);
  EXPECT_TRUE(gen::ValidateGemmConfigForForm(promoted, FormOf(fp8)).ok());
  fp8.fast_accumulation = true;
  const gen::GemmConfig fast = HeuristicConfig(fp8, GemmTarget::H200());
  EXPECT_EQ(fast.block_n, 256);
  EXPECT_EQ(fast.mma_groups_in_flight, 1);
  const GemmProblem tf32{8192, 8192, 8192, ScalarType::kTF32};
  const gen::GemmConfig tf32_config = HeuristicConfig(tf32, GemmTarget::H200());
  EXPECT_EQ(tf32_config.block_k, 32);
  // f32 D: the TMA store stages 16-bit values only.
  EXPECT_EQ(tf32_config.epilogue, gen::GemmEpilogue::kDirect);
  for (const GemmProblem& problem :
       {GemmProblem{16, 4096, 4096, ScalarType::kE5M2},
        GemmProblem{1024, 1024, 8192, ScalarType::kE4M3},
        GemmProblem{2048, 2048, 2048, ScalarType::kTF32}}) {
    const gen::GemmConfig config = HeuristicConfig(problem, GemmTarget::H200());
    EXPECT_TRUE(CheckConfigFitsProblem(config, problem).ok())
        << gen::ConfigName(config);
    for (const gen::GemmConfig& candidate :
         CandidateConfigs(problem, GemmTarget::H200())) {
      EXPECT_EQ(candidate.block_k * ptx::SizeInBytes(problem.element), 128)
          << gen::ConfigName(candidate);
    }
  }
}

TEST(SelectionTest, PromotionRefusesGroupsInFlightAndTooManyAccumulators) {
  const gen::GemmForm fp8 = gen::PlainForm(ScalarType::kE4M3);
  const auto refusal = [&](const char* name) {
    absl::StatusOr<gen::GemmConfig> config = gen::ParseConfigName(name);
    EXPECT_TRUE(config.ok()) << config.status();
    return gen::ValidateGemmConfigForForm(*config, fp8);
  };
  EXPECT_TRUE(absl::StrContains(
      refusal("ws 128x192x128 s4 c2 w1 m1 tma g16 persistent").message(),
      "it needs w0"));
  // 200 columns do not split into two ranges of a multiple of 8: a whole
  // stage's sums, 100 + 100 + 40 registers, are more than 232.
  EXPECT_TRUE(absl::StrContains(
      refusal("ws 128x200x128 s3 c2 w0 m1 direct g16 persistent").message(),
      "needs about 240 registers (100 accumulators, sums of 200 columns at a "
      "time) but gets 232"));
  gen::GemmForm fast = fp8;
  fast.fast_accumulation = true;
  absl::StatusOr<gen::GemmConfig> wide =
      gen::ParseConfigName("ws 128x256x128 s3 c2 w1 m1 tma g16 persistent");
  ASSERT_TRUE(wide.ok());
  EXPECT_TRUE(gen::ValidateGemmConfigForForm(*wide, fast).ok());
  absl::StatusOr<gen::GemmConfig> short_row =
      gen::ParseConfigName("ws 128x192x16 s4 c2 w0 m1 tma g16 persistent");
  ASSERT_TRUE(short_row.ok());
  EXPECT_TRUE(absl::StrContains(
      gen::ValidateGemmConfigForForm(*short_row, fp8).message(),
      "(32, 64 or 128 for e4m3)"));
}

TEST(SelectionTest,
     OneNearlyFullWaveOfWideTilesStoresCInHalvesForAFourthStage) {
  // 2048^3: 128 tiles of 128x256 on 132 SMs.
  const gen::GemmConfig config =
      HeuristicConfig({2048, 2048, 2048, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(gen::ConfigName(config),
            "ws 128x256x64 s4 c2 w1 m1 tma e2 g8 persistent");
  // 96 such tiles would leave a quarter of the SMs idle: 132 tiles of
  // 128x192 fill the wave (WaveFittedConfig).
  EXPECT_EQ(
      HeuristicConfig({1536, 2048, 2048, ScalarType::kF16}, GemmTarget::H200())
          .block_n,
      192);
  // Rows of C that TMA cannot store: the direct epilogue, which has room
  // for 4 stages anyway.
  const gen::GemmConfig direct =
      HeuristicConfig({2048, 2044, 2048, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(gen::ConfigName(direct),
            "ws 128x256x64 s4 c2 w1 m1 direct g8 persistent");
}

TEST(SelectionTest, StreamKOnlyForAMostlyIdleLastWaveWithLongShares) {
  // 64 x 32 = 2048 tiles on 132 SMs: 15 waves and 68 tiles left over,
  // shared out as 66 k-tiles per SM.
  EXPECT_TRUE(
      HeuristicConfig({8192, 8192, 8192, ScalarType::kF16}, GemmTarget::H200())
          .stream_k);
  // 33 x 8 = 264 tiles: exactly two waves.
  EXPECT_FALSE(HeuristicConfig({33 * 128, 8 * 256, 4096, ScalarType::kF16},
                               GemmTarget::H200())
                   .stream_k);
  // 512 tiles: the last wave is 88% full.
  EXPECT_FALSE(
      HeuristicConfig({4096, 4096, 4096, ScalarType::kF16}, GemmTarget::H200())
          .stream_k);
  // Shares of 8 k-tiles.
  EXPECT_FALSE(
      HeuristicConfig({8192, 8192, 1024, ScalarType::kF16}, GemmTarget::H200())
          .stream_k);
  // 8 tiles left over, 4 SMs each: shares of 64 k-tiles.
  EXPECT_TRUE(HeuristicConfig({16384, 16384, 16384, ScalarType::kF16},
                              GemmTarget::H200())
                  .stream_k);
  // K too long to count the stream-K k-tiles in 32 bits.
  EXPECT_FALSE(HeuristicConfig({8192, 8192, int64_t{1} << 30, ScalarType::kF16},
                               GemmTarget::H200())
                   .stream_k);
}

TEST(SelectionTest, ClustersShareBWhereRowsMissTheir128ByteBoundaries) {
  // k = 4104: rows of A and B 8208 bytes apart, 16 past a 128-byte line.
  EXPECT_EQ(
      HeuristicConfig({7777, 3333, 4104, ScalarType::kF16}, GemmTarget::H200())
          .cluster_m,
      2);
  EXPECT_EQ(
      HeuristicConfig({7777, 3333, 4096, ScalarType::kF16}, GemmTarget::H200())
          .cluster_m,
      1);
  // The rows as stored count, whichever the major order.
  GemmProblem mn{8192, 8192, 8192, ScalarType::kF16};
  mn.a_major = mn.b_major = ptx::MajorOrder::kMN;
  EXPECT_EQ(HeuristicConfig(mn, GemmTarget::H200()).cluster_m, 1);
  // Whatever the pick, the form takes it (an MN-major B, which a cluster
  // splits between its CTAs, may refuse the cluster).
  GemmProblem mn_b{7777, 3336, 4104, ScalarType::kF16};
  mn_b.b_major = ptx::MajorOrder::kMN;
  const gen::GemmConfig config = HeuristicConfig(mn_b, GemmTarget::H200());
  EXPECT_TRUE(CheckConfigFitsProblem(config, mn_b).ok())
      << gen::ConfigName(config);
}

TEST(SelectionTest, NarrowerTilesWhereTheyWasteLessOfTheGrid) {
  // 128x256: 480 tiles, 3.6 waves, and 5% of the tile area outside C;
  // 128x192: 648 tiles, 4.9 waves.
  const gen::GemmConfig config =
      HeuristicConfig({3000, 5000, 2048, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(config.block_n, 192);
  EXPECT_EQ(
      HeuristicConfig({6144, 6144, 6144, ScalarType::kF16}, GemmTarget::H200())
          .block_n,
      256);
}

TEST(SelectionTest, RasterGroupsOf16RowsUnlessThatLeavesAShortLastGroup) {
  // 64 rows of 128x256 tiles: four groups of 16.
  EXPECT_EQ(
      HeuristicConfig({8192, 8192, 8192, ScalarType::kF16}, GemmTarget::H200())
          .raster_group,
      16);
  // 24 rows: three groups of 8 rather than 16 and 8.
  EXPECT_EQ(
      HeuristicConfig({3000, 5000, 2048, ScalarType::kF16}, GemmTarget::H200())
          .raster_group,
      8);
  // 61 rows: neither divides them.
  EXPECT_EQ(
      HeuristicConfig({7777, 8192, 4096, ScalarType::kF16}, GemmTarget::H200())
          .raster_group,
      16);
}

TEST(SelectionTest, FewLongTilesGetTheDeepestRing) {
  // 128 tiles of 64x128, each 128 k-tiles long: 8 stages of 24 KiB.
  const gen::GemmConfig config = HeuristicConfig(
      {1024, 1024, 8192, ScalarType::kBF16}, GemmTarget::H200());
  EXPECT_EQ(config.block_m, 64);
  EXPECT_EQ(config.stages, gen::kMaxGemmStages);
  // Every candidate's ring is as deep as shared memory allows: one stage
  // more needs more than an H200 gives a block.
  for (const gen::GemmConfig& candidate : CandidateConfigs(
           {1024, 1024, 8192, ScalarType::kBF16}, GemmTarget::H200())) {
    if (candidate.stages == gen::kMaxGemmStages) continue;
    gen::GemmConfig deeper = candidate;
    ++deeper.stages;
    const absl::StatusOr<gen::GeneratedGemm> generated =
        gen::GenerateGemm(deeper, ScalarType::kBF16);
    ASSERT_TRUE(generated.ok()) << generated.status();
    EXPECT_GT(generated->shared_bytes,
              GemmTarget::H200().max_shared_bytes_per_block_optin)
        << gen::ConfigName(candidate);
  }
}

TEST(SelectionTest, CandidatesStageCInHalvesBesideTheWholeTile) {
  int halves = 0;
  std::set<std::string> names;
  for (const gen::GemmConfig& config : CandidateConfigs(
           {2048, 2048, 2048, ScalarType::kF16}, GemmTarget::H200())) {
    EXPECT_TRUE(names.insert(gen::ConfigName(config)).second)
        << "listed twice: " << gen::ConfigName(config);
    if (config.store_chunks == 0) continue;
    ++halves;
    EXPECT_EQ(config.store_chunks * 2 * gen::kStoreChunkColumns, config.block_n)
        << gen::ConfigName(config);
  }
  // Cooperative: 128x256 and 256x128 (not 128x192, whose 3 chunks do not
  // halve), with and without a cluster, rasters 8 and 16 and stream-K;
  // ping-pong: its three tiles with and without a cluster.
  EXPECT_EQ(halves, 2 * 2 * 3 + 3 * 2);
}

TEST(SelectionTest, CandidatesIncludeStreamKBesideWholeTiles) {
  int stream_k = 0, whole = 0;
  for (const gen::GemmConfig& config : CandidateConfigs(
           {8192, 8192, 8192, ScalarType::kBF16}, GemmTarget::H200())) {
    EXPECT_TRUE(gen::ValidateGemmConfig(config, ScalarType::kBF16).ok())
        << gen::ConfigName(config);
    (config.stream_k ? stream_k : whole)++;
  }
  EXPECT_GT(stream_k, 0);
  EXPECT_GT(whole, stream_k);
}

// PlanGemmLaunch is everything Gemm::Prepare checks about a (problem,
// config) pair, so a view of the kernel refuses exactly what running it
// refuses; what it accepts comes with the launch grid.
TEST(SelectionTest, PlanGemmLaunchRefusesWhatPrepareRefuses) {
  const GemmProblem square{8192, 8192, 8192, ScalarType::kF16};
  const gen::GemmConfig chosen = HeuristicConfig(square, GemmTarget::H200());
  const absl::StatusOr<gen::GemmGrid> grid = PlanGemmLaunch(square, chosen, 66);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->x, 66 * chosen.cluster_m);

  auto parse = [](const char* name) { return *gen::ParseConfigName(name); };
  const int64_t huge = (int64_t{1} << 31) - 1;
  const std::tuple<GemmProblem, gen::GemmConfig, const char*> cases[] = {
      {{0, 8, 8, ScalarType::kF16},
       parse("v1 128x128x64"),
       "GEMM: m=0 is outside 1..2147483647"},
      {{64, 64, 60, ScalarType::kF16},
       parse("v1 128x128x64"),
       "k must be a multiple of 8"},
      {square, parse("v1 128x256x64"), "needs 256 accumulator registers"},
      {{64, 63, 64, ScalarType::kF16},
       parse("ws 128x128x64 s4 c2 w1 m1 tma g8 persistent"),
       "stores D with TMA, which needs rows (and batches) of D on 16-byte "
       "boundaries"},
      {{huge, huge, 8, ScalarType::kF16},
       HeuristicConfig({huge, huge, 8}, GemmTarget::H200()),
       "the kernel counts tiles in 32 bits"},
      {{128, huge, 8, ScalarType::kF16},
       parse("v1 128x128x64"),
       "a grid of 1 x 16777216 CTAs is beyond CUDA's 2147483647 x 65535"},
  };
  for (const auto& [problem, config, message] : cases) {
    const absl::StatusOr<gen::GemmGrid> refused =
        PlanGemmLaunch(problem, config, 66);
    ASSERT_FALSE(refused.ok()) << message;
    EXPECT_TRUE(absl::StrContains(refused.status().message(), message))
        << refused.status();
  }
}

TEST(SelectionTest, TheTmaStoreNeedsAlignedRowsOfC) {
  const GemmProblem odd{4096, 4099, 4096, ScalarType::kF16};
  EXPECT_EQ(HeuristicConfig(odd, GemmTarget::H200()).epilogue,
            gen::GemmEpilogue::kDirect);
  for (const gen::GemmConfig& config :
       CandidateConfigs(odd, GemmTarget::H200())) {
    EXPECT_EQ(config.epilogue, gen::GemmEpilogue::kDirect)
        << gen::ConfigName(config);
  }
}

// Decode GEMMs: a short m goes along the tile's columns of the swapped
// kernel (D^T = B.A^T), rounded up to wgmma's N granule of 8; a short n
// stays there unswapped. Stream-K where 64-row tiles fill less than a
// wave, 128-row tiles where they fill more.
TEST(SelectionTest, SkinnyProblemsPutTheShortSideAlongANarrowTile) {
  const gen::GemmConfig decode =
      HeuristicConfig({16, 4096, 4096, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(gen::ConfigName(decode),
            "ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap");
  EXPECT_EQ(
      HeuristicConfig({1, 4096, 4096, ScalarType::kF16}, GemmTarget::H200())
          .block_n,
      8);
  EXPECT_EQ(
      HeuristicConfig({13, 4096, 4096, ScalarType::kBF16}, GemmTarget::H200())
          .block_n,
      16);
  const gen::GemmConfig narrow =
      HeuristicConfig({4096, 24, 4096, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(gen::ConfigName(narrow),
            "ws 64x24x64 s8 c1 w1 m1 direct g8 sk persistent");
  // 224 tiles of 64 rows, more than a wave: 128-row tiles, no stream-K.
  const gen::GemmConfig long_n =
      HeuristicConfig({16, 14336, 4096, ScalarType::kF16}, GemmTarget::H200());
  EXPECT_EQ(gen::ConfigName(long_n),
            "ws 128x16x64 s8 c2 w1 m1 direct g8 persistent swap");
  // Above 64 rows, the tiles of every other shape.
  EXPECT_FALSE(
      HeuristicConfig({65, 4096, 4096, ScalarType::kF16}, GemmTarget::H200())
          .swap_ab);
  EXPECT_EQ(
      HeuristicConfig({65, 4096, 4096, ScalarType::kF16}, GemmTarget::H200())
          .block_n,
      128);
}

TEST(SelectionTest, SkinnyCandidatesAreSwappedLikeTheHeuristicsPick) {
  const GemmProblem decode{8, 8192, 8192, ScalarType::kF16};
  int skinny = 0;
  for (const gen::GemmConfig& config :
       CandidateConfigs(decode, GemmTarget::H200())) {
    EXPECT_TRUE(CheckConfigFitsProblem(config, decode).ok())
        << gen::ConfigName(config);
    if (config.swap_ab) {
      ++skinny;
      EXPECT_LE(config.block_n, 32) << gen::ConfigName(config);
    }
  }
  // Widths 8, 16 and 32; 64 and 128 rows; with and without stream-K.
  EXPECT_EQ(skinny, 3 * 2 * 2);
  EXPECT_NE(std::find(CandidateConfigs(decode, GemmTarget::H200()).begin(),
                      CandidateConfigs(decode, GemmTarget::H200()).end(),
                      HeuristicConfig(decode, GemmTarget::H200())),
            CandidateConfigs(decode, GemmTarget::H200()).end());
}

// A swapped config is checked and launched on the swapped problem: its
// grid covers n / block_m tile rows, and a TMA store (which writes D [m,
// n] only) is refused for it.
TEST(SelectionTest, SwappedConfigsPlanTheSwappedProblem) {
  const GemmProblem decode{16, 4096, 4096, ScalarType::kF16};
  gen::GemmConfig config = HeuristicConfig(decode, GemmTarget::H200());
  config.stream_k = false;
  config.persistent = false;
  absl::StatusOr<gen::GemmGrid> grid = PlanGemmLaunch(decode, config, 132);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->x * grid->y * grid->z, 4096 / 64);
  config.epilogue = gen::GemmEpilogue::kTmaStore;
  config.block_n = gen::kStoreChunkColumns;
  const absl::Status refused = CheckConfigFitsProblem(config, decode);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.message(), "16-bit D [m, n]"))
      << refused;
}

// Fewer than two waves of 128x256 tiles, 16-bit inputs: the tile whose
// waves a roofline of a k-step ranks fastest, which fills the last wave
// (measured on the H200: bench/RESULTS.md, "Mid-sized problems").
TEST(SelectionTest, MidSizedSixteenBitTilesFillTheirWave) {
  struct Case {
    GemmProblem problem;
    int block_m, block_n;  // tiles: what they make on 132 SMs
  };
  const Case cases[] = {
      {{1000, 3000, 520, ScalarType::kBF16}, 128, 192},  // 128
      {{768, 2048, 4096, ScalarType::kBF16}, 64, 192},   // 132
      {{333, 4096, 7168, ScalarType::kF16}, 64, 192},    // 132
      {{200, 2112, 7168, ScalarType::kBF16}, 64, 64},    // 132
      {{500, 4096, 4096, ScalarType::kBF16}, 128, 128},  // 128
  };
  for (const Case& c : cases) {
    const gen::GemmConfig config =
        HeuristicConfig(c.problem, GemmTarget::H200());
    EXPECT_EQ(config.block_m, c.block_m) << gen::ConfigName(config);
    EXPECT_EQ(config.block_n, c.block_n) << gen::ConfigName(config);
    EXPECT_EQ(config.consumers, c.block_m / 64) << gen::ConfigName(config);
    EXPECT_EQ(config.split_k, 1);
  }
  // Other input types keep 128x128 tiles there (not measured otherwise).
  EXPECT_EQ(
      HeuristicConfig({1000, 3000, 520, ScalarType::kE4M3}, GemmTarget::H200())
          .block_n,
      128);
}

// 8 tiles of 64x128 over 448 k-tiles: 16 slices of 28; 64 tiles take 2.
TEST(SelectionTest, FewTilesOverALongKAreSplit) {
  EXPECT_EQ(
      HeuristicConfig({256, 256, 28672, ScalarType::kF16}, GemmTarget::H200())
          .split_k,
      16);
  EXPECT_EQ(
      HeuristicConfig({256, 512, 16384, ScalarType::kF16}, GemmTarget::H200())
          .split_k,
      8);
  EXPECT_EQ(
      HeuristicConfig({512, 1024, 16384, ScalarType::kF16}, GemmTarget::H200())
          .split_k,
      2);
  // 128 tiles: a wave already.
  EXPECT_EQ(
      HeuristicConfig({1024, 1024, 8192, ScalarType::kF16}, GemmTarget::H200())
          .split_k,
      1);
  // Slices of fewer than 16 k-tiles are not worth their reduction.
  EXPECT_EQ(
      HeuristicConfig({256, 256, 1024, ScalarType::kF16}, GemmTarget::H200())
          .split_k,
      1);
  // Split-K's reduce kernel computes the plain form only: other forms meet
  // their slices in a cluster, four or eight of them within half a wave,
  // two within a wave.
  GemmProblem biased{256, 256, 28672, ScalarType::kF16};
  biased.bias = BiasAlong::kN;
  const gen::GemmConfig met = HeuristicConfig(biased, GemmTarget::H200());
  EXPECT_EQ(met.split_k, 8);
  EXPECT_TRUE(met.split_k_in_cluster);
  for (const auto& [m, n, k, slices] :
       {std::array<int64_t, 4>{1024, 256, 65536, 2},
        std::array<int64_t, 4>{512, 1024, 16384, 2},
        std::array<int64_t, 4>{1024, 1024, 8192, 1}}) {
    const gen::GemmConfig s32 =
        HeuristicConfig({m, n, k, ScalarType::kS8}, GemmTarget::H200());
    EXPECT_EQ(s32.split_k, slices) << m << "x" << n << "x" << k;
    EXPECT_EQ(s32.split_k_in_cluster, slices > 1);
  }
}

// A target with less shared memory than the H200 holds shallower rings of
// the same tiles, and smaller tiles where not even two stages fit.
TEST(SelectionTest, ATargetWithLessSharedMemoryGetsShallowerRings) {
  GemmTarget less = GemmTarget::H200();
  less.max_shared_bytes_per_block_optin = 150 * 1024;
  const GemmProblem few_tiles{1024, 1024, 8192, ScalarType::kF16};
  EXPECT_EQ(gen::ConfigName(HeuristicConfig(few_tiles, GemmTarget::H200())),
            "ws 64x128x64 s8 c1 w1 m1 tma g8 persistent");
  EXPECT_EQ(gen::ConfigName(HeuristicConfig(few_tiles, less)),
            "ws 64x128x64 s5 c1 w1 m1 tma g8 persistent");
  // Two stages of 128x256 tiles and their staged C need 160 KiB.
  const GemmProblem square{4096, 4096, 4096, ScalarType::kF16};
  EXPECT_EQ(gen::ConfigName(HeuristicConfig(square, less)),
            "ws 128x128x64 s3 c2 w1 m1 tma g8 persistent");
  less.max_shared_bytes_per_block_optin = runtime::kMinTargetSharedBytes;
  EXPECT_EQ(gen::ConfigName(HeuristicConfig(square, less)),
            "ws 64x64x64 s2 c1 w1 m1 tma g8 persistent");
}

// The problems of `element` the fit tests below choose for: skinny (both
// sides), split-K, few and many tiles, with epilogue ops and (16-bit
// inputs) MN-major B.
std::vector<GemmProblem> SpreadOfProblems(ScalarType element) {
  std::vector<GemmProblem> problems;
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{1, 4096, 4096},
                                {4096, 24, 4096},
                                {256, 256, 28672},
                                {1024, 1024, 8192},
                                {2048, 2048, 2048},
                                {3000, 5000, 2048},
                                {8192, 8192, 8192}}) {
    problems.push_back({m, n, k, element});
  }
  GemmProblem fused{4096, 4096, 4096, element};
  fused.bias = BiasAlong::kN;
  fused.activation = Activation::kGelu;
  // An s32 D holds the exact sums only.
  if (ptx::IsInt8(element)) fused.output = ScalarType::kBF16;
  problems.push_back(fused);
  // wgmma reads MN-major operands of 16-bit types only.
  if (ptx::SizeInBytes(element) == 2) {
    GemmProblem mn_b{2048, 4096, 4096, element};
    mn_b.b_major = ptx::MajorOrder::kMN;
    problems.push_back(mn_b);
  }
  for (const GemmProblem& problem : problems) {
    EXPECT_TRUE(ValidateProblem(problem).ok()) << ValidateProblem(problem);
  }
  return problems;
}

// What a target runs of `problem`: every candidate, the heuristic's pick and
// the ping-pong configuration.
std::vector<gen::GemmConfig> Chosen(const GemmProblem& problem,
                                    const GemmTarget& target) {
  std::vector<gen::GemmConfig> chosen = CandidateConfigs(problem, target);
  EXPECT_FALSE(chosen.empty()) << gen::FormName(FormOf(problem));
  chosen.push_back(HeuristicConfig(problem, target));
  chosen.push_back(PingPongConfig(problem, target));
  return chosen;
}

// Down to the 48 KiB every GPU gives a block: each configuration chosen
// for the target generates a kernel whose shared memory fits it.
TEST(SelectionTest, EveryConfigChosenForATargetFitsItsSharedMemory) {
  for (const int shared_bytes : {runtime::kMinTargetSharedBytes, 100 * 1024}) {
    GemmTarget target = GemmTarget::H200();
    target.max_shared_bytes_per_block_optin = shared_bytes;
    for (ScalarType element :
         {ScalarType::kF16, ScalarType::kE4M3, ScalarType::kTF32,
          ScalarType::kS8, ScalarType::kBF16}) {
      for (const GemmProblem& problem : SpreadOfProblems(element)) {
        for (const gen::GemmConfig& config : Chosen(problem, target)) {
          const std::string what =
              absl::StrCat(gen::ConfigName(config), " for ",
                           gen::FormName(FormOf(problem)), " ", problem.m, "x",
                           problem.n, "x", problem.k, " in ", shared_bytes);
          ASSERT_TRUE(CheckConfigFitsProblem(config, problem).ok()) << what;
          const absl::StatusOr<gen::GeneratedGemm> generated =
              gen::GenerateGemm(config, FormOf(problem));
          ASSERT_TRUE(generated.ok()) << what << ": " << generated.status();
          EXPECT_LE(generated->shared_bytes, shared_bytes) << what;
        }
      }
    }
  }
}

// Any SM count a target may have: every configuration chosen runs the
// problem in the H200's shared memory, its clusters no larger than the
// target's SMs.
TEST(SelectionTest, EveryConfigChosenForATargetRunsOnItsSms) {
  for (const int sm_count : {1, 2, 66, 144, runtime::kMaxTargetSms}) {
    GemmTarget target = GemmTarget::H200();
    target.sm_count = sm_count;
    for (ScalarType element :
         {ScalarType::kF16, ScalarType::kE4M3, ScalarType::kS8}) {
      for (const GemmProblem& problem : SpreadOfProblems(element)) {
        for (const gen::GemmConfig& config : Chosen(problem, target)) {
          const std::string what =
              absl::StrCat(gen::ConfigName(config), " for ", problem.m, "x",
                           problem.n, "x", problem.k, " on ", sm_count);
          EXPECT_TRUE(CheckConfigFitsProblem(config, problem).ok()) << what;
          EXPECT_LE(config.stages, gen::MaxStagesThatFit(
                                       config, element,
                                       target.max_shared_bytes_per_block_optin))
              << what;
          EXPECT_LE(gen::ClusterCtas(config), sm_count) << what;
        }
      }
    }
  }
}

TEST(SelectionTest, SwappingTwiceGivesTheProblemBack) {
  GemmProblem p{13, 1000, 72, ScalarType::kBF16};
  p.a_major = ptx::MajorOrder::kMN;
  p.lda = 24;
  p.ldb = 80;
  p.stride_a = 4000;
  p.stride_b = 90000;
  p.batch = 2;
  p.bias = BiasAlong::kM;
  const GemmProblem swapped = SwappedProblem(p);
  EXPECT_EQ(swapped.m, 1000);
  EXPECT_EQ(swapped.n, 13);
  EXPECT_EQ(swapped.a_major, ptx::MajorOrder::kK);
  EXPECT_EQ(swapped.b_major, ptx::MajorOrder::kMN);
  EXPECT_EQ(swapped.lda, 80);
  EXPECT_EQ(swapped.stride_b, 4000);
  EXPECT_EQ(swapped.bias, BiasAlong::kN);
  EXPECT_TRUE(swapped.d_transposed);
  // D keeps its leading dimension: a row of the original D is a row of the
  // swapped problem's transposed D.
  EXPECT_EQ(Resolved(swapped).ldd, Resolved(p).ldd);
  EXPECT_EQ(Resolved(swapped).stride_d, Resolved(p).stride_d);
  const GemmProblem back = SwappedProblem(swapped);
  EXPECT_EQ(gen::FormName(FormOf(back)), gen::FormName(FormOf(p)));
  EXPECT_EQ(std::tie(back.m, back.n, back.lda, back.ldb, back.stride_a,
                     back.stride_b),
            std::tie(p.m, p.n, p.lda, p.ldb, p.stride_a, p.stride_b));
}

// A grouped GEMM's tiles: 64 rows storing directly for decode-sized
// groups; for larger groups TMA stores where D's rows allow them (a tile
// crossing its group's end copies its rows), ping-pong 128x128 tiles of
// 16-bit inputs, cooperative 128x256 tiles for fp8 (promotion; ptxas
// spills a little there, which the compile sweep allows by name); every
// pick and every candidate one the grouped form takes.
TEST(SelectionTest, GroupedPicksTilesOfTheirGroupsRows) {
  auto grouped = [](int64_t m, ScalarType element, Grouping grouping,
                    int64_t groups, int64_t expected_m) {
    GemmProblem p{m, 4096, 7168, element};
    p.grouping = grouping;
    p.batch = groups;
    p.expected_m = expected_m;
    if (element == ScalarType::kE4M3) p.scaling = GemmScaling::kBlock;
    return p;
  };
  const GemmProblem decode =
      grouped(64, ScalarType::kBF16, Grouping::kMasked, 32, 16);
  const GemmProblem prefill =
      grouped(16384, ScalarType::kBF16, Grouping::kContiguous, 32, 0);
  const GemmProblem fp8 =
      grouped(16384, ScalarType::kE4M3, Grouping::kContiguous, 32, 0);
  GemmProblem unaligned_rows = prefill;
  unaligned_rows.n = 4100;
  const gen::GemmConfig decode_pick =
      HeuristicConfig(decode, GemmTarget::H200());
  EXPECT_EQ(decode_pick.block_m, 64);
  EXPECT_EQ(decode_pick.schedule, gen::GemmSchedule::kWarpSpecialized);
  const gen::GemmConfig prefill_pick =
      HeuristicConfig(prefill, GemmTarget::H200());
  EXPECT_EQ(prefill_pick.schedule, gen::GemmSchedule::kPingPong);
  EXPECT_EQ(prefill_pick.block_m, 128);
  EXPECT_EQ(prefill_pick.block_n, 128);
  const gen::GemmConfig fp8_pick = HeuristicConfig(fp8, GemmTarget::H200());
  EXPECT_EQ(fp8_pick.schedule, gen::GemmSchedule::kWarpSpecialized);
  EXPECT_EQ(fp8_pick.block_m, 128);
  EXPECT_EQ(fp8_pick.block_n, 256);
  EXPECT_TRUE(PickedDespiteSpills(FormOf(fp8), fp8_pick));
  EXPECT_FALSE(PickedDespiteSpills(FormOf(prefill), prefill_pick));
  EXPECT_EQ(decode_pick.epilogue, gen::GemmEpilogue::kDirect);
  EXPECT_EQ(prefill_pick.epilogue, gen::GemmEpilogue::kTmaStore);
  EXPECT_EQ(fp8_pick.epilogue, gen::GemmEpilogue::kTmaStore);
  EXPECT_EQ(HeuristicConfig(unaligned_rows, GemmTarget::H200()).epilogue,
            gen::GemmEpilogue::kDirect);
  for (const GemmProblem& problem : {decode, prefill, fp8, unaligned_rows}) {
    const gen::GemmConfig pick = HeuristicConfig(problem, GemmTarget::H200());
    EXPECT_TRUE(gen::ValidateGemmConfigForForm(pick, FormOf(problem)).ok())
        << gen::ConfigName(pick);
    EXPECT_TRUE(PlanGemmLaunch(problem, pick, 132).ok())
        << gen::ConfigName(pick);
    const std::vector<gen::GemmConfig> candidates =
        CandidateConfigs(problem, GemmTarget::H200());
    EXPECT_FALSE(candidates.empty());
    for (const gen::GemmConfig& config : candidates) {
      EXPECT_FALSE(config.stream_k || config.split_k > 1 || config.swap_ab)
          << gen::ConfigName(config);
    }
  }
}

}  // namespace
}  // namespace ptxgen::gemm
