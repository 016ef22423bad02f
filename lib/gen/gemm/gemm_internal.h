#ifndef PTXGEN_LIB_GEN_GEMM_GEMM_INTERNAL_H_
#define PTXGEN_LIB_GEN_GEMM_GEMM_INTERNAL_H_

// What GEMM validation, scheduling and generation share: the shared-memory
// and register planning, and the refusal of a configuration (private to
// lib/gen).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/gen/common/kernel_parts.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/matrix_descriptor.h"

namespace ptxgen::gen {

// InvalidArgument "GEMM config '<name>': <rule>", the refusal of every
// rule a configuration breaks (validation, launch limits).
absl::Status Unsupported(const GemmConfig& config, absl::string_view rule);

// Registers a consumer thread needs beside its accumulators (addresses,
// loop state, descriptors): an estimate, checked against ptxas's report.
inline constexpr int kRegisterOverhead = 40;
// What a GEMM's TMA producer warpgroup keeps.
inline constexpr int kProducerRegisters = 40;
// Stream-K's flags (ints) are padded to a multiple of this many, so that the
// f32 slots after them start 16-byte aligned for vector access.
inline constexpr int kStreamKFlagWordsAlignment = 4;
// The ints of stream-K's flag region per cluster of the grid: a flag per
// consumer warpgroup of each of its CTAs, padded per cluster rather than
// for the whole region, so that the kernel finds its slots at a planned
// constant times the grid's clusters (which only the launch decides).
int StreamKFlagWordsPerCluster(const GemmPipelineShape& pipeline);
// Shared bytes for the warp-specialized kernel's work schedule (the
// Schedule of gemm_scheduler.cu: ten ints, a pointer and a flag; the
// kernel asserts that it fits).
inline constexpr int kScheduleBytes = 64;

struct GemmLayout {
  // Each in its major order and the widest swizzle its contiguous bytes take.
  ptx::SharedTile a_tile;
  ptx::SharedTile b_tile;
  int a_tile_bytes = 0;  // rounded up to the swizzle pattern
  int b_tile_bytes = 0;
  int stage_bytes = 0;    // A then B
  int c_tile_offset = 0;  // TMA-store epilogue only
  int c_tile_bytes = 0;
  // TMA-store epilogue: per consumer, passes of store_pass_chunks chunks of
  // store_chunk_bytes (64 columns of its rows) each.
  int store_chunk_bytes = 0;
  int store_pass_chunks = 0;
  int store_passes = 0;
  // Split-K meeting in a cluster: each consumer's f32 partial sums, 16-byte
  // vectors thread-minor, where the cluster's first CTA reads them.
  int partials_offset = 0;
  int consumer_partials_bytes = 0;
  // full[stages] then empty[stages], 8 bytes each; then, meeting in a
  // cluster, ready[consumers] and free[consumers] (the partials' handover).
  int barrier_offset = 0;
  int schedule_offset = 0;  // the warp-specialized work schedule
  int shared_bytes = 0;     // everything, with base-alignment slack
  int threads = 0;
  // The consumers that read each stage: all of them when they split its
  // rows (ws), one when each takes whole tiles (pp).
  int stage_readers = 0;
  int rows_per_consumer = 0;
  int m_slices = 0;  // 64-row wgmma slices per consumer
  int accumulators_per_thread = 0;
  // fp8 promotion: a stage's wgmma runs in promotion_parts column ranges of
  // the tile, one after the other, each into the same sums (of
  // accumulators_per_thread / promotion_parts registers) added into the
  // accumulators once its wgmma completed: the fewest ranges whose sums fit
  // beside the accumulators (1 without promotion). Two sets of sums, a
  // range's wgmma running while the one before is added, measured 3-9%
  // slower on the H200 (smaller wgmma N, more of them); with the last range
  // in flight into the next stage too (#50), ptxas 13.0 serializes the
  // wgmma (C7514) in every ordering tried (bench/RESULTS.md, fp8).
  int promotion_parts = 1;
  // Block scaling: what a consumer thread keeps of its tile's scales (their
  // addresses and rows, the stage's scales, their products); an estimate,
  // checked against ptxas's report. 0 without.
  int scale_registers = 0;
  int consumer_registers = 0;      // what a consumer thread may use
  bool adjusts_registers = false;  // setmaxnreg in use
};

GemmLayout PlanGemmLayout(const GemmConfig& config, const GemmForm& form);

// What a promoting consumer thread needs with a stage in `parts` column
// ranges: the accumulators, a range's sums, kRegisterOverhead and 8 more
// per 64-row slice past the first (its A descriptors: a 256x128 tile at
// 232 registers spilled), and the block scales' registers.
int PromotionRegisters(const GemmLayout& layout, int parts);

class DeviceOps;
// The device function epilogue_value(e, value, batch, row, column) of
// `form` (gemm_epilogue.cc); the instructions it needs go to `ops`.
std::string EpilogueValueFunction(const GemmForm& form, DeviceOps& ops);
// The plain form's layout.
GemmLayout PlanGemmLayout(const GemmConfig& config, ptx::ScalarType element);

}  // namespace ptxgen::gen

#endif  // PTXGEN_LIB_GEN_GEMM_GEMM_INTERNAL_H_
