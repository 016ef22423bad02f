#ifndef PTXGEN_FUZZ_GEMM_CONFIG_UTIL_H_
#define PTXGEN_FUZZ_GEMM_CONFIG_UTIL_H_

// Field-by-field comparison of GEMM configurations: GemmConfig::operator==
// compares names, which is what the round trips under test rely on.

#include "ptxgen/gen/gemm.h"

namespace ptxgen::fuzz {

inline bool SameFields(const gen::GemmConfig& a, const gen::GemmConfig& b) {
  return a.schedule == b.schedule && a.block_m == b.block_m &&
         a.block_n == b.block_n && a.block_k == b.block_k &&
         a.stages == b.stages && a.consumers == b.consumers &&
         a.mma_groups_in_flight == b.mma_groups_in_flight &&
         a.cluster_m == b.cluster_m && a.epilogue == b.epilogue &&
         a.store_chunks == b.store_chunks &&
         a.set_max_registers == b.set_max_registers &&
         a.tile_order == b.tile_order && a.raster_group == b.raster_group &&
         a.split_k == b.split_k && a.stream_k == b.stream_k &&
         a.persistent == b.persistent;
}

}  // namespace ptxgen::fuzz

#endif  // PTXGEN_FUZZ_GEMM_CONFIG_UTIL_H_
