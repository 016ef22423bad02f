// Fills the GEMM templates of ptx_templates/ for one configuration: the
// instruction text comes from layer 1, the shared-memory plan from
// PlanGemmLayout, the descriptors from the tile layouts.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "lib/gen/device_ops.h"
#include "lib/gen/gemm_internal.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/gen/templates.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/global_flag.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/named_barrier.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

// Everything one generation needs; ops collects errors as it goes.
struct Generation {
  const GemmConfig& config;
  ptx::ScalarType element;
  GemmLayout layout;
  DeviceOps ops;
  absl::Status status;

  void Check(const absl::Status& result) {
    if (status.ok() && !result.ok()) status = result;
  }
};

// The configuration without its launch policy (persistent or one CTA per
// tile), which does not change the code.
std::string CodeName(const GemmConfig& config) {
  GemmConfig code = config;
  code.persistent = true;
  std::string name = ConfigName(code);
  absl::StrReplaceAll({{" persistent", ""}}, &name);
  return name;
}

std::string KernelName(const GemmConfig& config, ptx::ScalarType element) {
  return absl::StrCat("ptxgen_gemm_", ptx::PtxName(element), "_",
                      absl::StrReplaceAll(CodeName(config), {{" ", "_"}}));
}

std::string Unsigned(int64_t value) { return absl::StrCat(value, "u"); }

// "0x...ull | <address field of `address`>": the layout's constant fields
// with the tile's run-time shared address.
std::string DescriptorExpression(Generation& g, const ptx::SharedTile& tile,
                                 const std::string& address) {
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  if (!layout.ok()) {
    g.Check(layout.status());
    return "";
  }
  absl::StatusOr<uint64_t> fields = ptx::EncodeMatrixDescriptor(layout->descriptor);
  if (!fields.ok()) {
    g.Check(fields.status());
    return "";
  }
  return absl::StrFormat("0x%016xull | %s", *fields,
                         ptx::DescriptorAddressFieldExpression(address));
}

// The operand tile one consumer reads: its rows of A, all of B.
ptx::SharedTile ConsumerATile(const Generation& g) {
  ptx::SharedTile tile = g.layout.a_tile;
  tile.mn_extent = g.layout.rows_per_consumer;
  return tile;
}

uint32_t OperandOffset(Generation& g, const ptx::SharedTile& tile, int mn, int k) {
  absl::StatusOr<uint32_t> offset = ptx::TileOperandOffset(tile, mn, k);
  g.Check(offset.status());
  return offset.ok() ? *offset : 0;
}

std::string PinAccumulators(Generation& g, int indent) {
  std::string text;
  const std::string name = absl::StrCat("wgmma_pin_n", g.config.block_n);
  for (int s = 0; s < g.layout.m_slices; ++s) {
    absl::StrAppend(
        &text, std::string(indent, ' '),
        g.ops.Call(name,
                   ptx::WgmmaAccumulatorPin(ptx::ScalarType::kF32, g.config.block_n),
                   {{"d", absl::StrCat("acc[", s, "]")}}),
        "\n");
  }
  return text;
}

// wgmma over one stage: every K step of the block, every 64-row slice.
// The first K step scales the accumulators by `first_scale_d` (0 starts a
// tile without a separate zeroing pass), the others by 1.
std::string MmaBody(Generation& g, int indent, const std::string& first_scale_d) {
  ptx::WgmmaMma mma;
  mma.n = g.config.block_n;
  mma.a_type = mma.b_type = g.element;
  mma.d_type = ptx::ScalarType::kF32;
  const std::string name = absl::StrCat("wgmma_m64n", mma.n, "_f32_",
                                        ptx::PtxName(g.element));
  const int instruction_k = *ptx::WgmmaK(g.element);
  const ptx::SharedTile a_tile = ConsumerATile(g);
  std::string text;
  for (int k = 0; k < g.config.block_k; k += instruction_k) {
    const uint32_t b_offset = OperandOffset(g, g.layout.b_tile, 0, k);
    for (int s = 0; s < g.layout.m_slices; ++s) {
      const uint32_t a_offset = OperandOffset(g, a_tile, s * ptx::kWgmmaM, k);
      absl::StrAppend(
          &text, std::string(indent, ' '),
          g.ops.Call(name, ptx::WgmmaMmaAsync(mma),
                     {{"d", absl::StrCat("acc[", s, "]")},
                      {"a", absl::StrCat("a_desc + ", ptx::DescriptorAddressDelta(a_offset),
                                         "ull")},
                      {"b", absl::StrCat("b_desc + ", ptx::DescriptorAddressDelta(b_offset),
                                         "ull")},
                      {"scale_d", k == 0 ? first_scale_d : "1u"}}),
          "\n");
    }
  }
  return text;
}

