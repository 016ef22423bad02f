// Fills the GEMM templates of ptx_templates/ for one configuration: the
// instruction text comes from layer 1, the shared-memory plan from
// PlanGemmLayout, the descriptors from the tile layouts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/gen/common/device_ops.h"
#include "lib/gen/common/kernel_builder.h"
#include "lib/gen/common/kernel_parts.h"
#include "lib/gen/gemm/gemm_internal.h"
#include "lib/gen/gemm/tile_scheduler.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/gen/templates.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/global_flag.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/named_barrier.h"
#include "ptxgen/ptx/reduction.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

// Everything one generation needs: the builder (device functions,
// templates, errors as it goes) and the GEMM's plan.
struct Generation : KernelBuilder {
  Generation(const GemmConfig& config, const GemmForm& form,
             ptx::ScalarType element, GemmLayout layout)
      : config(config), form(form), element(element), layout(layout) {}

  const GemmConfig& config;
  const GemmForm& form;
  ptx::ScalarType element;  // A's and B's
  GemmLayout layout;
};

// "A K-major, 128B swizzle; B MN-major, 128B swizzle" for the header comment.
std::string TileWords(const Generation& g) {
  auto words = [](const ptx::SharedTile& tile) {
    return absl::StrCat(tile.major == ptx::MajorOrder::kK ? "K" : "MN",
                        "-major, ", ptx::SwizzleName(tile.swizzle), " swizzle");
  };
  return absl::StrCat("A ", words(g.layout.a_tile), "; B ",
                      words(g.layout.b_tile));
}

// The configuration without its launch policy (persistent or one CTA per
// tile), which does not change the code.
std::string CodeName(const GemmConfig& config) {
  GemmConfig code = config;
  code.persistent = true;
  std::string name = ConfigName(code);
  absl::StrReplaceAll({{" persistent", ""}}, &name);
  return name;
}

// The plain form keeps its short name; others name their form, spelled
// in identifier characters.
std::string KernelName(const GemmConfig& config, const GemmForm& form) {
  const std::string form_part =
      form == PlainForm(form.element)
          ? std::string(ptx::PtxName(form.element))
          : absl::StrReplaceAll(FormName(form),
                                {{".", "_"}, {"->", "_to_"}, {"+", "_"}});
  return absl::StrCat("ptxgen_gemm_", form_part, "_",
                      absl::StrReplaceAll(CodeName(config), {{" ", "_"}}));
}

// The operand tile one consumer reads: its rows of A, all of B.
ptx::SharedTile ConsumerATile(const Generation& g) {
  ptx::SharedTile tile = g.layout.a_tile;
  tile.mn_extent = g.layout.rows_per_consumer;
  return tile;
}

uint32_t OperandOffset(Generation& g, const ptx::SharedTile& tile, int mn,
                       int k) {
  absl::StatusOr<uint32_t> offset = ptx::TileOperandOffset(tile, mn, k);
  g.Check(offset.status());
  return offset.ok() ? *offset : 0;
}

// The pins of `array`'s slices, of `columns` columns each (the tile's
// block_n unless a promotion part's).
std::string PinAccumulators(Generation& g, int indent,
                            const std::string& array = "acc", int columns = 0) {
  if (columns == 0) columns = g.config.block_n;
  std::string text;
  const std::string name = absl::StrCat(
      "wgmma_pin_n", columns,
      AccumulatorType(g.form) == ptx::ScalarType::kS32 ? "_s32" : "");
  for (int s = 0; s < g.layout.m_slices; ++s) {
    absl::StrAppend(
        &text, std::string(indent, ' '),
        g.ops().Call(name,
                     ptx::WgmmaAccumulatorPin(AccumulatorType(g.form), columns),
                     {{"d", absl::StrCat(array, "[", s, "]")}}),
        "\n");
  }
  return text;
}

// The consumers' wgmma: one 64-row slice by `columns` of the tile's N
// (all of them unless a promotion part's), into the accumulators' type.
ptx::WgmmaMma ConsumerMma(const Generation& g, int columns = 0) {
  ptx::WgmmaMma mma;
  mma.n = columns == 0 ? g.config.block_n : columns;
  mma.a_type = g.element;
  mma.b_type = BElement(g.form);
  mma.d_type = AccumulatorType(g.form);
  mma.transpose_a = g.form.a_major == ptx::MajorOrder::kMN;
  mma.transpose_b = g.form.b_major == ptx::MajorOrder::kMN;
  return mma;
}

// The columns of the tile one wgmma of the stage covers.
struct MmaColumns {
  int first = 0;
  int count = 0;
};

// wgmma over one stage into `array`: every K step of the block, every
// 64-row slice, the tile's `columns`. The first K step scales the sums by
// `first_scale_d`, the others by 1.
std::string MmaBody(Generation& g, int indent, const std::string& array,
                    MmaColumns columns, const std::string& first_scale_d) {
  const ptx::WgmmaMma mma = ConsumerMma(g, columns.count);
  const std::string b_type = mma.b_type == mma.a_type
                                 ? ""
                                 : absl::StrCat("_", ptx::PtxName(mma.b_type));
  const std::string name =
      absl::StrCat("wgmma_m64n", mma.n, "_", ptx::PtxName(mma.d_type), "_",
                   ptx::PtxName(g.element), b_type,
                   mma.transpose_a ? "_ta" : "", mma.transpose_b ? "_tb" : "");
  const int instruction_k = *ptx::WgmmaK(g.element);
  const ptx::SharedTile a_tile = ConsumerATile(g);
  std::string text;
  for (int k = 0; k < g.config.block_k; k += instruction_k) {
    const uint32_t b_offset =
        OperandOffset(g, g.layout.b_tile, columns.first, k);
    for (int s = 0; s < g.layout.m_slices; ++s) {
      const uint32_t a_offset = OperandOffset(g, a_tile, s * ptx::kWgmmaM, k);
      absl::StrAppend(
          &text, std::string(indent, ' '),
          g.ops().Call(
              name, ptx::WgmmaMmaAsync(mma),
              {{"d", absl::StrCat(array, "[", s, "]")},
               {"a",
                absl::StrCat("a_desc + ", ptx::DescriptorAddressDelta(a_offset),
                             "ull")},
               {"b",
                absl::StrCat("b_desc + ", ptx::DescriptorAddressDelta(b_offset),
                             "ull")},
               {"scale_d", k == 0 ? first_scale_d : "1u"}}),
          "\n");
    }
  }
  return text;
}

