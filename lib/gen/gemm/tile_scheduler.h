#ifndef PTXGEN_LIB_GEN_GEMM_TILE_SCHEDULER_H_
#define PTXGEN_LIB_GEN_GEMM_TILE_SCHEDULER_H_

// The device part of the GEMM tile scheduler (tile_scheduler.cc, whose
// host planning gen/gemm.h declares: GemmWorkUnits, GemmLaunchGrid,
// CheckGemmLaunch, the workspace's sizes). Private to lib/gen.

#include <string>

#include "lib/gen/common/kernel_builder.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gen {

// The warp-specialized kernel's work schedule (gemm_scheduler.cu: the
// units of persistent, split-K, stream-K and grouped grids) and the device
// function tile_of(t, cluster_rows, tiles_n, raster_group, cluster_row,
// tile_n) of config's tile order.
std::string TileSchedulerPart(KernelBuilder& builder, const GemmConfig& config);

}  // namespace ptxgen::gen

#endif  // PTXGEN_LIB_GEN_GEMM_TILE_SCHEDULER_H_