std::string WaitGroup(Generation& g, int pending) {
  return g.ops.Call(absl::StrCat("wgmma_wait_group_", pending),
                    ptx::WgmmaWaitGroup(pending), {});
}

std::string TmaLoad(Generation& g, const std::string& dst,
                    const std::string& map, const std::string& k,
                    const std::string& row, const std::string& barrier) {
  ptx::TensorLoad load;
  return g.ops.Call("tma_load_2d", ptx::CpAsyncBulkTensorLoad(load),
                    {{"dst", dst},
                     {"tensor_map", map},
                     {"coords", absl::StrCat("{(unsigned)(", k, "), (unsigned)(", row, ")}")},
                     {"mbarrier", barrier}});
}

std::string Fill(Generation& g, absl::string_view name,
                 const TemplateValues& values) {
  absl::StatusOr<absl::string_view> text = EmbeddedTemplate(name);
  if (!text.ok()) {
    g.Check(text.status());
    return "";
  }
  absl::StatusOr<std::string> filled = FillTemplate(name, *text, values);
  g.Check(filled.status());
  return filled.ok() ? *filled : "";
}

std::string PackCall(Generation& g, const std::string& packed,
                     const std::string& high, const std::string& low) {
  return g.ops.Call(absl::StrCat("cvt_pack_", ptx::PtxName(g.element), "x2"),
                    ptx::CvtPackFromF32x2(g.element),
                    {{"packed", packed}, {"high", high}, {"low", low}});
}

// The rounding of a packed pair and of single values, as template slots.
TemplateValues RoundingValues(Generation& g) {
  const std::string round = absl::StrCat("cvt_round_", ptx::PtxName(g.element));
  const absl::StatusOr<ptx::Statement> statement = ptx::CvtRoundFromF32(g.element);
  return {{"PACK", PackCall(g, "packed", "high", "low")},
          {"ROUND_LOW", g.ops.Call(round, statement,
                                   {{"result", "value"}, {"value", "low"}})},
          {"ROUND_HIGH", g.ops.Call(round, statement,
                                    {{"result", "value"}, {"value", "high"}})}};
}

// The device function the direct epilogue calls per accumulator pair: a
// rounded store into C, or an f32 store into the split-K workspace.
std::string StoreFunction(Generation& g) {
  if (g.config.epilogue != GemmEpilogue::kDirect) return "";
  if (g.config.split_k > 1) return Fill(g, "gemm_store_partial.cu", {});
  TemplateValues values = RoundingValues(g);
  values["ELEMENT"] = std::string(ptx::PtxName(g.element));
  return Fill(g, "gemm_store_pair.cu", values);
}

// One store_pair per accumulator pair, at the fragment-layout coordinate.
std::string DirectEpilogue(Generation& g) {
  const std::string destination =
      g.config.split_k > 1
          ? absl::StrCat("store_partial(workspace, w.unit % ", g.config.split_k, ",")
          : "store_pair(c,";
  std::string stores;
  const int registers = ptx::WgmmaAccumulatorRegisters(ptx::ScalarType::kF32,
                                                       g.config.block_n);
  for (int s = 0; s < g.layout.m_slices; ++s) {
    for (int i = 0; i < registers; i += 2) {
      const ptx::AccumulatorCoordinate at = ptx::WgmmaAccumulatorCoordinate(0, i);
      absl::StrAppendFormat(
          &stores, "        %s m, n, row + %d, column + %d, acc[%d][%d], "
                   "acc[%d][%d], pair_stores);\n",
          destination.c_str(), s * ptx::kWgmmaM + at.row, at.column, s, i, s, i + 1);
    }
  }
  const std::string thread =
      g.config.schedule == GemmSchedule::kV1 ? "threadIdx.x" : "thread";
  return Fill(g, "gemm_epilogue_direct.cu",
              {{"ROW_OF_THREAD", ptx::WgmmaAccumulatorRowExpression(thread)},
               {"COLUMN_OF_THREAD", ptx::WgmmaAccumulatorColumnExpression(thread)},
               {"STORES", stores}});
}