std::string WaitGroup(Generation& g, int pending) {
  return g.ops().Call(absl::StrCat("wgmma_wait_group_", pending),
                      ptx::WgmmaWaitGroup(pending), {});
}

// The coordinates of a TMA box in a map of `rank`.
std::string TmaCoordinates(int rank, const std::string& contiguous,
                           const std::string& other) {
  return absl::StrCat("{(unsigned)(", contiguous, "), (unsigned)(", other, ")",
                      rank == 3 ? ", (unsigned)batch" : "", "}");
}

// One TMA box of an operand's map into `dst`, optionally multicast into
// both CTAs of the cluster.
std::string TmaLoad(Generation& g, GemmMapOperand operand,
                    const std::string& dst, const std::string& map,
                    const std::string& contiguous, const std::string& other,
                    const std::string& barrier, bool multicast = false) {
  ptx::TensorLoad load;
  load.rank = GemmMapRank(g.form, operand);
  load.multicast = multicast;
  DeviceOps::Arguments arguments = {
      {"dst", dst},
      {"tensor_map", map},
      {"coords", TmaCoordinates(load.rank, contiguous, other)},
      {"mbarrier", barrier}};
  if (multicast) arguments["cta_mask"] = "(unsigned short)0x3";
  return g.ops().Call(
      absl::StrCat("tma_load_", load.rank, "d", multicast ? "_multicast" : ""),
      ptx::CpAsyncBulkTensorLoad(load), arguments);
}

// The loads that fill an operand tile's rows [first_row, first_row +
// rows) in a stage: a K-major tile takes one box of those rows; an
// MN-major tile is cut into columns of its swizzle span, a box each, of
// which these rows are the columns starting at first_row. `mn0` and `k0`
// are the tile's origin in the operand.
std::string LoadOperand(Generation& g, GemmMapOperand operand,
                        const ptx::SharedTile& tile, const std::string& dst,
                        const std::string& map, const std::string& mn0,
                        const std::string& first_row,
                        const std::string& first_byte, int rows, bool multicast,
                        int indent) {
  const std::string pad(indent, ' ');
  if (tile.major == ptx::MajorOrder::kK) {
    return TmaLoad(g, operand, absl::StrCat(dst, first_byte), map, "k0",
                   absl::StrCat(mn0, first_row), "full", multicast);
  }
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  if (!layout.ok()) {
    g.Check(layout.status());
    return "";
  }
  std::string text;
  for (int row = 0; row < rows; row += layout->box_inner_elements) {
    const int column = row / layout->box_inner_elements;
    absl::StrAppend(&text, text.empty() ? "" : absl::StrCat("\n", pad),
                    TmaLoad(g, operand,
                            absl::StrCat(dst, first_byte, " + ",
                                         column * layout->column_bytes, "u"),
                            map, absl::StrCat(mn0, first_row, " + ", row), "k0",
                            "full", multicast));
  }
  return text;
}

std::string PackCall(Generation& g, const std::string& packed,
                     const std::string& high, const std::string& low) {
  return g.ops().Call(
      absl::StrCat("cvt_pack_", ptx::PtxName(g.form.output), "x2"),
      ptx::CvtPackFromF32x2(g.form.output),
      {{"packed", packed}, {"high", high}, {"low", low}});
}

// The rounding to the output type of a packed pair and of single values,
// as template slots.
TemplateValues RoundingValues(Generation& g) {
  const std::string round =
      absl::StrCat("cvt_round_", ptx::PtxName(g.form.output));
  const absl::StatusOr<ptx::Statement> statement =
      ptx::CvtRoundFromF32(g.form.output);
  return {
      {"PACK", PackCall(g, "packed", "high", "low")},
      {"ROUND_LOW",
       g.ops().Call(round, statement, {{"result", "value"}, {"value", "low"}})},
      {"ROUND_HIGH", g.ops().Call(round, statement,
                                  {{"result", "value"}, {"value", "high"}})}};
}

using PlanConstant = PlannedConstant;

// The planner the plan block's comment names.
constexpr char kPlanner[] = "gen::PlanGemmLayout";

// What every schedule plans: the tile, its accumulators, the shared base and
// the operand descriptors.
std::vector<PlanConstant> CommonPlan(Generation& g,
                                     const ptx::SharedTile& a_tile) {
  const GemmLayout& layout = g.layout;
  return {
      PlanInt("kBlockM", g.config.block_m),
      PlanInt("kBlockN", g.config.block_n),
      PlanInt("kBlockK", g.config.block_k),
      PlanInt("kWgmmaM", ptx::kWgmmaM),
      PlanInt("kMSlices", layout.m_slices),
      PlanInt("kRowsPerConsumer", layout.rows_per_consumer),
      PlanInt("kSliceAccumulators",
              layout.accumulators_per_thread / layout.m_slices),
      PlanInt("kPartAccumulators", layout.accumulators_per_thread /
                                       layout.m_slices /
                                       layout.promotion_parts),
      PlanBytes("kAlignment", kSharedBaseAlignment),
      PlanBytes("kBarrierOffset", layout.barrier_offset),
      PlanBytes("kStageTxBytes",
                (int64_t{g.config.block_m} + g.config.block_n) *
                    g.config.block_k * ptx::SizeInBytes(g.element)),
      {"unsigned long long", "kADescriptor", DescriptorFields(g, a_tile)},
      {"unsigned long long", "kBDescriptor",
       DescriptorFields(g, layout.b_tile)},
      // The direct store's: D stored [n, m], and an fp8 D of a scaled form
      // multiplied by scale_d.
      PlanBool("kDTransposed", g.form.d_transposed),
      PlanBool("kScalesD", ptx::IsFp8(g.form.output) &&
                               g.form.scaling == GemmScaling::kTensor),
  };
}

std::vector<PlanConstant> V1Plan(Generation& g) {
  std::vector<PlanConstant> plan = CommonPlan(g, g.layout.a_tile);
  plan.push_back(PlanBytes("kAOffset", 0));
  plan.push_back(PlanBytes("kBOffset", g.layout.a_tile_bytes));
  return plan;
}

