// The GEMM layout planner, the generator and the launch arithmetic, for
// configurations the validator accepts for an element's plain form (what
// GenerateGemm(config, element) computes). Input (text):
//   line 1: a configuration name ("ws 128x256x64 s4 c2 w1 m1 tma g8
//   persistent") line 2: the element type ("f16", "bf16") lines 3+: problems "M
//   N K RESIDENT_CLUSTERS", at most 16
// For such a configuration: gen::PlanGemmLayout's sizes are positive, its
// regions are in order and inside the shared bytes, MaxStagesThatFit
// answers the ring for the shared bytes, the registers fit the budget;
// GenerateGemm succeeds and agrees with the plan. For each problem the library
// accepts (CheckGemmLaunch, called in the order lib/gemm calls it): the grid
// covers the work with whole clusters and the workspace sizes are what the
// header promises.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "fuzz/fuzz_support.h"
#include "lib/gen/gemm/gemm_internal.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/scalar_type.h"

namespace {

namespace gen = ptxgen::gen;
using ptxgen::fuzz::IntegerWord;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void CheckLayout(const gen::GemmConfig& config, ptxgen::ptx::ScalarType element,
                 const std::string& name) {
  const gen::GemmLayout layout = gen::PlanGemmLayout(config, element);
  const bool specialized = gen::IsWarpSpecialized(config.schedule);
  FUZZ_CHECK(layout.a_tile_bytes > 0 && layout.b_tile_bytes > 0, name,
             ": tile bytes ", layout.a_tile_bytes, ", ", layout.b_tile_bytes);
  FUZZ_CHECK(layout.stage_bytes == layout.a_tile_bytes + layout.b_tile_bytes,
             name, ": a stage is not A then B");
  for (const ptxgen::ptx::SharedTile& tile : {layout.a_tile, layout.b_tile}) {
    const absl::StatusOr<ptxgen::ptx::TileLayout> described =
        ptxgen::ptx::DescribeTile(tile);
    FUZZ_CHECK(described.ok(), name, ": a planned tile is not describable: ",
               described.status().message());
  }
  FUZZ_CHECK(ptxgen::ptx::DescribeTile(layout.a_tile)->tile_bytes <=
                 layout.a_tile_bytes,
             name, ": A's rounded size is smaller than the tile");
  const int64_t stages_end = int64_t{config.stages} * layout.stage_bytes;
  if (config.epilogue == gen::GemmEpilogue::kTmaStore) {
    FUZZ_CHECK(layout.c_tile_offset % gen::kSharedBaseAlignment == 0 &&
                   layout.c_tile_offset >= stages_end,
               name, ": C tile at ", layout.c_tile_offset);
    FUZZ_CHECK(layout.store_pass_chunks > 0 && layout.store_passes > 0 &&
                   layout.store_passes * layout.store_pass_chunks ==
                       gen::StoreChunkCount(config),
               name, ": ", layout.store_passes, " passes of ",
               layout.store_pass_chunks, " chunks");
    FUZZ_CHECK(layout.store_chunk_bytes > 0 && layout.c_tile_bytes > 0 &&
                   int64_t{layout.c_tile_offset} + layout.c_tile_bytes <=
                       layout.barrier_offset,
               name, ": C tile overlaps the barriers");
  } else {
    FUZZ_CHECK(layout.barrier_offset >= stages_end, name,
               ": barriers overlap the stages");
  }
  FUZZ_CHECK(layout.barrier_offset % 8 == 0, name, ": misaligned barriers");
  const int64_t barriers_end =
      int64_t{layout.barrier_offset} + 16 * config.stages;
  if (specialized) {
    FUZZ_CHECK(layout.schedule_offset >= barriers_end, name,
               ": the schedule overlaps the barriers");
  }
  FUZZ_CHECK(
      layout.shared_bytes > 0 &&
          barriers_end + gen::kSharedBaseAlignment <= layout.shared_bytes,
      name, ": shared bytes ", layout.shared_bytes);
  // The planner the selector sizes rings with: the layout's bytes hold
  // exactly its ring, one byte less one stage less.
  FUZZ_CHECK(
      gen::MaxStagesThatFit(config, element, layout.shared_bytes) ==
              config.stages &&
          gen::MaxStagesThatFit(config, element, layout.shared_bytes - 1) ==
              config.stages - 1,
      name, ": MaxStagesThatFit disagrees with ", layout.shared_bytes,
      " shared bytes");
  FUZZ_CHECK(layout.threads > 0 &&
                 layout.threads % gen::kThreadsPerWarpgroup == 0 &&
                 layout.threads <= 1024,
             name, ": ", layout.threads, " threads");
  FUZZ_CHECK(
      layout.rows_per_consumer * layout.stage_readers == config.block_m &&
          (layout.stage_readers == config.consumers ||
           config.schedule == gen::GemmSchedule::kPingPong) &&
          layout.m_slices >= 1,
      name, ": ", layout.rows_per_consumer, " rows per consumer");
  FUZZ_CHECK(layout.accumulators_per_thread > 0 &&
                 layout.accumulators_per_thread + gen::kRegisterOverhead <=
                     layout.consumer_registers &&
                 layout.consumer_registers <= 255,
             name, ": ", layout.accumulators_per_thread, " accumulators in ",
             layout.consumer_registers, " registers");

  const absl::StatusOr<gen::GeneratedGemm> generated =
      gen::GenerateGemm(config, element);
  FUZZ_CHECK(generated.ok(), name, " validated but does not generate: ",
             generated.status().message());
  FUZZ_CHECK(generated->threads_per_block == layout.threads &&
                 generated->shared_bytes == layout.shared_bytes,
             name, ": generated ", generated->threads_per_block, " threads, ",
             generated->shared_bytes, " shared bytes");
  FUZZ_CHECK(!generated->kernel_name.empty() &&
                 absl::StrContains(generated->source, generated->kernel_name),
             name, ": kernel '", generated->kernel_name, "' not in its source");
}

void CheckLaunch(const gen::GemmConfig& config, int m, int n, int64_t k,
                 int resident, const std::string& name) {
  // lib/gemm/gemm.cc's order: the grid, then the checks, then the workspace.
  const gen::GemmGrid grid = gen::GemmLaunchGrid(config, m, n, resident);
  if (!gen::CheckGemmLaunch(config, m, n, k, grid).ok()) return;
  const std::string problem =
      absl::StrCat(name, " at ", m, "x", n, "x", k, " on ", resident, ": ");
  FUZZ_CHECK(grid.x >= 1 && grid.y >= 1 && grid.cluster_x >= 1 &&
                 grid.x % grid.cluster_x == 0,
             problem, "grid ", grid.x, "x", grid.y, " clusters of ",
             grid.cluster_x);
  const int64_t units = gen::GemmWorkUnits(config, m, n);
  FUZZ_CHECK(units >= 1, problem, units, " work units");
  if (config.schedule == gen::GemmSchedule::kV1) {
    FUZZ_CHECK(grid.x == CeilDiv(m, config.block_m) &&
                   grid.y == CeilDiv(n, config.block_n) && grid.cluster_x == 1,
               problem, "v1 grid ", grid.x, "x", grid.y);
  } else {
    const int64_t clusters = grid.x / grid.cluster_x;
    FUZZ_CHECK(grid.y == 1 && grid.cluster_x == config.cluster_m, problem,
               "grid ", grid.x, "x", grid.y);
    if (!config.persistent) {
      FUZZ_CHECK(clusters == units, problem, clusters, " clusters for ", units,
                 " units");
    } else if (config.stream_k) {
      FUZZ_CHECK(clusters == std::max(1, resident), problem, clusters,
                 " stream-K clusters");
    } else {
      FUZZ_CHECK(clusters == std::min<int64_t>(units, std::max(1, resident)),
                 problem, clusters, " persistent clusters for ", units,
                 " units");
    }
  }
  const int64_t workspace = gen::GemmWorkspaceBytes(config, m, n, grid);
  const int64_t offset = gen::GemmWorkspaceKernelOffset(config, grid);
  const int64_t flags = gen::GemmStreamKFlagBytes(config, grid);
  constexpr int64_t kRegion = gen::kWorkspaceFlagRegionBytes;
  if (config.split_k > 1) {
    FUZZ_CHECK(workspace == kRegion + int64_t{config.split_k} * m * n * 4 &&
                   offset == kRegion,
               problem, "split-K workspace of ", workspace, " bytes at ",
               offset);
  } else if (config.stream_k) {
    FUZZ_CHECK(flags > 0 && flags % 16 == 0 && flags <= kRegion &&
                   flags >= int64_t{grid.x} * grid.y * config.consumers * 4,
               problem, flags, " flag bytes");
    FUZZ_CHECK(workspace == kRegion + int64_t{grid.x} * grid.y *
                                          config.block_m * config.block_n * 4 &&
                   offset == kRegion - flags,
               problem, "stream-K workspace of ", workspace, " bytes at ",
               offset);
  } else {
    FUZZ_CHECK(workspace == 0 && flags == 0 && offset == 0, problem,
               "a workspace of ", workspace, " bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<absl::string_view> lines =
      ptxgen::fuzz::Lines(ptxgen::fuzz::AsText(data, size));
  const std::string name(lines[0]);
  const absl::StatusOr<gen::GemmConfig> config = gen::ParseConfigName(name);
  if (!config.ok()) return 0;
  const absl::StatusOr<ptxgen::ptx::ScalarType> element =
      ptxgen::ptx::ParseScalarType(lines.size() > 1 ? lines[1] : "f16");
  if (!element.ok()) return 0;
  // What GenerateGemm(config, element) computes: the plain form, which for
  // fp8 promotes (a rule of the form's, beside the element's).
  if (!gen::ValidateGemmConfigForForm(*config, gen::PlainForm(*element)).ok()) {
    return 0;
  }
  CheckLayout(*config, *element, name);
  for (size_t i = 2; i < lines.size() && i < 18; ++i) {
    const std::vector<absl::string_view> words = ptxgen::fuzz::Words(lines[i]);
    const int m = IntegerWord<int>(words, 0, 0);
    const int n = IntegerWord<int>(words, 1, 0);
    const int64_t k = IntegerWord<int64_t>(words, 2, 0);
    const int resident = IntegerWord<int>(words, 3, 132);
    // Gemm::Prepare refuses empty problems before it plans a launch.
    if (m < 1 || n < 1 || k < 1) continue;
    CheckLaunch(*config, m, n, k, resident, name);
  }
  return 0;
}