// bar.sync of one consumer warpgroup's 128 threads (barrier 0 is the
// block's).
std::string SyncConsumer(Generation& g) {
  return g.ops.Call("named_barrier_sync", ptx::NamedBarrierSync(),
                    {{"id", "1u + consumer"}, {"threads", "128u"}});
}

std::string TmaEpilogue(Generation& g) {
  const GemmLayout& layout = g.layout;
  const int chunk_bytes = layout.store_chunk_bytes;
  const int pass_chunks = layout.store_pass_chunks;
  const std::string sync = SyncConsumer(g);
  ptx::TensorStore store;
  return Fill(
      g, "gemm_epilogue_tma.cu",
      {{"ELEMENT", std::string(ptx::PtxName(g.element))},
       {"ROWS", absl::StrCat(layout.rows_per_consumer)},
       {"BLOCK_N", absl::StrCat(g.config.block_n)},
       {"CHUNK_BYTES", absl::StrCat(chunk_bytes)},
       {"C_OFFSET", absl::StrCat(layout.c_tile_offset)},
       {"CONSUMER_C_BYTES", absl::StrCat(pass_chunks * chunk_bytes)},
       {"PASSES", absl::StrCat(layout.store_passes)},
       {"PASS_CHUNKS", absl::StrCat(pass_chunks)},
       {"M_SLICES", absl::StrCat(layout.m_slices)},
       {"WAIT_BUFFER", g.ops.Call("bulk_wait_group_read_0",
                                  ptx::CpAsyncBulkWaitGroup(0, true), {})},
       {"SYNC_CONSUMER", sync},
       {"PACK", PackCall(g, "values[q]", "acc[s][8 * c + 2 * q + 1]",
                         "acc[s][8 * c + 2 * q]")},
       {"STORE_MATRIX",
        g.ops.Call("stmatrix_x4", ptx::StMatrixSharedB16(ptx::StMatrix{}),
                   {{"address", absl::StrCat("c_tile + ", ptx::SwizzleOffsetExpression(
                                                              "offset", ptx::Swizzle::k128B))},
                    {"values", "values"}})},
       {"FENCE_PROXY", g.ops.Call("fence_proxy_async_shared",
                                  ptx::FenceProxyAsyncSharedCta(), {})},
       {"STORE_CHUNK",
        g.ops.Call("tma_store_2d", ptx::CpAsyncBulkTensorStore(store),
                   {{"tensor_map", "(unsigned long long)&c_map"},
                    {"coords", absl::StrCat("{(unsigned)(n0 + ", kStoreChunkColumns,
                                            " * (pass * ", pass_chunks,
                                            " + chunk)), (unsigned)m0}")},
                    {"src", absl::StrCat("c_tile + chunk * ", chunk_bytes, "u")}})},
       {"COMMIT", g.ops.Call("bulk_commit_group", ptx::CpAsyncBulkCommitGroup(), {})}});
}

