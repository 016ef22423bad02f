// Fills the attention templates of ptx_templates/ for one configuration:
// the instruction text from layer 1, the wgmma operands' offsets and the
// fragments' rows from its tile and fragment layouts, the rest from the
// parts every warp-specialized kernel shares (kernel_parts.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/gen/common/kernel_builder.h"
#include "lib/gen/common/kernel_parts.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/special_function.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

// The producer warpgroup keeps the fewest registers setmaxnreg allows;
// the consumers share the rest.
constexpr int kProducerRegisters = 24;
// A consumer thread's registers beside S, P and O (addresses, the loop,
// the softmax's state): an estimate, checked against ptxas's report.
constexpr int kRegisterOverhead = 32;
constexpr int kBarrierBytes = 8;
// The maps' rank: (head_dim, rows, heads, batch).
constexpr int kMapRank = 4;

int ConsumerRegisters(const AttentionConfig& config) {
  return std::min(ptx::kMaxMaxNReg,
                  ConsumerRegisterShare(config.consumers, kProducerRegisters));
}

// A causal mask's blocks see more keys the later they lie: with fixed
// lengths a persistent grid takes them folded, two a turn, so that every
// turn has about as many keys. Variable lengths' tiles are uneven anyway
// and get a CTA each.
bool FoldsCausalBlocks(const AttentionConfig& config) {
  return config.causal && !config.variable_lengths;
}

int TilesPerTurn(const AttentionConfig& config) {
  return FoldsCausalBlocks(config) ? 2 : 1;
}

// S = Q·Kᵀ: a consumer's 64 rows by block_n keys, A and B from shared
// memory, both K-major (head_dim contiguous).
ptx::WgmmaMma ScoresMma(const AttentionConfig& config) {
  ptx::WgmmaMma mma;
  mma.n = config.block_n;
  mma.a_type = mma.b_type = config.element;
  mma.d_type = ptx::ScalarType::kF32;
  return mma;
}

// O += P·V: P from registers, V as B [keys][head_dim], MN-major.
ptx::WgmmaMma OutputMma(const AttentionConfig& config) {
  ptx::WgmmaMma mma = ScoresMma(config);
  mma.n = config.head_dim;
  mma.a_source = ptx::WgmmaASource::kRegisters;
  mma.transpose_b = true;
  return mma;
}

ptx::Swizzle HeadDimSwizzle(const AttentionConfig& config) {
  return SwizzleFor(config.head_dim * ptx::SizeInBytes(config.element));
}

// The CTA's Q block (its consumers' rows one after another), and the part
// of it one consumer reads.
ptx::SharedTile QTile(const AttentionConfig& config, int rows) {
  return {config.element, rows, config.head_dim, ptx::MajorOrder::kK,
          HeadDimSwizzle(config)};
}
// A K stage as S's B: block_n keys by head_dim, K-major.
ptx::SharedTile KTile(const AttentionConfig& config) {
  return {config.element, config.block_n, config.head_dim, ptx::MajorOrder::kK,
          HeadDimSwizzle(config)};
}
// A V stage as O's B: N = head_dim by K = block_n keys, head_dim
// contiguous (MN-major). Its bytes lie as a K stage's do.
ptx::SharedTile VTile(const AttentionConfig& config) {
  return {config.element, config.head_dim, config.block_n, ptx::MajorOrder::kMN,
          HeadDimSwizzle(config)};
}

struct AttentionLayout {
  int span_bytes = 0;  // a box's row: one swizzle span of head_dim
  int columns = 0;     // boxes across head_dim
  int q_column_bytes = 0;
  int kv_column_bytes = 0;
  int q_stage_bytes = 0;
  int kv_stage_bytes = 0;
  int q_offset = 0, k_offset = 0, v_offset = 0, barrier_offset = 0;
  int shared_bytes = 0;
};