std::vector<PlanConstant> WarpSpecializedPlan(Generation& g) {
  const GemmConfig& config = g.config;
  const GemmLayout& layout = g.layout;
  std::vector<PlanConstant> plan = CommonPlan(g, ConsumerATile(g));
  const int b_rows_per_cta = config.block_n / config.cluster_m;
  const std::vector<PlanConstant> specific = {
      PlanInt("kThreadsPerWarpgroup", kThreadsPerWarpgroup),
      PlanInt("kStages", config.stages),
      PlanInt("kConsumers", config.consumers),
      // Named barriers: 0 is the block's, then one per consumer for its own
      // threads, then one per consumer for its turns (ping-pong).
      PlanInt("kFirstConsumerBarrier", 1),
      PlanInt("kFirstTurnBarrier", 1 + config.consumers),
      PlanBool("kPingPong", config.schedule == GemmSchedule::kPingPong),
      PlanInt("kMmaGroupsInFlight", config.mma_groups_in_flight),
      PlanInt("kClusterM", config.cluster_m),
      PlanInt("kClusterCtas", ClusterCtas(config)),
      PlanInt("kSplitK", config.split_k),
      PlanBool("kSplitKInCluster", config.split_k_in_cluster),
      PlanBool("kStreamK", config.stream_k),
      PlanInt("kStreamKMaxPieces", kStreamKMaxPieces),
      PlanInt("kRasterGroup", config.raster_group),
      PlanBool("kBatched", g.form.batched),
      PlanBool("kGrouped", IsGrouped(g.form)),
      PlanBool("kContiguousGroups",
               g.form.grouping == GemmGrouping::kContiguous),
      PlanBool("kPromotes", PromotesAccumulators(g.form)),
      PlanBytes("kStageBytes", layout.stage_bytes),
      PlanBytes("kATileBytes", layout.a_tile_bytes),
      PlanBytes(
          "kConsumerABytes",
          layout.stage_readers == 1
              ? 0
              : OperandOffset(g, layout.a_tile, layout.rows_per_consumer, 0)),
      // With a 2-CTA cluster each CTA loads and multicasts its share of B.
      PlanInt("kBRowsPerCta", b_rows_per_cta),
      PlanBytes("kBBytesPerCta", int64_t{b_rows_per_cta} * config.block_k *
                                     ptx::SizeInBytes(g.element)),
      PlanBytes("kBarrierBytes", ptx::kMbarrierBytes),
      // One arrival per warp of the stage's readers in every CTA of the
      // cluster.
      PlanBytes("kEmptyArrivals", kThreadsPerWarpgroup / 32 *
                                      layout.stage_readers * config.cluster_m),
      PlanBytes("kScheduleOffset", layout.schedule_offset),
      PlanBytes("kScheduleBytes", kScheduleBytes),
  };
  plan.insert(plan.end(), specific.begin(), specific.end());
  if (config.epilogue == GemmEpilogue::kTmaStore) {
    const std::vector<PlanConstant> store = {
        PlanBytes("kCTileOffset", layout.c_tile_offset),
        PlanBytes("kConsumerCBytes",
                  layout.store_pass_chunks * layout.store_chunk_bytes),
        PlanInt("kStoreChunkColumns", kStoreChunkColumns),
        PlanInt("kStMatrixStepColumns", ptx::AccumulatorStMatrix::kStepColumns),
        PlanBytes("kStoreChunkBytes", layout.store_chunk_bytes),
        PlanBytes("kStoreRowBytes",
                  kStoreChunkColumns * ptx::SizeInBytes(g.form.output)),
        PlanInt("kStorePassChunks", layout.store_pass_chunks),
        PlanInt("kStorePasses", layout.store_passes),
    };
    plan.insert(plan.end(), store.begin(), store.end());
  }
  if (g.form.scaling == GemmScaling::kBlock) {
    absl::StatusOr<ptx::AccumulatorFragment> fragment =
        ptx::AccumulatorFragment::Of(ConsumerMma(g));
    g.Check(fragment.status());
    if (fragment.ok()) {
      plan.push_back(PlanInt("kScaleBlock", kScaleBlock));
      plan.push_back(PlanInt(
          "kScaleRowStep", RowsOfFragment(g, *fragment, "block scaling").step));
    }
  }
  if (config.stream_k) {
    plan.push_back(
        PlanInt("kFlagWordsPerCluster", StreamKFlagWordsPerCluster(config)));
  }
  if (config.split_k_in_cluster) {
    plan.push_back(PlanBytes("kPartialsOffset", layout.partials_offset));
    plan.push_back(
        PlanBytes("kConsumerPartialsBytes", layout.consumer_partials_bytes));
    // Every thread of the same consumer in each other CTA of the cluster.
    plan.push_back(PlanBytes("kReadyArrivals",
                             kThreadsPerWarpgroup * (config.split_k - 1)));
  }
  return plan;
}

// The accumulators' type for every part that holds them; stream-K and a
// split-K meeting move their bits in f32 words.
std::string AccumulatorDeclarations(const Generation& g) {
  const bool s32 = AccumulatorType(g.form) == ptx::ScalarType::kS32;
  std::string text =
      absl::StrCat("// The accumulators: wgmma's ",
                   s32 ? "exact s32 sums of the 8-bit integer products"
                       : "f32 sums of the products",
                   ".\ntypedef ", s32 ? "int" : "float", " Accumulator;\n");
  if (g.config.stream_k || g.config.split_k_in_cluster) {
    absl::StrAppend(
        &text,
        "// Their bits in the f32 words of a workspace or a partials buffer.\n"
        "__device__ __forceinline__ float accumulator_word(Accumulator value) "
        "{\n  return ",
        s32 ? "__int_as_float(value)" : "value",
        ";\n}\n"
        "__device__ __forceinline__ Accumulator accumulator_of_word(float "
        "word) {\n  return ",
        s32 ? "__float_as_int(word)" : "word", ";\n}\n");
  }
  return text;
}

