#include <algorithm>

#include "lib/gen/gemm/gemm_internal.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

// The partials are read and written as float4.
constexpr int kFloatBytes = 4;
constexpr int kPartialsAlignment = 16;

// An operand tile: mn_extent rows of M or N by block_k of K, stored with
// `major` contiguous, in the widest swizzle that fits it.
ptx::SharedTile OperandTile(ptx::ScalarType element, int mn_extent, int block_k,
                            ptx::MajorOrder major) {
  const int contiguous = major == ptx::MajorOrder::kK ? block_k : mn_extent;
  return {element, mn_extent, block_k, major,
          SwizzleFor(contiguous * ptx::SizeInBytes(element))};
}

// The tile's bytes, rounded so that a tile placed after it stays aligned.
// 0 for a tile wgmma cannot read (ValidateTile refuses those first).
int AlignedTileBytes(const ptx::SharedTile& tile) {
  const absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  return layout.ok() ? RoundUp(layout->tile_bytes, layout->alignment_bytes) : 0;
}

// What a consumer thread may use: v1 runs one warpgroup with the whole
// file; warp-specialized kernels split the SM's registers between the
// producer warpgroup and the consumers, by setmaxnreg or evenly.
int ConsumerRegisters(const GemmConfig& config, int threads) {
  constexpr int kMaxPerThread = 255;
  if (config.schedule == GemmSchedule::kV1) return kMaxPerThread;
  if (config.set_max_registers && config.consumers > 1) {
    return std::min(
        240, ConsumerRegisterShare(config.consumers, kProducerRegisters));
  }
  return std::min(kMaxPerThread, LaunchRegistersPerThread(threads));
}

// The fewest column ranges of block_n (each a multiple of 8 columns, a
// wgmma N) whose sums fit beside the accumulators; 1 when none does (the
// validator refuses the config) or nothing is promoted.
int PromotionParts(const GemmConfig& config, const GemmForm& form,
                   const GemmLayout& layout) {
  if (!PromotesAccumulators(form)) return 1;
  for (int parts : {1, 2, 4, 8}) {
    if (config.block_n % (8 * parts) != 0) break;
    if (PromotionRegisters(layout, parts) <= layout.consumer_registers) {
      return parts;
    }
  }
  return 1;
}

}  // namespace

int PromotionRegisters(const GemmLayout& layout, int parts) {
  return layout.accumulators_per_thread +
         layout.accumulators_per_thread / parts + kRegisterOverhead +
         8 * (layout.m_slices - 1) + layout.scale_registers;
}

GemmLayout PlanGemmLayout(const GemmConfig& config, ptx::ScalarType element) {
  return PlanGemmLayout(config, PlainForm(element));
}

GemmLayout PlanGemmLayout(const GemmConfig& config, const GemmForm& form) {
  GemmLayout layout;
  const ptx::ScalarType element = form.element;
  layout.a_tile =
      OperandTile(element, config.block_m, config.block_k, form.a_major);
  layout.b_tile =
      OperandTile(BElement(form), config.block_n, config.block_k, form.b_major);
  layout.a_tile_bytes = AlignedTileBytes(layout.a_tile);
  layout.b_tile_bytes = AlignedTileBytes(layout.b_tile);
  layout.stage_bytes = layout.a_tile_bytes + layout.b_tile_bytes;
  // Cooperative consumers split each stage's A rows; a ping-pong consumer
  // reads the whole stage alone.
  const bool pingpong = config.schedule == GemmSchedule::kPingPong;
  layout.stage_readers = pingpong ? 1 : config.consumers;
  layout.rows_per_consumer = config.block_m / layout.stage_readers;
  int end = config.stages * layout.stage_bytes;
  if (config.epilogue == GemmEpilogue::kTmaStore) {
    layout.c_tile_offset = RoundUp(end, kSharedBaseAlignment);
    layout.store_pass_chunks = StoreChunksPerPass(config);
    layout.store_passes = StoreChunkCount(config) / layout.store_pass_chunks;
    layout.store_chunk_bytes = layout.rows_per_consumer * kStoreChunkColumns *
                               ptx::SizeInBytes(form.output);
    layout.c_tile_bytes =
        config.consumers * layout.store_pass_chunks * layout.store_chunk_bytes;
    end = layout.c_tile_offset + layout.c_tile_bytes;
  }
  if (config.split_k_in_cluster) {
    layout.partials_offset = RoundUp(end, kPartialsAlignment);
    layout.consumer_partials_bytes =
        layout.rows_per_consumer * config.block_n * kFloatBytes;
    end = layout.partials_offset +
          config.consumers * layout.consumer_partials_bytes;
  }
  layout.barrier_offset = RoundUp(end, ptx::kMbarrierBytes);
  // full[stages], then empty[stages], then the meeting's ready and free.
  const int meeting_barriers =
      config.split_k_in_cluster ? 2 * config.consumers : 0;
  end = layout.barrier_offset +
        ptx::kMbarrierBytes * (2 * config.stages + meeting_barriers);
  const bool specialized = IsWarpSpecialized(config.schedule);
  if (specialized) {
    layout.schedule_offset = end;
    end += kScheduleBytes;
  }
  layout.shared_bytes = end + kSharedBaseAlignment;
  layout.threads =
      kThreadsPerWarpgroup * (config.consumers + (specialized ? 1 : 0));
  layout.m_slices = layout.rows_per_consumer / ptx::kWgmmaM;
  layout.accumulators_per_thread =
      layout.m_slices *
      ptx::WgmmaAccumulatorRegisters(AccumulatorType(form), config.block_n);
  layout.consumer_registers = ConsumerRegisters(config, layout.threads);
  // Measured against ptxas (the candidates' compile test): 128x256 tiles
  // (the blocks of a register known here) promote in two parts without
  // spilling when the TMA store takes the plain tile, not beside the direct
  // store or epilogue ops (24-44 bytes spilled); 128x192 ones (a compare
  // and a select per eight columns) not in one; a further slice has its
  // rows and their scales.
  const bool lean_epilogue = config.epilogue == GemmEpilogue::kTmaStore &&
                             !HasEpilogueOps(form) && !form.records_amax;
  layout.scale_registers =
      form.scaling != GemmScaling::kBlock
          ? 0
          : (TilesAlignToScaleBlocks(config) ? (lean_epilogue ? 0 : 8) : 16) +
                10 * (layout.m_slices - 1);
  layout.promotion_parts = PromotionParts(config, form, layout);
  // One consumer already gets every register a thread can address.
  layout.adjusts_registers =
      specialized && config.set_max_registers && config.consumers > 1;
  return layout;
}

// Walks the layout itself rather than dividing the room by a stage's bytes:
// the C tile starts on a 1024-byte boundary after the ring, so the bytes
// need not grow by the same amount with each stage. They do grow with each
// (its tiles and barriers): the first depth that does not fit ends the walk.
int MaxStagesThatFit(const GemmConfig& config, ptx::ScalarType element,
                     int shared_bytes_limit) {
  GemmConfig deeper = config;
  int fits = 0;
  for (deeper.stages = 1; deeper.stages <= kMaxGemmStages; ++deeper.stages) {
    if (PlanGemmLayout(deeper, element).shared_bytes > shared_bytes_limit)
      break;
    fits = deeper.stages;
  }
  return fits;
}

}  // namespace ptxgen::gen