absl::StatusOr<AttentionLayout> PlanLayout(const AttentionConfig& config) {
  const int block_m = kAttentionRowsPerConsumer * config.consumers;
  absl::StatusOr<ptx::TileLayout> q = ptx::DescribeTile(QTile(config, block_m));
  if (!q.ok()) return q.status();
  absl::StatusOr<ptx::TileLayout> k = ptx::DescribeTile(KTile(config));
  if (!k.ok()) return k.status();
  absl::StatusOr<ptx::TileLayout> v = ptx::DescribeTile(VTile(config));
  if (!v.ok()) return v.status();
  if (v->tile_bytes != k->tile_bytes || v->column_bytes != k->column_bytes) {
    return absl::InternalError(
        "attention: a V stage must lie in shared memory as a K stage does");
  }
  AttentionLayout layout;
  layout.span_bytes = q->span_bytes;
  layout.columns = q->columns;
  layout.q_column_bytes = q->column_bytes;
  layout.kv_column_bytes = k->column_bytes;
  const int alignment = std::max({q->alignment_bytes, k->alignment_bytes, 16});
  layout.q_stage_bytes = RoundUp(q->tile_bytes, alignment);
  layout.kv_stage_bytes = RoundUp(k->tile_bytes, alignment);
  layout.q_offset = 0;
  layout.k_offset = config.query_stages * layout.q_stage_bytes;
  layout.v_offset = layout.k_offset + config.stages * layout.kv_stage_bytes;
  layout.barrier_offset =
      layout.v_offset + config.stages * layout.kv_stage_bytes;
  // Each stage of the three rings has a full and an empty barrier.
  const int barriers = 2 * config.query_stages + 4 * config.stages;
  layout.shared_bytes =
      layout.barrier_offset + barriers * kBarrierBytes + kSharedBaseAlignment;
  return layout;
}

// Everything one generation needs.
struct Generation : KernelBuilder {
  Generation(const AttentionConfig& config, AttentionLayout layout)
      : config(config), layout(layout) {}

  const AttentionConfig& config;
  AttentionLayout layout;
};

// The offsets of a tile's wgmma operands along K, from row `mn`.
std::vector<uint32_t> OperandSteps(Generation& g, const ptx::SharedTile& tile,
                                   int mn) {
  std::vector<uint32_t> steps;
  const int k = ptx::WgmmaK(tile.type).value_or(16);
  for (int at = 0; at < tile.k_extent; at += k) {
    absl::StatusOr<uint32_t> offset = ptx::TileOperandOffset(tile, mn, at);
    g.Check(offset.status());
    steps.push_back(offset.value_or(0));
  }
  return steps;
}

// The lanes that share thread 0's row, which must be lanes 0..n-1 (a
// row's reductions shuffle among them).
int RowLanes(Generation& g, const ptx::AccumulatorFragment& fragment) {
  int lanes = 0;
  for (int thread = 0; thread < 32; ++thread) {
    absl::StatusOr<ptx::FragmentCoordinate> at = fragment.Coordinate(thread, 0);
    if (at.ok() && at->row == 0) {
      if (thread != lanes) {
        g.Check(absl::InternalError(
            "the lanes holding a row of S must be adjacent from lane 0"));
      }
      ++lanes;
    }
  }
  return lanes;
}

constexpr char kPlanner[] =
    "GenerateAttention, lib/gen/attention/attention_generator.cc";