// The store strategy's destination and its store_pair: D in the output
// type through the epilogue's transform (an s32 D: the sums as they are),
// or with split-K the f32 slice in the workspace.
std::string StoreFunction(Generation& g) {
  if (ReducesSlicesInWorkspace(g.config)) {
    return g.Fill("gemm_store_partial.cu", {});
  }
  const ptx::ScalarType output = g.form.output;
  const bool exact = output == ptx::ScalarType::kS32;
  const bool word = ptx::SizeInBytes(output) == 4;
  const bool byte = ptx::SizeInBytes(output) == 1;
  TemplateValues values = {
      {"OUTPUT_CTYPE", exact  ? "int"
                       : word ? "float"
                       : byte ? "unsigned char"
                              : "unsigned short"},
      {"VALUE_TYPE", exact ? "Accumulator" : "float"},
      {"TRANSFORM",
       exact ? ""
             : "  low = epilogue_value(e, low, batch, row, column);\n"
               "  if (has_high) high = epilogue_value(e, high, batch, row, "
               "column + 1);\n"},
  };
  // D [m, n]: the pair is adjacent; D stored [n, m]: a row of it apart.
  const bool transposed = g.form.d_transposed;
  const std::string high = transposed ? "out[destination.ldd]" : "out[1]";
  if (word) {
    values["STORE_BOTH"] = exact
                               ? "    *(int2*)out = make_int2(low, high);"
                               : "    *(float2*)out = make_float2(low, high);";
    values["STORE_LOW"] = "  out[0] = low;";
    values["STORE_HIGH"] = absl::StrCat("    ", high, " = high;");
  } else {
    // 16-bit pairs pack into 32 bits, 8-bit pairs into 16 (cvt's b16, whose
    // low byte is a single value's element).
    const TemplateValues rounding = RoundingValues(g);
    const std::string element = byte ? "(unsigned char)value" : "value";
    const std::string packed = byte ? "unsigned short" : "unsigned";
    values["STORE_BOTH"] =
        absl::StrCat("    ", packed, " packed;\n    ", rounding.at("PACK"),
                     "\n    *(", packed, "*)out = packed;");
    values["STORE_LOW"] =
        absl::StrCat("  unsigned short value;\n  ", rounding.at("ROUND_LOW"),
                     "\n  out[0] = ", element, ";");
    values["STORE_HIGH"] = absl::StrCat("    ", rounding.at("ROUND_HIGH"),
                                        "\n    ", high, " = ", element, ";");
  }
  const std::string value_function =
      exact ? "" : absl::StrCat(EpilogueValueFunction(g.form, g.ops()), "\n");
  return absl::StrCat(value_function, g.Fill("gemm_store_pair.cu", values));
}

// Where accumulator acc[slice][reg] lies from the thread's first
// (accumulator_row/column(thread, 0)): layer 1's host coordinate of the
// register, in the slice's 64 rows.
struct AccumulatorPlace {
  int slice, reg, row, column;
};

// Every `step`-th register of every slice of the consumer's accumulators.
std::vector<AccumulatorPlace> AccumulatorPlaces(
    Generation& g, const ptx::AccumulatorFragment& fragment, int step) {
  std::vector<AccumulatorPlace> places;
  for (int s = 0; s < g.layout.m_slices; ++s) {
    for (int i = 0; i < fragment.registers(); i += step) {
      const absl::StatusOr<ptx::FragmentCoordinate> at =
          fragment.Coordinate(0, i);
      if (!at.ok()) {
        g.Check(at.status());
        return {};
      }
      places.push_back({s, i, s * ptx::kWgmmaM + at->row, at->column});
    }
  }
  return places;
}

// The direct strategy: one store_pair per accumulator pair (a register and
// the next, one column to the right) where layer 1's fragment layout puts
// it. The layout is separable: the thread's position comes from its device
// functions, accumulator_row/column(thread, 0), each register's offset from
// its host coordinate, Coordinate(0, register).
std::string DirectEpilogue(Generation& g) {
  absl::StatusOr<ptx::AccumulatorFragment> fragment =
      ptx::AccumulatorFragment::Of(ConsumerMma(g));
  if (!fragment.ok()) {
    g.Check(fragment.status());
    return "";
  }
  std::string stores;
  for (const AccumulatorPlace& at : AccumulatorPlaces(g, *fragment, 2)) {
    absl::StrAppendFormat(
        &stores,
        "  store_pair(out, e, batch, row + %d, column + %d, acc[%d][%d], "
        "acc[%d][%d], pair_stores);\n",
        at.row, at.column, at.slice, at.reg, at.slice, at.reg + 1);
  }
  return absl::StrCat(fragment->DeviceFunctions(), "\n",
                      g.Fill("gemm_epilogue_direct.cu", {{"STORES", stores}}));
}

// What the TMA store stages of accumulator `reg` of slice s: alpha times
// it, or with epilogue ops their transform at its place in the tile.
std::string TmaStoreValue(const Generation& g, const std::string& reg) {
  const std::string value = absl::StrCat("acc[s][", reg, "]");
  if (!HasEpilogueOps(g.form)) return absl::StrCat("e.alpha * ", value);
  return absl::StrCat(
      "tma_value(e, ", value,
      ", batch, m0 + s * plan::kWgmmaM + accumulator_row(thread, ", reg,
      "), n0 + accumulator_column(thread, ", reg, "))");
}

// The transform of the TMA store: epilogue_value everywhere, with C and the
// bias read at the nearest place inside m x n. The store clips what lies
// outside, and without a branch per value their latencies overlap (checked
// and branching, a fused GELU made the GEMM 15-25% slower).
// Without epilogue ops the amax of D still reads epilogue_value.
std::string TmaStoreTransform(Generation& g,
                              const ptx::AccumulatorFragment& fragment) {
  if (!HasEpilogueOps(g.form) && !g.form.records_amax) return "";
  std::string functions =
      absl::StrCat(fragment.DeviceFunctions(), "\n",
                   EpilogueValueFunction(g.form, g.ops()), "\n");
  if (!HasEpilogueOps(g.form)) return functions;
  return absl::StrCat(functions,
                      "__device__ __forceinline__ float tma_value(const "
                      "EpilogueArgs& e, float value,\n"
                      "    int batch, int row, int column) {\n"
                      "  return epilogue_value(e, value, batch, min(row, e.m - "
                      "1), min(column, e.n - 1));\n"
                      "}\n\n");
}