std::string StreamKFixup(Generation& g) {
  if (!g.config.stream_k) return "";
  return Fill(
      g, "gemm_stream_k_fixup.cu",
      {{"CONSUMERS", absl::StrCat(g.config.consumers)},
       {"CLUSTER_M", absl::StrCat(g.config.cluster_m)},
       {"M_SLICES", absl::StrCat(g.layout.m_slices)},
       {"SLICE_ACCUMULATORS",
        absl::StrCat(g.layout.accumulators_per_thread / g.layout.m_slices)},
       {"FLAG_WORDS", absl::StrCat("(gridDim.x * ", g.config.consumers, " + ",
                                   kStreamKFlagWordsAlignment - 1, ") / ",
                                   kStreamKFlagWordsAlignment, " * ",
                                   kStreamKFlagWordsAlignment)},
       {"SLOT_VECTORS",
        absl::StrCat(kThreadsPerWarpgroup * g.layout.accumulators_per_thread / 4)},
       {"SYNC_CONSUMER", SyncConsumer(g)},
       {"RAISE_FLAG", g.ops.Call("store_release_gpu", ptx::StoreReleaseGpu(),
                                 {{"address", "(unsigned long long)flag"}, {"value", "1u"}})},
       {"READ_FLAG", g.ops.Call("load_acquire_gpu", ptx::LoadAcquireGpu(),
                                {{"value", "raised"}, {"address", "(unsigned long long)flag"}})}});
}

std::string MbarrierInit(Generation& g, const std::string& barrier,
                         const std::string& count) {
  return g.ops.Call("mbarrier_init", ptx::MbarrierInit(),
                    {{"mbarrier", barrier}, {"count", count}});
}

std::string MbarrierWait(Generation& g, const std::string& barrier,
                         const std::string& phase) {
  return g.ops.Call("mbarrier_wait", ptx::MbarrierTryWaitParity(),
                    {{"mbarrier", barrier}, {"phase", phase}});
}

std::string ExpectBytes(Generation& g, const std::string& barrier) {
  const int bytes = (g.config.block_m + g.config.block_n) * g.config.block_k *
                    ptx::SizeInBytes(g.element);
  return g.ops.Call("mbarrier_arrive_expect_tx", ptx::MbarrierArriveExpectTx(),
                    {{"mbarrier", barrier}, {"tx_bytes", Unsigned(bytes)}});
}

TemplateValues CommonValues(Generation& g) {
  return {
      {"CONFIG", CodeName(g.config)},
      {"ELEMENT", std::string(ptx::PtxName(g.element))},
      {"KERNEL_SIGNATURE",
       Fill(g, "gemm_signature.cu",
            {{"THREADS", absl::StrCat(g.layout.threads)},
             {"KERNEL_NAME", KernelName(g.config, g.element)}})},
      {"BLOCK_M", absl::StrCat(g.config.block_m)},
      {"BLOCK_N", absl::StrCat(g.config.block_n)},
      {"BLOCK_K", absl::StrCat(g.config.block_k)},
      {"SHARED_BYTES", absl::StrCat(g.layout.shared_bytes)},
      {"SWIZZLE", std::string(ptx::SwizzleName(g.layout.swizzle))},
      {"ALIGNMENT", absl::StrCat(kSharedBaseAlignment)},
      {"BARRIER_OFFSET", absl::StrCat(g.layout.barrier_offset)},
      {"M_SLICES", absl::StrCat(g.layout.m_slices)},
      {"SLICE_ACCUMULATORS",
       absl::StrCat(g.layout.accumulators_per_thread / g.layout.m_slices)},
      {"FENCE_BARRIER_INIT",
       g.ops.Call("fence_mbarrier_init", ptx::FenceMbarrierInit(), {})},
      {"WGMMA_FENCE", g.ops.Call("wgmma_fence", ptx::WgmmaFence(), {})},
      {"WGMMA_COMMIT", g.ops.Call("wgmma_commit_group", ptx::WgmmaCommitGroup(), {})},
      {"STORE_FUNCTION", StoreFunction(g)},
  };
}