std::vector<PlannedConstant> Plan(Generation& g) {
  const AttentionConfig& config = g.config;
  const AttentionLayout& layout = g.layout;
  const int block_m = kAttentionRowsPerConsumer * config.consumers;
  const ptx::SharedTile q_tile = QTile(config, block_m);
  const std::vector<uint32_t> q_steps = OperandSteps(g, q_tile, 0);
  // A consumer's rows lie at the same distance from the first in every
  // column of the block.
  uint32_t consumer_bytes = 0;
  if (config.consumers > 1) {
    const std::vector<uint32_t> consumer_steps =
        OperandSteps(g, q_tile, kAttentionRowsPerConsumer);
    consumer_bytes =
        consumer_steps.empty() ? 0 : consumer_steps[0] - q_steps[0];
    for (size_t i = 0; i < q_steps.size() && i < consumer_steps.size(); ++i) {
      if (consumer_steps[i] - q_steps[i] != consumer_bytes) {
        g.Check(absl::InternalError(
            "a consumer's Q rows must lie one distance from the first's"));
      }
    }
  }
  const int element_bytes = ptx::SizeInBytes(config.element);
  absl::StatusOr<ptx::AccumulatorFragment> scores =
      ptx::AccumulatorFragment::Of(ScoresMma(config));
  absl::StatusOr<ptx::AccumulatorFragment> output =
      ptx::AccumulatorFragment::Of(OutputMma(config));
  if (!scores.ok() || !output.ok()) {
    g.Check(scores.ok() ? output.status() : scores.status());
    return {};
  }
  const FragmentRows score_rows =
      RowsOfFragment(g, *scores, "the online softmax");
  const FragmentRows output_rows =
      RowsOfFragment(g, *output, "the online softmax");
  return {
      PlanInt("kHeadDim", config.head_dim),
      PlanInt("kHeadDimSteps", static_cast<int>(q_steps.size())),
      PlanInt("kBlockM", block_m),
      PlanInt("kBlockN", config.block_n),
      PlanInt("kRowsPerConsumer", kAttentionRowsPerConsumer),
      PlanInt("kThreadsPerWarpgroup", kThreadsPerWarpgroup),
      PlanInt("kStages", config.stages),
      PlanInt("kQueryStages", config.query_stages),
      PlanBool("kCausal", config.causal),
      PlanBool("kVariableLengths", config.variable_lengths),
      PlanBool("kPingPong", config.ping_pong),
      PlanBool("kFoldCausalBlocks", FoldsCausalBlocks(config)),
      PlanInt("kTilesPerTurn", TilesPerTurn(config)),
      PlanBytes("kAlignment", kSharedBaseAlignment),
      PlanBytes("kBarrierBytes", kBarrierBytes),
      PlanBytes("kEmptyArrivals", config.consumers * kThreadsPerWarpgroup / 32),
      PlanInt("kColumns", layout.columns),
      PlanInt("kBoxColumns", layout.span_bytes / element_bytes),
      PlanBytes("kSpanBytes", layout.span_bytes),
      PlanBytes("kQOffset", layout.q_offset),
      PlanBytes("kQStageBytes", layout.q_stage_bytes),
      PlanBytes("kQColumnBytes", layout.q_column_bytes),
      PlanBytes("kConsumerQBytes", consumer_bytes),
      PlanBytes("kKOffset", layout.k_offset),
      PlanBytes("kVOffset", layout.v_offset),
      PlanBytes("kKvStageBytes", layout.kv_stage_bytes),
      PlanBytes("kKvColumnBytes", layout.kv_column_bytes),
      PlanBytes("kQBarriersOffset", layout.barrier_offset),
      PlanBytes(
          "kKBarriersOffset",
          layout.barrier_offset + 2 * config.query_stages * kBarrierBytes),
      PlanBytes("kVBarriersOffset",
                layout.barrier_offset +
                    2 * (config.query_stages + config.stages) * kBarrierBytes),
      PlanBytes("kQTxBytes", block_m * config.head_dim * element_bytes),
      PlanBytes("kKvTxBytes", config.block_n * config.head_dim * element_bytes),
      {"unsigned long long", "kQDescriptor",
       DescriptorFields(g, QTile(config, kAttentionRowsPerConsumer))},
      {"unsigned long long", "kKDescriptor",
       DescriptorFields(g, KTile(config))},
      {"unsigned long long", "kVDescriptor",
       DescriptorFields(g, VTile(config))},
      PlanBytesArray("kQSteps", q_steps),
      PlanBytesArray("kKSteps", OperandSteps(g, KTile(config), 0)),
      PlanBytesArray("kVSteps", OperandSteps(g, VTile(config), 0)),
      PlanInt("kScoreRegisters", scores->registers()),
      PlanInt("kOutputRegisters", output->registers()),
      PlanInt("kPSlices",
              config.block_n / ptx::WgmmaK(config.element).value_or(16)),
      PlanInt("kOutputSteps",
              config.head_dim / ptx::AccumulatorStMatrix::kStepColumns),
      PlanIntArray("kScoreRow", score_rows.row_of_register),
      PlanIntArray("kOutputRow", output_rows.row_of_register),
      PlanInt("kRowStep", score_rows.step),
      PlanInt("kRowLanes", RowLanes(g, *scores)),
      PlanInt("kFirstConsumerBarrier", 1),
      PlanInt("kFirstTurnBarrier", 1 + config.consumers),
  };
}

std::string Summary(const Generation& g) {
  return absl::StrCat("// ", AttentionConfigName(g.config), ": ",
                      ptx::PtxName(g.config.element),
                      " in, f32 accumulation.\n",
                      "// Q, K and V blocks: head_dim in ", g.layout.columns,
                      " column(s) of ", g.layout.span_bytes, " bytes, ",
                      ptx::SwizzleName(HeadDimSwizzle(g.config)), " swizzle.");
}

