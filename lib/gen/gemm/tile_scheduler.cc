// The GEMM tile scheduler as one unit: what the host plans of it (work
// units, the launch grid, the 32-bit limits the kernel's counters keep,
// stream-K's flags and the workspace) and the device part that walks the
// same units (gemm_scheduler.cu, with the tile order it takes), so that a
// change of the schedule is made here and in its templates only.
#include "lib/gen/gemm/tile_scheduler.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/gen/gemm/gemm_internal.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gen {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// CUDA's grid limits (the runtime checks them again at launch).
constexpr int64_t kMaxGridX = std::numeric_limits<int>::max();
constexpr int64_t kMaxGridY = 65535;

}  // namespace

std::string TileSchedulerPart(KernelBuilder& builder,
                              const GemmConfig& config) {
  return absl::StrCat(builder.Fill("gemm_scheduler.cu", {}), "\n",
                      builder.Fill(config.tile_order == TileOrder::kHilbert
                                       ? "gemm_tile_order_hilbert.cu"
                                       : "gemm_tile_order_raster.cu",
                                   {}));
}

int64_t GemmWorkUnits(const GemmConfig& config, int64_t m, int64_t n,
                      int64_t batch, GemmGrouping grouping) {
  const int64_t tiles_n = CeilDiv(n, config.block_n);
  if (grouping == GemmGrouping::kContiguous) {
    const int64_t cluster_block_m = int64_t{config.block_m} * config.cluster_m;
    return (m / cluster_block_m + batch) * tiles_n;
  }
  const int64_t tiles_m = CeilDiv(m, config.block_m);
  return batch * CeilDiv(tiles_m, config.cluster_m) * tiles_n * config.split_k;
}

bool ReducesSlicesInWorkspace(const GemmSchedulerConfig& scheduler) {
  return scheduler.split_k > 1 && !scheduler.split_k_in_cluster;
}

int ClusterCtas(const GemmConfig& config) {
  return config.split_k_in_cluster ? config.split_k : config.cluster_m;
}

GemmGrid GemmLaunchGrid(const GemmConfig& config, int64_t m, int64_t n,
                        int resident_clusters, int64_t batch,
                        GemmGrouping grouping) {
  GemmGrid grid;
  if (config.schedule == GemmSchedule::kV1) {
    grid.x = CeilDiv(m, config.block_m);
    grid.y = CeilDiv(n, config.block_n);
    grid.z = batch;
    return grid;
  }
  const int64_t units = GemmWorkUnits(config, m, n, batch, grouping);
  const int64_t resident = std::max(1, resident_clusters);
  if (config.split_k_in_cluster) {
    // Every CTA takes its own units; the split_k CTAs of a cluster, whose
    // unit counts both grid sizes divide by, take the slices of one tile.
    grid.x =
        config.persistent ? std::min(units, resident * config.split_k) : units;
    grid.cluster_x = config.split_k;
    return grid;
  }
  // Stream-K spreads even a few tiles' k-tiles over every resident cluster.
  const int64_t clusters = !config.persistent ? units
                           : config.stream_k  ? resident
                                              : std::min(units, resident);
  grid.x = clusters * config.cluster_m;
  grid.cluster_x = config.cluster_m;
  return grid;
}