// The TMA-store strategy: stmatrix.x4 stages the accumulators where the
// layout's device functions say (the row each lane addresses, the registers
// each value packs).
std::string TmaEpilogue(Generation& g) {
  const ptx::StMatrix stmatrix;  // .x4, not transposed
  absl::StatusOr<ptx::AccumulatorFragment> fragment =
      ptx::AccumulatorFragment::Of(ConsumerMma(g));
  absl::StatusOr<ptx::AccumulatorStMatrix> layout =
      fragment.ok()
          ? ptx::AccumulatorStMatrix::Of(*fragment, stmatrix)
          : absl::StatusOr<ptx::AccumulatorStMatrix>(fragment.status());
  if (!layout.ok()) {
    g.Check(layout.status());
    return "";
  }
  DefineNamedBarrierSync(g);
  g.ops().Define("bulk_wait_group_read_0", ptx::CpAsyncBulkWaitGroup(0, true));
  g.ops().Define("fence_proxy_async_shared", ptx::FenceProxyAsyncSharedCta());
  g.ops().Define("bulk_commit_group", ptx::CpAsyncBulkCommitGroup());
  g.ops().Define("bulk_wait_group_0", ptx::CpAsyncBulkWaitGroup(0, false));
  g.ops().Define("ld_shared_v4_b32", ptx::LoadSharedB32x4());
  // Where the staging buffer keeps a byte of a chunk: its rows 128B-swizzled.
  const std::string swizzle = absl::StrCat(
      "// Where the staging buffer keeps byte `offset` of a chunk.\n"
      "__device__ __forceinline__ unsigned swizzled(unsigned offset) {\n"
      "  return ",
      ptx::SwizzleOffsetExpression("offset", ptx::Swizzle::k128B), ";\n}\n\n");
  ptx::TensorStore store;
  store.rank = GemmMapRank(g.form, GemmMapOperand::kD);
  return absl::StrCat(
      layout->DeviceFunctions(), "\n", swizzle, TmaStoreTransform(g, *fragment),
      g.Fill(
          "gemm_epilogue_tma.cu",
          {{"PACK", PackCall(g, "values[q]",
                             TmaStoreValue(g, "stmatrix_register(c, q, 1)"),
                             TmaStoreValue(g, "stmatrix_register(c, q, 0)"))},
           {"STORE_MATRIX",
            g.ops().Call("stmatrix_x4", ptx::StMatrixSharedB16(stmatrix),
                         {{"address", "c_tile + swizzled(offset)"},
                          {"values", "values"}})},
           {"STORE_CHUNK",
            g.ops().Call(
                absl::StrCat("tma_store_", store.rank, "d"),
                ptx::CpAsyncBulkTensorStore(store),
                {{"tensor_map", "e.d_map_address"},
                 {"coords",
                  TmaCoordinates(store.rank,
                                 "n0 + plan::kStoreChunkColumns * "
                                 "(pass * plan::kStorePassChunks + chunk)",
                                 "m0")},
                 {"src", "c_tile + chunk * plan::kStoreChunkBytes"}})}}));
}

std::string StreamKFixup(Generation& g) {
  DefineNamedBarrierSync(g);
  g.ops().Define("store_release_gpu", ptx::StoreReleaseGpu());
  g.ops().Define("load_acquire_gpu", ptx::LoadAcquireGpu());
  return g.Fill("gemm_stream_k_fixup.cu", {});
}

// The partials' handover between the CTAs of a cluster (split-K meeting in
// a cluster). Arrivals release at cluster scope and waits acquire at it:
// the partial sums and the reads of them cross CTAs.
std::string SplitKMeeting(Generation& g) {
  g.ops().Define("mbarrier_init", ptx::MbarrierInit());
  g.ops().Define("mapa_shared_cluster", ptx::MapaSharedCluster());
  g.ops().Define("mbarrier_arrive_cluster_release",
                 ptx::MbarrierArrive(ptx::MbarrierScope::kCluster));
  g.ops().Define("mbarrier_wait_cluster",
                 ptx::MbarrierTryWaitParity(ptx::MbarrierWaitScope::kCluster));
  g.ops().Define("ld_shared_cluster_v4_f32", ptx::LoadSharedClusterF32x4());
  return g.Fill("gemm_split_k_meeting.cu", {});
}

// The parameter table as the builder renders it.
std::vector<KernelParameterText> ParameterTexts() {
  std::vector<KernelParameterText> texts;
  for (const GemmKernelParameterSpec& spec : GemmKernelParameters()) {
    texts.push_back({spec.declaration, spec.meaning});
  }
  return texts;
}

// The kernel's signature and its comment, from the parameter table.
std::string GemmSignature(Generation& g) {
  return KernelSignature(KernelName(g.config, g.form), g.layout.threads,
                         ParameterTexts());
}

std::string GemmParameterDocs() {
  return ParameterDocs("gen::GemmKernelParameters", ParameterTexts());
}

// Block scaling's promotion of part `part`: each register of the sums
// times its row's scale of A and its column block's of B. The boundary
// between the two column blocks (b_split) is a multiple of 8 (block_n's
// multiples mod 128 are), so a register's block is that of thread 0's
// column of it: the fragment gives each thread its columns 8 at a time.
std::string AddBlockScaledSums(Generation& g, int part) {
  absl::StatusOr<ptx::AccumulatorFragment> fragment =
      ptx::AccumulatorFragment::Of(ConsumerMma(g));
  if (!fragment.ok()) {
    g.Check(fragment.status());
    return "";
  }
  const FragmentRows rows = RowsOfFragment(g, *fragment, "block scaling");
  const int registers = fragment->registers() / g.layout.promotion_parts;
  const bool aligned = TilesAlignToScaleBlocks(g.config);
  bool reads_first = !aligned, reads_second = !aligned;
  std::string adds;
  for (int i = 0; i < registers && !rows.row_of_register.empty(); ++i) {
    const int reg = part * registers + i;
    const absl::StatusOr<ptx::FragmentCoordinate> at =
        fragment->Coordinate(0, reg);
    if (!at.ok()) {
      g.Check(at.status());
      return "";
    }
    const int half = rows.row_of_register[reg];
    // Tiles of whole column blocks start at one: their registers' blocks
    // are known here.
    std::string scale = absl::StrFormat(
        "(%d < b_split ? first[%d] : second[%d])", at->column, half, half);
    if (aligned) {
      const bool first = at->column < kScaleBlock;
      (first ? reads_first : reads_second) = true;
      scale = absl::StrFormat("%s[%d]", first ? "first" : "second", half);
    }
    absl::StrAppendFormat(&adds, "    acc[s][%d] += stage_sums[s][%d] * %s;\n",
                          reg, i, scale);
  }
  // Each row's scale times a column block's, declared where a register
  // reads it (an unread one draws a warning).
  auto products = [](const char* name, const char* b) {
    return absl::StrFormat(
        "    const float %s[2] = {scales.a[s][0] * scales.%s,\n"
        "                         scales.a[s][1] * scales.%s};\n",
        name, b, b);
  };
  const std::string declared =
      absl::StrCat(reads_first ? products("first", "b_first") : "",
                   reads_second ? products("second", "b_second") : "");
  return absl::StrCat(
      "#pragma unroll\n  for (int s = 0; s < plan::kMSlices; ++s) {\n",
      declared, adds, "  }\n");
}