TemplateValues V1Values(Generation& g) {
  TemplateValues values = CommonValues(g);
  const TemplateValues specific = {
      {"A_OFFSET", "0"},
      {"B_OFFSET", absl::StrCat(g.layout.a_tile_bytes)},
      {"A_DESCRIPTOR", DescriptorExpression(g, g.layout.a_tile, "a_tile")},
      {"B_DESCRIPTOR", DescriptorExpression(g, g.layout.b_tile, "b_tile")},
      {"INIT_BARRIER", MbarrierInit(g, "barrier", "1u")},
      {"EXPECT_BYTES", ExpectBytes(g, "barrier")},
      {"LOAD_A", TmaLoad(g, "a_tile", "a_map_address", "k0", "m0", "barrier")},
      {"LOAD_B", TmaLoad(g, "b_tile", "b_map_address", "k0", "n0", "barrier")},
      {"WAIT_LOADS", MbarrierWait(g, "barrier", "phase")},
      {"PIN_ACCUMULATORS", PinAccumulators(g, 4)},
      {"MMA_BODY", MmaBody(g, 4, "1u")},
      {"WGMMA_WAIT", WaitGroup(g, 0)},
      {"EPILOGUE", DirectEpilogue(g)},
  };
  values.insert(specific.begin(), specific.end());
  return values;
}

// The producer's B load: the whole tile, or with a 2-CTA cluster this CTA's
// half, multicast into both CTAs at the same offset.
std::string LoadB(Generation& g) {
  if (g.config.cluster_m == 1) {
    return TmaLoad(g, "b_tile", "b_map_address", "kt * " + absl::StrCat(g.config.block_k),
                   "n0", "full");
  }
  const int half_rows = g.config.block_n / 2;
  const int half_bytes = half_rows * g.config.block_k * ptx::SizeInBytes(g.element);
  ptx::TensorLoad load;
  load.multicast = true;
  return g.ops.Call(
      "tma_load_2d_multicast", ptx::CpAsyncBulkTensorLoad(load),
      {{"dst", absl::StrCat("b_tile + rank * ", half_bytes, "u")},
       {"tensor_map", "b_map_address"},
       {"coords", absl::StrCat("{(unsigned)(kt * ", g.config.block_k,
                               "), (unsigned)(n0 + (int)rank * ", half_rows, ")}")},
       {"mbarrier", "full"},
       {"cta_mask", "(unsigned short)0x3"}});
}

// One arrival per consumer warp on the stage's empty barrier, in every CTA
// of the cluster (their producers multicast into this CTA's stage too).
// Relaxed: the consumers only read the stage, there is nothing to publish.
std::string ReleaseStage(Generation& g) {
  if (g.config.cluster_m == 1) {
    return absl::StrCat("          if (lane == 0) ",
                        g.ops.Call("mbarrier_arrive", ptx::MbarrierArrive(ptx::MbarrierScope::kCta),
                                   {{"mbarrier", "empty"}}));
  }
  return absl::StrCat(
      "          if (lane < ", g.config.cluster_m, ") {\n",
      "            unsigned peer_empty;\n            ",
      g.ops.Call("mapa_shared_cluster", ptx::MapaSharedCluster(),
                 {{"mapped", "peer_empty"}, {"address", "empty"}, {"cta_rank", "(unsigned)lane"}}),
      "\n            ",
      g.ops.Call("mbarrier_arrive_cluster",
                 ptx::MbarrierArrive(ptx::MbarrierScope::kClusterRelaxed),
                 {{"mbarrier", "peer_empty"}}),
      "\n          }");
}

std::string ClusterSync(Generation& g) {
  return absl::StrCat(
      "  ", g.ops.Call("barrier_cluster_arrive",
                       ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelease), {}),
      "\n  ", g.ops.Call("barrier_cluster_wait", ptx::BarrierClusterWait(), {}));
}

std::string SetMaxRegisters(Generation& g, ptx::RegisterAdjustment adjustment,
                            int count) {
  if (!g.layout.adjusts_registers) return "";
  const bool increase = adjustment == ptx::RegisterAdjustment::kIncrease;
  return absl::StrCat("    ", g.ops.Call(absl::StrCat("setmaxnreg_", increase ? "inc_" : "dec_", count),
                                         ptx::SetMaxNReg(adjustment, count), {}));
}

std::string TileOrderWords(const GemmConfig& config) {
  if (config.tile_order == TileOrder::kHilbert) return "along a Hilbert curve";
  return absl::StrCat("in groups of ", config.raster_group, " tile rows");
}

