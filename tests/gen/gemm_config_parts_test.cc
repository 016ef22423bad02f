// A GEMM configuration's parts, the shared-memory planner that says how deep
// a ring fits, and the stream-K flag region the host plans for the kernel.
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gen {
namespace {

using ptx::ScalarType;

GemmConfig Parse(const std::string& name) {
  absl::StatusOr<GemmConfig> config = ParseConfigName(name);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : GemmConfig{};
}

// The shared memory an H200 gives a block.
int H200SharedBytes() {
  return gemm::GemmTarget::H200().max_shared_bytes_per_block_optin;
}

// The ring that fits an H200.
int Fit(const GemmConfig& config, ScalarType element = ScalarType::kF16) {
  return MaxStagesThatFit(config, element, H200SharedBytes());
}

TEST(GemmConfigPartsTest, AConfigIsAnAggregateOfItsParts) {
  static_assert(std::is_aggregate_v<GemmConfig>);
  const GemmConfig config{GemmTileShape{128, 256, 64},
                          GemmPipelineShape{4, 2, 1, 1, true},
                          GemmEpilogueConfig{GemmEpilogue::kTmaStore, 2},
                          GemmSchedulerConfig{TileOrder::kRaster, 16, 1, false},
                          GemmLaunchPolicy{true},
                          GemmSchedule::kWarpSpecialized};
  EXPECT_EQ(ConfigName(config),
            "ws 128x256x64 s4 c2 w1 m1 tma e2 g16 persistent");
  // What needs one part takes that part; a config is one.
  const GemmTileShape& tile = config;
  EXPECT_EQ(StoreChunkCount(tile), 4);
  // The parts' defaults make the seed.
  EXPECT_EQ(ConfigName(GemmConfig{}), "v1 128x128x64");
}

// The configurations' own stage counts below are not read.
TEST(GemmSharedMemoryPlannerTest, TheRingIsAsDeepAsSharedMemoryAllows) {
  // 128x256x64 f16: 48 KiB a stage beside 64 KiB of staged C (3 stages:
  // 214096 bytes), 32 KiB of C staged in halves (4: 230496), none (4).
  EXPECT_EQ(Fit(Parse("ws 128x256x64 s3 c2 w1 m1 tma g16 persistent")), 3);
  EXPECT_EQ(Fit(Parse("ws 128x256x64 s3 c2 w1 m1 tma e2 g16 persistent")), 4);
  EXPECT_EQ(Fit(Parse("ws 128x256x64 s3 c2 w1 m1 direct g16 persistent")), 4);
  // 64x128x64: 24 KiB a stage; 9 would fit, the ring stops at 8.
  EXPECT_EQ(Fit(Parse("ws 64x128x64 s3 c1 w1 m1 direct g8 persistent")),
            kMaxGemmStages);
  // Not even one stage in 1 KiB.
  EXPECT_EQ(
      MaxStagesThatFit(Parse("ws 64x128x64 s3 c1 w1 m1 direct g8 persistent"),
                       ScalarType::kF16, 1024),
      0);
}

// The planner reads the generator's own layout: a kernel's shared bytes, as
// a limit, hold exactly its ring, and one byte less holds one stage less.
TEST(GemmSharedMemoryPlannerTest, AgreesWithTheGeneratedKernelsSharedBytes) {
  for (const char* name :
       {"ws 128x256x64 s3 c2 w1 m1 tma g16 persistent",
        "ws 128x256x64 s4 c2 w1 m1 tma e2 g16 persistent",
        "ws 64x128x64 s8 c1 w1 m1 direct g8 persistent", "v1 128x128x64"}) {
    const GemmConfig config = Parse(name);
    for (int stages = config.schedule == GemmSchedule::kV1 ? 1 : 2;
         stages <= config.stages; ++stages) {
      GemmConfig ring = config;
      ring.stages = stages;
      const absl::StatusOr<GeneratedGemm> generated =
          GenerateGemm(ring, ScalarType::kF16);
      ASSERT_TRUE(generated.ok())
          << ConfigName(ring) << ": " << generated.status();
      EXPECT_EQ(
          MaxStagesThatFit(ring, ScalarType::kF16, generated->shared_bytes),
          stages)
          << ConfigName(ring);
      EXPECT_EQ(
          MaxStagesThatFit(ring, ScalarType::kF16, generated->shared_bytes - 1),
          stages - 1)
          << ConfigName(ring);
    }
  }
}

// The deepest ring of `config` whose generated kernel needs at most
// `shared_bytes`, 0 for none.
int DeepestGeneratedRingWithin(GemmConfig config, ScalarType element,
                               int shared_bytes) {
  int deepest = 0;
  for (config.stages = 1; config.stages <= kMaxGemmStages; ++config.stages) {
    const absl::StatusOr<GeneratedGemm> generated =
        GenerateGemm(config, element);
    if (generated.ok() && generated->shared_bytes <= shared_bytes) {
      deepest = config.stages;
    }
  }
  return deepest;
}

// Every configuration the selector can list or pick for an H200, with its
// problem: each tile, consumer count, cluster and epilogue (whole or halved
// C), with split-K, stream-K and both raster groups, in both element types.
std::vector<std::pair<GemmConfig, gemm::GemmProblem>> SelectableConfigs() {
  std::vector<std::pair<GemmConfig, gemm::GemmProblem>> configs;
  for (ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
    // Few tiles (split-K is listed), many, and one nearly full wave.
    for (const auto& [m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t>{1024, 1024, 8192},
          {8192, 8192, 8192},
          {2048, 2048, 2048},
          {3000, 5000, 2048}}) {
      const gemm::GemmProblem problem{m, n, k, element};
      for (const GemmConfig& config :
           gemm::CandidateConfigs(problem, gemm::GemmTarget::H200())) {
        configs.emplace_back(config, problem);
      }
      configs.emplace_back(
          gemm::HeuristicConfig(problem, gemm::GemmTarget::H200()), problem);
    }
  }
  return configs;
}

// The selector takes the whole ring an H200 holds, as the generated kernels
// measure it; one stage more is gen's to generate (it knows no device's
// limit) and the plan's to refuse for the H200.
TEST(GemmSharedMemoryPlannerTest,
     AnswersWhatTheTargetHoldsForEverySelectableConfig) {
  const std::vector<std::pair<GemmConfig, gemm::GemmProblem>> configs =
      SelectableConfigs();
  ASSERT_GT(configs.size(), 50u);
  for (const auto& [config, problem] : configs) {
    const int fit =
        MaxStagesThatFit(config, problem.element, H200SharedBytes());
    EXPECT_EQ(fit, DeepestGeneratedRingWithin(config, problem.element,
                                              H200SharedBytes()))
        << ConfigName(config);
    EXPECT_EQ(config.stages, fit) << ConfigName(config);
    if (fit == kMaxGemmStages) continue;
    GemmConfig deeper = config;
    deeper.stages = fit + 1;
    EXPECT_TRUE(ValidateGemmConfig(deeper, problem.element).ok())
        << ConfigName(deeper);
    gemm::GemmOptions options;
    options.config = deeper;
    const absl::StatusOr<gemm::GemmPlan> refused =
        gemm::PlanGemm(problem, gemm::GemmTarget::H200(), options);
    EXPECT_TRUE(absl::StrContains(
        refused.status().message(),
        "bytes of shared memory per block; the target gives at most 232448"))
        << ConfigName(deeper) << ": " << refused.status();
  }
}

// Every workspace starts with the flag region: stream-K's flags end it and
// split-K's slices follow it, so no GEMM writes anything but flags there,
// and a workspace zeroed once stays ready for any GEMM's flags.
TEST(GemmWorkspaceTest, SplitKSlicesFollowTheFlagRegion) {
  const GemmConfig split =
      Parse("ws 64x128x64 s6 c1 w1 m1 direct g8 k4 persistent");
  ASSERT_TRUE(ReducesSlicesInWorkspace(split));
  const GemmGrid grid = GemmLaunchGrid(split, 1000, 1000, 132);
  EXPECT_EQ(GemmWorkspaceKernelOffset(split, grid), kWorkspaceFlagRegionBytes);
  EXPECT_EQ(GemmWorkspaceBytes(split, 1000, 1000, grid),
            kWorkspaceFlagRegionBytes + 4 * 1000 * 1000 * 4);
  const GemmConfig plain =
      Parse("ws 64x128x64 s6 c1 w1 m1 direct g8 persistent");
  EXPECT_EQ(GemmWorkspaceBytes(plain, 1000, 1000,
                               GemmLaunchGrid(plain, 1000, 1000, 132)),
            0);
}

TEST(GemmWorkspaceTest, AStreamKGridWhoseFlagsPassTheRegionIsRefused) {
  const GemmConfig config =
      Parse("ws 64x128x64 s8 c1 w1 m1 direct g8 sk persistent");
  const int64_t most = kWorkspaceFlagRegionBytes / 16;  // clusters of 16 bytes
  const GemmGrid fits = GemmLaunchGrid(config, 8192, 8192, most);
  EXPECT_TRUE(CheckGemmLaunch(config, 8192, 8192, 8192, fits).ok());
  EXPECT_EQ(GemmWorkspaceKernelOffset(config, fits), 0);
  const GemmGrid past = GemmLaunchGrid(config, 8192, 8192, most + 1);
  const absl::Status refused = CheckGemmLaunch(config, 8192, 8192, 8192, past);
  EXPECT_TRUE(
      absl::StrContains(refused.message(),
                        "stream-K's flags for 2049 clusters take 32784 "
                        "bytes, more than the workspace's flag region (32768)"))
      << refused;
}

// Stream-K's flags: one per consumer warpgroup of each CTA, each cluster's
// flags padded to 16 bytes; the kernel finds the slots after them from the
// padded count the host planned, times the clusters.
TEST(GemmStreamKFlagsTest, EachClustersFlagsArePaddedTo16Bytes) {
  struct Case {
    const char* config;
    int resident_clusters;
    int64_t flag_bytes;
  };
  const Case cases[] = {
      {"ws 128x256x64 s3 c2 w1 m1 tma g16 sk persistent", 131, 131 * 16},
      {"ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent", 66, 66 * 16},
      {"ws 64x128x64 s8 c1 w1 m1 direct g8 sk persistent", 132, 132 * 16},
      {"ws 64x128x64 s8 c1 w1 m2 direct g8 sk persistent", 66, 66 * 16},
      {"ws 256x128x64 s4 c4 w1 m2 direct g8 sk persistent", 66, 66 * 32},
  };
  for (const Case& c : cases) {
    const GemmConfig config = Parse(c.config);
    ASSERT_TRUE(ValidateGemmConfig(config, ScalarType::kF16).ok()) << c.config;
    const GemmGrid grid =
        GemmLaunchGrid(config, 8192, 8192, c.resident_clusters);
    EXPECT_EQ(GemmStreamKFlagBytes(config, grid), c.flag_bytes) << c.config;
    EXPECT_EQ(GemmWorkspaceBytes(config, 8192, 8192, grid),
              kWorkspaceFlagRegionBytes +
                  grid.x * config.block_m * config.block_n * 4)
        << c.config;
    EXPECT_EQ(GemmWorkspaceKernelOffset(config, grid),
              kWorkspaceFlagRegionBytes - c.flag_bytes)
        << c.config;
  }
}

TEST(GemmStreamKFlagsTest, TheKernelReadsThePaddingTheHostPlanned) {
  const GemmConfig config =
      Parse("ws 128x256x64 s3 c2 w1 m1 tma g16 sk persistent");
  const absl::StatusOr<GeneratedGemm> generated =
      GenerateGemm(config, ScalarType::kF16);
  ASSERT_TRUE(generated.ok()) << generated.status();
  int64_t words_per_cluster = 0;
  for (const PlannedConstant& constant : generated->plan) {
    if (constant.name == "kFlagWordsPerCluster")
      words_per_cluster = std::stoll(constant.value);
  }
  const GemmGrid grid = GemmLaunchGrid(config, 8192, 8192, 131);
  EXPECT_EQ(GemmStreamKFlagBytes(config, grid),
            grid.x / config.cluster_m * words_per_cluster * 4);
  EXPECT_TRUE(absl::StrContains(generated->source,
                                "flags + gridDim.x / plan::kClusterM * "
                                "plan::kFlagWordsPerCluster"));
  // Without stream-K there are no flags to plan.
  const absl::StatusOr<GeneratedGemm> plain = GenerateGemm(
      Parse("ws 128x256x64 s3 c2 w1 m1 tma g16 persistent"), ScalarType::kF16);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(absl::StrContains(plain->source, "kFlagWordsPerCluster"));
}

}  // namespace
}  // namespace ptxgen::gen