// accumulate_stage: a stage's products into the tile's accumulators, by
// wgmma itself or promoted (PromotesAccumulators), part after part of the
// tile's columns (GemmLayout::promotion_parts) through one set of sums;
// with block scaling, times each sum's scales.
std::string AccumulatePart(Generation& g) {
  if (!PromotesAccumulators(g.form)) return g.Fill("gemm_accumulate.cu", {});
  const bool block_scaled = g.form.scaling == GemmScaling::kBlock;
  const int columns = g.config.block_n / g.layout.promotion_parts;
  std::string parts;
  for (int part = 0; part < g.layout.promotion_parts; ++part) {
    absl::StrAppend(
        &parts, "  ", g.ops().Call("wgmma_fence", ptx::WgmmaFence(), {}), "\n",
        MmaBody(g, 2, "stage_sums", {part * columns, columns}, "0u"), "  ",
        g.ops().Call("wgmma_commit_group", ptx::WgmmaCommitGroup(), {}), "\n  ",
        WaitGroup(g, 0), "\n", PinAccumulators(g, 2, "stage_sums", columns),
        block_scaled
            ? AddBlockScaledSums(g, part)
            : absl::StrCat("  add_stage_sums(acc, stage_sums, ", part, ");\n"));
  }
  if (!block_scaled) {
    return g.Fill("gemm_accumulate_promoted.cu", {{"PARTS", parts}});
  }
  return g.Fill("gemm_accumulate_block_scaled.cu", {{"PARTS", parts}});
}

// tile_scales and stage_scales after the tile's location (locate_tile),
// before the consumer reads them: the block scales where the form has
// them, else stand-ins that read nothing (the consumer's text is one).
std::string BlockScalesPart(Generation& g) {
  if (g.form.scaling != GemmScaling::kBlock) {
    return g.Fill("gemm_unscaled_blocks.cu", {});
  }
  return g.Fill("gemm_block_scales.cu",
                {{"THREAD_ROW", ptx::AccumulatorFragment::RowExpression(
                                    ptx::IndexExpression::Variable("thread"), 0)
                                    .Render()}});
}

// apply_tensor_scales(acc, e) where the form scales its tensors.
std::string TensorScalesPart(Generation& g) {
  if (g.form.scaling != GemmScaling::kTensor) return "";
  return g.Fill("gemm_tensor_scales.cu", {});
}

// record_amax(acc, e, batch, m0, n0, thread) where the form records the
// amax of D: each accumulator where layer 1's fragment layout puts it, as
// the direct store does. After the store part, whose epilogue_value and
// accumulator positions it reads.
std::string RecordAmaxPart(Generation& g) {
  if (!g.form.records_amax) return "";
  absl::StatusOr<ptx::AccumulatorFragment> fragment =
      ptx::AccumulatorFragment::Of(ConsumerMma(g));
  if (!fragment.ok()) {
    g.Check(fragment.status());
    return "";
  }
  std::string inside, clipped;
  for (const AccumulatorPlace& at : AccumulatorPlaces(g, *fragment, 1)) {
    const std::string arguments = absl::StrFormat(
        "(e, amax, acc[%d][%d], batch, row + %d, column + %d);\n", at.slice,
        at.reg, at.row, at.column);
    absl::StrAppend(&inside, "    amax = raised_amax", arguments);
    absl::StrAppend(&clipped, "    amax = raised_amax_inside_m_n", arguments);
  }
  g.ops().Define("redux_sync_max_u32", ptx::ReduxSyncMaxU32());
  g.ops().Define("red_global_max_u32", ptx::RedGlobalMaxU32());
  return g.Fill("gemm_record_amax.cu",
                {{"RAISE_INSIDE", inside}, {"RAISE_CLIPPED", clipped}});
}

// What a finished tile goes through before its store (indented as in the
// templates): the per-tensor scales, then the amax of D, with the epilogue
// arguments `args` (the tile's: a group's rows end early).
std::string FinishTile(const Generation& g, int indent,
                       const std::string& thread, const std::string& args) {
  const std::string pad(indent, ' ');
  std::string text;
  if (g.form.scaling == GemmScaling::kTensor) {
    absl::StrAppend(&text, pad, "apply_tensor_scales(acc, ", args, ");\n");
  }
  if (g.form.records_amax) {
    absl::StrAppend(&text, pad, "record_amax(acc, ", args, ", batch, m0, n0, ",
                    thread, ");\n");
  }
  return text;
}

// mma_stage: one stage's wgmma into the tile's accumulators, unless the
// form promotes them (promotion issues its own wgmma, part by part).
std::string MmaStagePart(Generation& g) {
  if (PromotesAccumulators(g.form)) return "";
  g.ops().Define("wgmma_fence", ptx::WgmmaFence());
  g.ops().Define("wgmma_commit_group", ptx::WgmmaCommitGroup());
  return absl::StrCat(
      g.Fill("gemm_mma.cu",
             {{"PIN_ACCUMULATORS", PinAccumulators(g, 2)},
              {"MMA_BODY",
               MmaBody(g, 2, "acc", {0, g.config.block_n}, "scale_d")}}),
      "\n");
}

// The parts shared by both schedules: the descriptor, the tensor-core step
// and the direct store strategy.
std::string MmaPart(Generation& g) {
  return absl::StrCat(MatrixDescriptorFunction(), "\n", MmaStagePart(g),
                      AccumulatePart(g), TensorScalesPart(g));
}

std::string TileOrderWords(const GemmConfig& config) {
  if (config.tile_order == TileOrder::kHilbert) return "along a Hilbert curve";
  return absl::StrCat("in groups of ", config.raster_group, " tile rows");
}

// The header comment's account of this kernel: its configuration, form and
// operand tiles; a warp-specialized one's tile order and C tile.
std::string Summary(const Generation& g) {
  std::string text = absl::StrCat(
      "// ", CodeName(g.config), ", ", FormName(g.form), ": ",
      ptx::PtxName(g.element), " in, ", ptx::PtxName(AccumulatorType(g.form)),
      " accumulation.\n// Operand tiles: ", TileWords(g), ".");
  if (g.config.schedule == GemmSchedule::kV1) return text;
  absl::StrAppend(&text, "\n// Tile order: ", TileOrderWords(g.config), "; ",
                  g.config.epilogue == GemmEpilogue::kTmaStore
                      ? absl::StrCat("a C tile of ", g.layout.c_tile_bytes,
                                     " bytes for the TMA store")
                      : "no C tile (the epilogue stores from registers)",
                  ".");
  return text;
}