// The device function tile_of(t, cluster_rows, tiles_n, cluster_row, tile_n).
std::string TileOrderFunction(Generation& g) {
  if (g.config.tile_order == TileOrder::kHilbert) {
    return Fill(g, "gemm_tile_order_hilbert.cu", {});
  }
  return Fill(g, "gemm_tile_order_raster.cu", {});
}

TemplateValues WarpSpecializedValues(Generation& g) {
  const GemmConfig& config = g.config;
  const GemmLayout& layout = g.layout;
  const bool cluster = config.cluster_m > 1;
  const bool keep_one = config.mma_groups_in_flight == 1;
  const bool tma_store = config.epilogue == GemmEpilogue::kTmaStore;
  TemplateValues values = CommonValues(g);
  const TemplateValues specific = {
      {"STAGES", absl::StrCat(config.stages)},
      {"SCHEDULE_OFFSET", absl::StrCat(layout.schedule_offset)},
      {"CONSUMERS", absl::StrCat(config.consumers)},
      {"CLUSTER_M", absl::StrCat(config.cluster_m)},
      {"CLUSTER_WORDS", cluster ? " of both CTAs in the cluster" : ""},
      {"ROWS_PER_CONSUMER", absl::StrCat(layout.rows_per_consumer)},
      {"IN_FLIGHT", absl::StrCat(config.mma_groups_in_flight)},
      {"TILE_ORDER_WORDS", TileOrderWords(config)},
      {"TILE_ORDER", TileOrderFunction(g)},
      {"SCHEDULER", Fill(g, "gemm_scheduler.cu", {})},
      {"RASTER_GROUP", absl::StrCat(config.raster_group)},
      {"SPLIT_K", absl::StrCat(config.split_k)},
      {"STREAM_K", config.stream_k ? "true" : "false"},
      {"STREAM_K_WORDS",
       config.stream_k ? "; the tiles left after whole waves are shared out "
                         "by k-tiles (stream-K)"
                       : ""},
      {"SK_MAX_PIECES", absl::StrCat(kStreamKMaxPieces)},
      {"STREAM_K_FIXUP", StreamKFixup(g)},
      {"STAGE_BYTES", absl::StrCat(layout.stage_bytes)},
      {"A_TILE_BYTES", absl::StrCat(layout.a_tile_bytes)},
      {"CONSUMER_A_BYTES",
       absl::StrCat(config.consumers == 1
                        ? 0
                        : OperandOffset(g, layout.a_tile, layout.rows_per_consumer, 0))},
      {"C_TILE_LINE",
       tma_store ? absl::StrCat("C tile for the TMA store at +", layout.c_tile_offset,
                                " (", layout.c_tile_bytes, " bytes)")
                 : "no C tile: the epilogue stores from registers"},
      {"READ_CLUSTER_RANK",
       cluster ? absl::StrCat("  ", g.ops.Call("cluster_cta_rank", ptx::ClusterCtaRank(),
                                               {{"rank", "rank"}}))
               : ""},
      {"INIT_FULL", MbarrierInit(g, "barriers + 8u * s", "1u")},
      {"INIT_EMPTY", MbarrierInit(g, absl::StrCat("barriers + 8u * (s + ", config.stages, ")"),
                                  Unsigned(4 * config.consumers * config.cluster_m))},
      {"BLOCK_SYNC", cluster ? ClusterSync(g) : "  __syncthreads();"},
      {"PRODUCER_REGISTERS",
       SetMaxRegisters(g, ptx::RegisterAdjustment::kDecrease, kProducerRegisters)},
      {"CONSUMER_REGISTERS",
       SetMaxRegisters(g, ptx::RegisterAdjustment::kIncrease, layout.consumer_registers)},
      {"WAIT_EMPTY", MbarrierWait(g, "empty", "phase ^ 1u")},
      {"EXPECT_BYTES", ExpectBytes(g, "full")},
      {"LOAD_A", TmaLoad(g, "a_tile", "a_map_address",
                         "kt * " + absl::StrCat(config.block_k), "m0", "full")},
      {"LOAD_B", LoadB(g)},
      {"A_DESCRIPTOR", DescriptorExpression(g, ConsumerATile(g), "a_tile")},
      {"B_DESCRIPTOR", DescriptorExpression(g, layout.b_tile, "b_tile")},
      {"WAIT_FULL", MbarrierWait(g, "full", "phase")},
      {"PIN_ACCUMULATORS", PinAccumulators(g, 8)},
      {"MMA_BODY", MmaBody(g, 8, "accumulate")},
      {"WGMMA_WAIT_IN_LOOP", WaitGroup(g, config.mma_groups_in_flight)},
      {"MARK_CURRENT", keep_one ? "" : "released = stage;"},
      {"RELEASE_STAGE", ReleaseStage(g)},
      {"NEXT_RELEASED", keep_one ? "stage" : "-1"},
      {"WGMMA_WAIT_ALL", keep_one ? WaitGroup(g, 0) : ""},
      {"EPILOGUE", tma_store ? TmaEpilogue(g) : DirectEpilogue(g)},
      {"EPILOGUE_DRAIN",
       tma_store ? absl::StrCat("    if (thread == 0) ",
                                g.ops.Call("bulk_wait_group_0",
                                           ptx::CpAsyncBulkWaitGroup(0, false), {}))
                 : ""},
      {"TEARDOWN", cluster ? ClusterSync(g) : ""},
  };
  values.insert(specific.begin(), specific.end());
  return values;
}