// The instructions the parts call by name.
void DefineInstructions(Generation& g) {
  ptx::TensorLoad load;
  load.rank = kMapRank;
  g.ops().Define("tma_load_4d", ptx::CpAsyncBulkTensorLoad(load));
  ptx::TensorStore store;
  store.rank = kMapRank;
  g.ops().Define("tma_store_4d", ptx::CpAsyncBulkTensorStore(store));
  g.ops().Define("bulk_commit_group", ptx::CpAsyncBulkCommitGroup());
  g.ops().Define("bulk_wait_group_read_0", ptx::CpAsyncBulkWaitGroup(0, true));
  g.ops().Define("fence_proxy_async_shared", ptx::FenceProxyAsyncSharedCta());
  g.ops().Define("ld_shared_v4_b32", ptx::LoadSharedB32x4());
  g.ops().Define("stmatrix_x4", ptx::StMatrixSharedB16(ptx::StMatrix{}));
  g.ops().Define("wgmma_fence", ptx::WgmmaFence());
  g.ops().Define("wgmma_commit_group", ptx::WgmmaCommitGroup());
  g.ops().Define("wgmma_wait_group_0", ptx::WgmmaWaitGroup(0));
  g.ops().Define("wgmma_wait_group_1", ptx::WgmmaWaitGroup(1));
  g.ops().Define("wgmma_qk", ptx::WgmmaMmaAsync(ScoresMma(g.config)));
  g.ops().Define("wgmma_pv", ptx::WgmmaMmaAsync(OutputMma(g.config)));
  g.ops().Define(
      "wgmma_pin_scores",
      ptx::WgmmaAccumulatorPin(ptx::ScalarType::kF32, g.config.block_n));
  g.ops().Define(
      "wgmma_pin_output",
      ptx::WgmmaAccumulatorPin(ptx::ScalarType::kF32, g.config.head_dim));
  g.ops().Define("pack_probabilities", ptx::CvtPackFromF32x2(g.config.element));
  g.ops().Define("pack_output", ptx::CvtPackFromF32x2(g.config.element));
  g.ops().Define("exp2_approx", ptx::Ex2ApproxFtzF32());
  g.ops().Define("log2_approx", ptx::Lg2ApproxFtzF32());
}

// The layer-1 layouts the parts read as device functions: S's and O's
// accumulator fragment (one function pair serves both: the layout is
// separable, a register's place does not depend on N), S's registers as
// P's register A, O's accumulators through stmatrix, the staging swizzle.
std::string LayoutFunctions(Generation& g) {
  absl::StatusOr<ptx::AccumulatorFragment> scores =
      ptx::AccumulatorFragment::Of(ScoresMma(g.config));
  absl::StatusOr<ptx::AccumulatorFragment> output =
      ptx::AccumulatorFragment::Of(OutputMma(g.config));
  absl::StatusOr<ptx::RegisterAFragment> p =
      ptx::RegisterAFragment::Of(OutputMma(g.config));
  if (!scores.ok() || !output.ok() || !p.ok()) {
    g.Check(!scores.ok() ? scores.status()
                         : (!output.ok() ? output.status() : p.status()));
    return "";
  }
  absl::StatusOr<ptx::AccumulatorToRegisterA> conversion =
      ptx::AccumulatorToRegisterA::Of(*scores, *p);
  absl::StatusOr<ptx::AccumulatorStMatrix> staging =
      ptx::AccumulatorStMatrix::Of(*output, ptx::StMatrix{});
  if (!conversion.ok() || !staging.ok()) {
    g.Check(!conversion.ok() ? conversion.status() : staging.status());
    return "";
  }
  if (!conversion->KeepsColumnOrder()) {
    g.Check(absl::InternalError(
        "P's register A must take S's columns in order: V's keys are read "
        "as stored"));
  }
  return absl::StrCat(
      scores->DeviceFunctions(), "\n", conversion->DeviceFunctions(), "\n",
      staging->DeviceFunctions(), "\n", MatrixDescriptorFunction(), "\n",
      "// Where the staged O keeps byte `offset` of a column.\n"
      "__device__ __forceinline__ unsigned swizzled(unsigned offset) {\n"
      "  return ",
      ptx::SwizzleOffsetExpression("offset", HeadDimSwizzle(g.config)),
      ";\n}\n");
}

std::string KernelName(const AttentionConfig& config) {
  return absl::StrCat(
      "ptxgen_attention_", ptx::PtxName(config.element), "_d", config.head_dim,
      config.causal ? "_causal" : "", config.variable_lengths ? "_varlen" : "",
      "_", config.consumers, "x", kAttentionRowsPerConsumer, "_n",
      config.block_n, "_s", config.stages, config.query_stages > 1 ? "_q2" : "",
      config.ping_pong ? "_pp" : "");
}