std::string V1Source(Generation& g) {
  DefineRingBarriers(g);
  g.ops().Define("wgmma_wait_group_0", ptx::WgmmaWaitGroup(0));
  const std::string parts = absl::StrCat(
      AccumulatorDeclarations(g), "\n", g.Fill("gemm_epilogue_args.cu", {}),
      "\n", MmaPart(g), "\n", StoreFunction(g), "\n", DirectEpilogue(g),
      g.form.records_amax ? "\n" : "", RecordAmaxPart(g));
  TemplateValues values = {
      {"SUMMARY", Summary(g)},
      {"FINISH_TILE", FinishTile(g, 2, "threadIdx.x", "out")},
      {"PARAMETER_DOCS", GemmParameterDocs()},
      {"PLAN", KernelBuilder::kPlanMarker},
      {"PARTS", parts},
      {"KERNEL_SIGNATURE", GemmSignature(g)},
      {"LOAD_A",
       LoadOperand(g, GemmMapOperand::kA, g.layout.a_tile, "a_tile",
                   "a_map_address", "m0", "", "", g.config.block_m, false, 6)},
      {"LOAD_B",
       LoadOperand(g, GemmMapOperand::kB, g.layout.b_tile, "b_tile",
                   "b_map_address", "n0", "", "", g.config.block_n, false, 6)},
      {"PIN_ACCUMULATORS", PinAccumulators(g, 4)},
  };
  // Device functions are known only once every other slot was rendered.
  values["DEVICE_FUNCTIONS"] = g.ops().Definitions();
  return g.Fill("gemm_v1.cu", values);
}

// The kernel source with its plan block, and the plan it holds.
struct PlannedSource {
  std::string source;
  std::vector<PlanConstant> plan;
};

PlannedSource V1PlannedSource(Generation& g) {
  PlannedSource planned{V1Source(g), {}};
  planned.plan =
      KernelBuilder::PlaceThePlan(V1Plan(g), kPlanner, planned.source);
  return planned;
}

// The producer's B load: the whole tile, or with a 2-CTA cluster this CTA's
// share, multicast into both CTAs at the same offset.
std::string LoadB(Generation& g) {
  if (g.config.cluster_m == 1) {
    return LoadOperand(g, GemmMapOperand::kB, g.layout.b_tile, "b_tile",
                       "b_map_address", "n0", "", "", g.config.block_n, false,
                       6);
  }
  return LoadOperand(g, GemmMapOperand::kB, g.layout.b_tile, "b_tile",
                     "b_map_address", "n0", " + (int)rank * plan::kBRowsPerCta",
                     " + rank * plan::kBBytesPerCta",
                     g.config.block_n / g.config.cluster_m, true, 6);
}

// barrier.cluster's arrive (release) and wait, which every CTA of a
// cluster passes together.
void DefineClusterBarrier(Generation& g) {
  g.ops().Define(
      "barrier_cluster_arrive",
      ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelease));
  g.ops().Define("barrier_cluster_wait", ptx::BarrierClusterWait());
}

std::string GemmSetMaxRegisters(Generation& g,
                                ptx::RegisterAdjustment adjustment, int count) {
  return g.layout.adjusts_registers ? SetMaxRegisters(g, adjustment, count)
                                    : "";
}

std::string ProducerPart(Generation& g) {
  return g.Fill("gemm_producer.cu",
                {{"LOAD_A", LoadOperand(g, GemmMapOperand::kA, g.layout.a_tile,
                                        "a_tile", "a_map_address", "m0", "", "",
                                        g.config.block_m, false, 6)},
                 {"LOAD_B", LoadB(g)}});
}

std::string ConsumerPart(Generation& g) {
  g.ops().Define("wgmma_wait_group_0", ptx::WgmmaWaitGroup(0));
  // Waits until at most kMmaGroupsInFlight wgmma groups are pending.
  g.ops().Define("wgmma_wait_in_flight",
                 ptx::WgmmaWaitGroup(g.config.mma_groups_in_flight));
  return g.Fill("gemm_consumer.cu",
                {{"PIN_ACCUMULATORS", PinAccumulators(g, 2)},
                 {"FINISH_TILE", FinishTile(g, 4, "thread", "tile_out")}});
}

std::string WarpSpecializedSource(Generation& g) {
  const GemmConfig& config = g.config;
  const GemmLayout& layout = g.layout;
  // The kernel body reads its CTA's rank and meets the cluster's other CTAs
  // under `if constexpr` on the plan.
  g.ops().Define("cluster_cta_rank", ptx::ClusterCtaRank());
  DefineClusterBarrier(g);
  const bool tma_store = config.epilogue == GemmEpilogue::kTmaStore;
  std::vector<std::string> parts = {
      AccumulatorDeclarations(g),
      g.Fill("gemm_epilogue_args.cu", {}),
      TileSchedulerPart(g, g.config),
      g.Fill("gemm_tile.cu", {}),
      PipelinePart(g, g.config.cluster_m),
      ProducerPart(g),
      MmaPart(g),
  };
  if (!tma_store) parts.push_back(StoreFunction(g));
  parts.push_back(tma_store ? TmaEpilogue(g) : DirectEpilogue(g));
  if (g.form.records_amax) parts.push_back(RecordAmaxPart(g));
  parts.push_back(g.Fill("gemm_meetings.cu", {}));
  if (config.stream_k) parts.push_back(StreamKFixup(g));
  if (config.split_k_in_cluster) parts.push_back(SplitKMeeting(g));
  parts.push_back(BlockScalesPart(g));
  parts.push_back(MmaTurnsPart(g));
  parts.push_back(ConsumerPart(g));
  TemplateValues values = {
      {"SUMMARY", Summary(g)},
      {"PARAMETER_DOCS", GemmParameterDocs()},
      {"PLAN", KernelBuilder::kPlanMarker},
      {"PARTS", absl::StrJoin(parts, "\n")},
      {"KERNEL_SIGNATURE", GemmSignature(g)},
      {"PRODUCER_REGISTERS",
       GemmSetMaxRegisters(g, ptx::RegisterAdjustment::kDecrease,
                           kProducerRegisters)},
      {"CONSUMER_REGISTERS",
       GemmSetMaxRegisters(g, ptx::RegisterAdjustment::kIncrease,
                           layout.consumer_registers)},
  };
  // Device functions are known only once every other slot was rendered.
  values["DEVICE_FUNCTIONS"] = g.ops().Definitions();
  return g.Fill("gemm_ws.cu", values);
}

PlannedSource WarpSpecializedPlannedSource(Generation& g) {
  PlannedSource planned{WarpSpecializedSource(g), {}};
  planned.plan = KernelBuilder::PlaceThePlan(WarpSpecializedPlan(g), kPlanner,
                                             planned.source);
  return planned;
}