// The TMA box that fills `tile` one column at a time, `rows` rows of it per
// load (a CTA of a cluster loads its share of B).
GemmTensorBox OperandBox(Generation& g, const ptx::SharedTile& tile, int rows) {
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  g.Check(layout.status());
  return GemmTensorBox{layout.ok() ? layout->box_inner_elements : 0, rows, tile.swizzle};
}

}  // namespace

std::string SplitKReduceKernelName(ptx::ScalarType element) {
  return absl::StrCat("ptxgen_gemm_reduce_", ptx::PtxName(element));
}

absl::StatusOr<std::string> SplitKReduceSource(ptx::ScalarType element) {
  GemmConfig config;  // only the element matters to the rounding
  Generation g{config, element, GemmLayout{}};
  TemplateValues values = RoundingValues(g);
  values["ELEMENT"] = std::string(ptx::PtxName(element));
  values["KERNEL_NAME"] = SplitKReduceKernelName(element);
  values["DEVICE_FUNCTIONS"] = g.ops.Definitions();
  const std::string source = Fill(g, "gemm_reduce.cu", values);
  g.Check(g.ops.status());
  if (!g.status.ok()) return g.status;
  return source;
}

absl::StatusOr<GeneratedGemm> GenerateGemm(const GemmConfig& config,
                                           ptx::ScalarType element) {
  if (absl::Status valid = ValidateGemmConfig(config, element); !valid.ok()) {
    return valid;
  }
  Generation g{config, element, PlanGemmLayout(config, element)};
  const bool v1 = config.schedule == GemmSchedule::kV1;
  const TemplateValues values = v1 ? V1Values(g) : WarpSpecializedValues(g);
  TemplateValues kernel_values = values;
  // Device functions are known only once every other slot was rendered.
  kernel_values["DEVICE_FUNCTIONS"] = g.ops.Definitions();
  const std::string source =
      Fill(g, v1 ? "gemm_v1.cu" : "gemm_ws.cu", kernel_values);
  g.Check(g.ops.status());
  if (!g.status.ok()) return g.status;

  GeneratedGemm gemm;
  gemm.kernel_name = KernelName(config, element);
  gemm.source = source;
  gemm.config = config;
  gemm.element = element;
  gemm.threads_per_block = g.layout.threads;
  gemm.shared_bytes = g.layout.shared_bytes;
  gemm.a_box = OperandBox(g, g.layout.a_tile, config.block_m);
  gemm.b_box = OperandBox(g, g.layout.b_tile, config.block_n / config.cluster_m);
  if (!g.status.ok()) return g.status;
  if (config.epilogue == GemmEpilogue::kTmaStore) {
    gemm.c_box = GemmTensorBox{kStoreChunkColumns, g.layout.rows_per_consumer,
                               ptx::Swizzle::k128B};
  }
  return gemm;
}

}  // namespace ptxgen::gen