std::vector<KernelParameterText> ParameterTexts() {
  std::vector<KernelParameterText> texts;
  for (const AttentionParameterText& text : AttentionKernelParameters()) {
    texts.push_back({text.declaration, text.meaning});
  }
  return texts;
}

std::string Source(Generation& g, int threads) {
  DefineInstructions(g);
  const std::string layout_functions = LayoutFunctions(g);
  std::vector<std::string> parts = {
      layout_functions,
      PipelinePart(g, 1),
      g.Fill("attention_tile.cu", {}),
      g.Fill("attention_producer.cu", {}),
      g.Fill("attention_softmax.cu", {}),
      g.Fill("attention_epilogue.cu", {}),
  };
  // Defined with or without ping-pong: its calls are compiled out by
  // `if constexpr`, which still looks their names up.
  parts.push_back(MmaTurnsPart(g));
  parts.push_back(g.Fill("attention_consumer.cu", {}));
  TemplateValues values = {
      {"SUMMARY", Summary(g)},
      {"PARAMETER_DOCS",
       ParameterDocs("AttentionKernelParameters()", ParameterTexts())},
      {"PLAN", KernelBuilder::kPlanMarker},
      {"PARTS", absl::StrJoin(parts, "\n")},
      {"KERNEL_SIGNATURE",
       KernelSignature(KernelName(g.config), threads, ParameterTexts())},
      {"PRODUCER_REGISTERS",
       SetMaxRegisters(g, ptx::RegisterAdjustment::kDecrease,
                       kProducerRegisters)},
      {"CONSUMER_REGISTERS",
       SetMaxRegisters(g, ptx::RegisterAdjustment::kIncrease,
                       ConsumerRegisters(g.config))},
  };
  // Device functions are known only once every other slot was rendered.
  values["DEVICE_FUNCTIONS"] = g.ops().Definitions();
  return g.Fill("attention.cu", values);
}

}  // namespace

std::string AttentionConfigName(const AttentionConfig& config) {
  return absl::StrCat(ptx::PtxName(config.element), " d", config.head_dim,
                      config.causal ? " causal" : "",
                      config.variable_lengths ? " varlen" : "", ": ",
                      config.consumers, "x", kAttentionRowsPerConsumer,
                      " rows, ", config.block_n, " keys, ", config.stages,
                      " stages", config.query_stages > 1 ? ", 2 Q stages" : "",
                      config.ping_pong ? ", ping-pong" : "");
}

absl::Status ValidateAttentionConfig(const AttentionConfig& config) {
  auto refuse = [&](const std::string& rule) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attention config ", AttentionConfigName(config), ": ", rule));
  };
  if (config.element != ptx::ScalarType::kF16 &&
      config.element != ptx::ScalarType::kBF16) {
    return refuse("the element must be f16 or bf16");
  }
  if (config.head_dim < 16 || config.head_dim > 256 ||
      config.head_dim % 16 != 0) {
    return refuse("head_dim must be a multiple of 16 in 16..256");
  }
  if (config.consumers < 1 || config.consumers > 3) {
    return refuse("consumers must be 1..3");
  }
  if (!ptx::IsLegalWgmmaN(config.element, config.block_n) ||
      config.block_n % 16 != 0) {
    return refuse(absl::StrCat(
        "block_n must be a wgmma N (", ptx::LegalWgmmaNText(config.element),
        ") and a multiple of 16 (P's register-A slices)"));
  }
  if (config.stages < 1 || config.stages > kMaxAttentionStages) {
    return refuse(absl::StrCat("stages must be 1..", kMaxAttentionStages));
  }
  if (config.query_stages < 1 || config.query_stages > 2) {
    return refuse("query_stages must be 1 or 2");
  }
  if (config.ping_pong && config.consumers != 2) {
    return refuse("ping-pong takes turns between exactly 2 consumers");
  }
  // S, P (16-bit: half as many) and O, beside the loop's state.
  const int registers = config.block_n / 2 + config.block_n / 4 +
                        config.head_dim / 2 + kRegisterOverhead;
  if (registers > ConsumerRegisters(config)) {
    return refuse(absl::StrCat(
        "a consumer thread would hold ", registers,
        " registers (S block_n/2, P block_n/4, O head_dim/2, and ",
        kRegisterOverhead, " more), over its ", ConsumerRegisters(config)));
  }
  return absl::OkStatus();
}