// The TMA box that fills `tile`: a K-major tile in one box of `rows` rows
// (a CTA of a cluster loads its share of B), an MN-major one a column of
// its swizzle span at a time, all block_k rows of K.
GemmTensorBox OperandBox(Generation& g, GemmMapOperand operand,
                         const ptx::SharedTile& tile, int rows) {
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  g.Check(layout.status());
  const int outer = tile.major == ptx::MajorOrder::kK ? rows : tile.k_extent;
  return GemmTensorBox{layout.ok() ? layout->box_inner_elements : 0, outer,
                       tile.swizzle, GemmMapRank(g.form, operand)};
}

}  // namespace

const std::vector<GemmKernelParameterSpec>& GemmKernelParameters() {
  static const auto* const parameters =
      new std::vector<GemmKernelParameterSpec>{
          {GemmKernelParameter::kAMap,
           "const __grid_constant__ TensorMap a_map",
           "TMA map of A: (k, m[, batch]) K-major, (m, k[, batch]) MN-major"},
          {GemmKernelParameter::kBMap,
           "const __grid_constant__ TensorMap b_map",
           "TMA map of B: (k, n[, batch]) K-major, (n, k[, batch]) MN-major"},
          {GemmKernelParameter::kDMap,
           "const __grid_constant__ TensorMap d_map",
           "TMA map of D (n, m[, batch]), for the TMA-store epilogue"},
          {GemmKernelParameter::kD, "void* __restrict__ d",
           "D [m, n] (or stored [n, m]) per batch, for the direct epilogue"},
          {GemmKernelParameter::kC, "const void* c",
           "C [m, n] ([n, m] when D is) per batch (may be D)"},
          {GemmKernelParameter::kBias, "const void* __restrict__ bias",
           "the bias: m or n values per batch"},
          {GemmKernelParameter::kScaleA, "const float* __restrict__ scale_a",
           "A's per-tensor scale, or its block scales, when the form has them"},
          {GemmKernelParameter::kScaleB, "const float* __restrict__ scale_b",
           "B's per-tensor scale, or its block scales, when the form has them"},
          {GemmKernelParameter::kScaleD, "const float* __restrict__ scale_d",
           "D's per-tensor scale, when the form scales an fp8 D"},
          {GemmKernelParameter::kAmaxD, "float* __restrict__ amax_d",
           "the largest |D| before scale_d, when the form records it"},
          {GemmKernelParameter::kWorkspace, "float* __restrict__ workspace",
           "split-K slices or stream-K flags and partial sums"},
          {GemmKernelParameter::kGroupRows,
           "const int* __restrict__ group_rows",
           "grouped forms: per group its cumulative row end (contiguous) or "
           "its row count (masked)"},
          {GemmKernelParameter::kM, "int m",
           "rows of op(A) and D (grouped: of all groups, or of each)"},
          {GemmKernelParameter::kN, "int n", "columns of op(B) and D"},
          {GemmKernelParameter::kK, "int k", "the shared dimension"},
          {GemmKernelParameter::kBatch, "int batches",
           "GEMMs in the strided batch, or groups"},
          {GemmKernelParameter::kLdc, "long long ldc",
           "elements between stored rows of C"},
          {GemmKernelParameter::kLdd, "long long ldd",
           "elements between stored rows of D"},
          {GemmKernelParameter::kStrideC, "long long stride_c",
           "elements between batches of C"},
          {GemmKernelParameter::kStrideD, "long long stride_d",
           "elements between batches of D"},
          {GemmKernelParameter::kStrideBias, "long long stride_bias",
           "elements between batches of the bias (0: shared)"},
          {GemmKernelParameter::kAlpha, "float alpha", "scales A.B"},
          {GemmKernelParameter::kBeta, "float beta",
           "scales C, when the form reads it"},
          {GemmKernelParameter::kPairStores, "int pair_stores",
           "!= 0: one store per pair of adjacent columns of D [m, n] (ldd and "
           "stride_d even)"},
      };
  return *parameters;
}

std::string SplitKReduceKernelName(ptx::ScalarType element) {
  return absl::StrCat("ptxgen_gemm_reduce_", ptx::PtxName(element));
}

absl::StatusOr<std::string> SplitKReduceSource(ptx::ScalarType element) {
  GemmConfig config;  // only the element matters to the rounding
  const GemmForm form = PlainForm(element);
  Generation g{config, form, element, GemmLayout{}};
  TemplateValues values = RoundingValues(g);
  values["ELEMENT"] = std::string(ptx::PtxName(element));
  values["KERNEL_NAME"] = SplitKReduceKernelName(element);
  values["DEVICE_FUNCTIONS"] = g.ops().Definitions();
  const std::string source = g.Fill("gemm_reduce.cu", values);
  if (!g.status().ok()) return g.status();
  return source;
}

absl::StatusOr<GeneratedGemm> GenerateGemm(const GemmConfig& config,
                                           const GemmForm& form) {
  if (absl::Status valid = ValidateGemmConfigForForm(config, form);
      !valid.ok()) {
    return valid;
  }
  const GemmForm kernel = KernelForm(config, form);
  Generation g{config, kernel, kernel.element, PlanGemmLayout(config, kernel)};
  PlannedSource planned = config.schedule == GemmSchedule::kV1
                              ? V1PlannedSource(g)
                              : WarpSpecializedPlannedSource(g);
  if (!g.status().ok()) return g.status();

  GeneratedGemm gemm;
  gemm.kernel_name = KernelName(config, kernel);
  gemm.source = std::move(planned.source);
  gemm.plan = std::move(planned.plan);
  gemm.config = config;
  gemm.form = form;
  gemm.threads_per_block = g.layout.threads;
  gemm.shared_bytes = g.layout.shared_bytes;
  gemm.a_box =
      OperandBox(g, GemmMapOperand::kA, g.layout.a_tile, config.block_m);
  gemm.b_box = OperandBox(g, GemmMapOperand::kB, g.layout.b_tile,
                          config.block_n / config.cluster_m);
  if (!g.status().ok()) return g.status();
  if (config.epilogue == GemmEpilogue::kTmaStore) {
    gemm.d_box = GemmTensorBox{kStoreChunkColumns, g.layout.rows_per_consumer,
                               ptx::Swizzle::k128B,
                               GemmMapRank(form, GemmMapOperand::kD)};
  }
  return gemm;
}

absl::StatusOr<GeneratedGemm> GenerateGemm(const GemmConfig& config,
                                           ptx::ScalarType element) {
  return GenerateGemm(config, PlainForm(element));
}

}  // namespace ptxgen::gen