absl::Status CheckGemmLaunch(const GemmConfig& config, int64_t m, int64_t n,
                             int64_t k, const GemmGrid& grid, int64_t batch,
                             GemmGrouping grouping) {
  if (batch < 1 || batch > kMaxGemmBatch) {
    return Unsupported(config, absl::StrCat("a batch holds 1..", kMaxGemmBatch,
                                            " GEMMs, not ", batch));
  }
  // The sizes first: past them no product below can wrap.
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", m}, {"n", n}, {"k", k}}) {
    if (size < 1 || size > kMaxGemmDimension) {
      return Unsupported(
          config, absl::StrCat("the kernel takes ", name, " as an int: ", size,
                               " is outside 1..", kMaxGemmDimension));
    }
  }
  constexpr int64_t kInt32Limit = int64_t{1} << 31;
  // A grouped kernel's cursors run past the units by a grid's clusters.
  const int64_t units = GemmWorkUnits(config, m, n, batch, grouping) +
                        (grouping == GemmGrouping::kNone ? 0 : grid.x);
  // Only the warp-specialized kernel walks tiles in raster groups.
  const int64_t raster_span =
      IsWarpSpecialized(config.schedule) &&
              config.tile_order == TileOrder::kRaster
          ? config.raster_group * CeilDiv(n, config.block_n)
          : 0;
  if (units >= kInt32Limit || raster_span >= kInt32Limit) {
    return Unsupported(
        config, absl::StrCat("the kernel counts tiles in 32 bits: ", batch,
                             " x ", m, " x ", n, " makes ", units,
                             " work units and raster spans of ", raster_span,
                             " tiles"));
  }
  if (grid.x > kMaxGridX || grid.y > kMaxGridY) {
    return Unsupported(config,
                       absl::StrCat("a grid of ", grid.x, " x ", grid.y,
                                    " CTAs is beyond CUDA's ", kMaxGridX, " x ",
                                    kMaxGridY, " (m=", m, ", n=", n, ")"));
  }
  if (!config.stream_k) return absl::OkStatus();
  const int64_t clusters = grid.x / grid.cluster_x;
  const int64_t k_tiles = CeilDiv(k, config.block_k);
  if (clusters * (k_tiles + 1) >= kInt32Limit) {
    return Unsupported(
        config, absl::StrCat("stream-K counts k-tiles in 32 bits: ", clusters,
                             " clusters x ", k_tiles, " k-tiles (k=", k,
                             ") is too many; use a configuration "
                             "without 'sk'"));
  }
  if (const int64_t flag_bytes = GemmStreamKFlagBytes(config, grid);
      flag_bytes > kWorkspaceFlagRegionBytes) {
    return Unsupported(
        config, absl::StrCat("stream-K's flags for ", clusters,
                             " clusters take ", flag_bytes,
                             " bytes, more than the workspace's flag region (",
                             kWorkspaceFlagRegionBytes,
                             "); use a configuration without 'sk'"));
  }
  return absl::OkStatus();
}

int StreamKFlagWordsPerCluster(const GemmPipelineShape& pipeline) {
  const int flags = pipeline.cluster_m * pipeline.consumers;
  return static_cast<int>(CeilDiv(flags, kStreamKFlagWordsAlignment)) *
         kStreamKFlagWordsAlignment;
}

int64_t GemmStreamKFlagBytes(const GemmConfig& config, const GemmGrid& grid) {
  if (!config.stream_k) return 0;
  const int64_t clusters = grid.x * grid.y / config.cluster_m;
  return clusters * StreamKFlagWordsPerCluster(config) *
         int64_t{sizeof(int32_t)};
}

int64_t GemmWorkspaceBytes(const GemmConfig& config, int64_t m, int64_t n,
                           const GemmGrid& grid) {
  constexpr int64_t kFloat = 4;
  if (ReducesSlicesInWorkspace(config)) {
    return kWorkspaceFlagRegionBytes + config.split_k * m * n * kFloat;
  }
  if (!config.stream_k) return 0;
  const int64_t ctas = grid.x * grid.y;
  return kWorkspaceFlagRegionBytes +
         ctas * config.block_m * config.block_n * kFloat;
}

int64_t GemmWorkspaceKernelOffset(const GemmConfig& config,
                                  const GemmGrid& grid) {
  if (ReducesSlicesInWorkspace(config)) return kWorkspaceFlagRegionBytes;
  if (!config.stream_k) return 0;
  return kWorkspaceFlagRegionBytes - GemmStreamKFlagBytes(config, grid);
}

}  // namespace ptxgen::gen