const std::vector<AttentionParameterText>& AttentionKernelParameters() {
  static const auto* const parameters = new std::vector<AttentionParameterText>{
      {AttentionKernelParameter::kQMap,
       "const __grid_constant__ TensorMap q_map",
       "TMA map of Q: (head_dim, rows, heads_q, batch)"},
      {AttentionKernelParameter::kKMap,
       "const __grid_constant__ TensorMap k_map",
       "TMA map of K: (head_dim, rows, heads_kv, batch)"},
      {AttentionKernelParameter::kVMap,
       "const __grid_constant__ TensorMap v_map",
       "TMA map of V: (head_dim, rows, heads_kv, batch)"},
      {AttentionKernelParameter::kOMap,
       "const __grid_constant__ TensorMap o_map",
       "TMA map of O: (head_dim, rows, heads_q, batch)"},
      {AttentionKernelParameter::kO, "void* __restrict__ o",
       "O itself, for rows stored one by one (variable lengths)"},
      {AttentionKernelParameter::kLse, "float* __restrict__ lse",
       "the log-sum-exp of each query row (null: not stored)"},
      {AttentionKernelParameter::kCuSeqlensQ,
       "const int* __restrict__ cu_seqlens_q",
       "variable lengths: each sequence's first row of Q, and the total"},
      {AttentionKernelParameter::kCuSeqlensK,
       "const int* __restrict__ cu_seqlens_k",
       "variable lengths: each sequence's first row of K and V, and the "
       "total"},
      {AttentionKernelParameter::kSeqQ, "int seq_q",
       "rows of Q per sequence, or with variable lengths the most a sequence "
       "may have"},
      {AttentionKernelParameter::kSeqK, "int seq_k",
       "rows of K and V per sequence (fixed lengths)"},
      {AttentionKernelParameter::kTotalQ, "int total_q",
       "variable lengths: the rows of Q and O, past which no sequence may "
       "end"},
      {AttentionKernelParameter::kTotalK, "int total_k",
       "variable lengths: the rows of K and V, past which no sequence may "
       "end"},
      {AttentionKernelParameter::kQueryBlocks, "int query_blocks",
       "blocks of query rows of the longest sequence"},
      {AttentionKernelParameter::kHeadsQ, "int heads_q", "query heads"},
      {AttentionKernelParameter::kBatch, "int batch", "sequences"},
      {AttentionKernelParameter::kHeadsPerKv, "int heads_per_kv",
       "query heads sharing one K/V head"},
      {AttentionKernelParameter::kOSeqStride, "long long o_seq_stride",
       "elements between rows of O"},
      {AttentionKernelParameter::kOHeadStride, "long long o_head_stride",
       "elements between heads of O"},
      {AttentionKernelParameter::kOBatchStride, "long long o_batch_stride",
       "elements between sequences of O"},
      {AttentionKernelParameter::kScaleLog2, "float scale_log2",
       "the softmax scale times log2(e)"},
  };
  return *parameters;
}

absl::StatusOr<int> AttentionSharedBytes(const AttentionConfig& config) {
  if (absl::Status valid = ValidateAttentionConfig(config); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<AttentionLayout> layout = PlanLayout(config);
  if (!layout.ok()) return layout.status();
  return layout->shared_bytes;
}

absl::StatusOr<GeneratedAttention> GenerateAttention(
    const AttentionConfig& config) {
  if (absl::Status valid = ValidateAttentionConfig(config); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<AttentionLayout> layout = PlanLayout(config);
  if (!layout.ok()) return layout.status();
  Generation g(config, *layout);
  const int threads = kThreadsPerWarpgroup * (1 + config.consumers);
  GeneratedAttention generated;
  generated.source = Source(g, threads);
  generated.plan =
      KernelBuilder::PlaceThePlan(Plan(g), kPlanner, generated.source);
  if (absl::Status status = g.status(); !status.ok()) return status;
  generated.kernel_name = KernelName(config);
  generated.config = config;
  generated.threads_per_block = threads;
  generated.shared_bytes = layout->shared_bytes;
  generated.block_m = kAttentionRowsPerConsumer * config.consumers;
  generated.box_columns = layout->span_bytes / ptx::SizeInBytes(config.element);
  generated.swizzle = HeadDimSwizzle(config);
  generated.q_box_rows = generated.block_m;
  generated.kv_box_rows = config.block_n;
  generated.o_box_rows = kAttentionRowsPerConsumer;
  generated.tiles_per_turn = TilesPerTurn(config);
  return generated;
}

}  // namespace ptxgen::gen
