#ifndef PTXGEN_GEN_GEMM_H_
#define PTXGEN_GEN_GEMM_H_

// GEMM kernel generation: D = A * B^T with A [M,K], B [N,K] and D [M,N], all
// row-major (other layouts and epilogues by GemmForm); f16, bf16, e4m3,
// e5m2 or tf32 inputs with f32 accumulation, s8 or u8 with s32. M, N and K
// are kernel arguments: one generated kernel serves every size.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/gen/planned_constant.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"

namespace ptxgen::gen {

// How a GEMM kernel's threads share the work.
enum class GemmSchedule {
  // The seed ("V1"): one warpgroup, one stage, load then compute.
  kV1,
  // A TMA producer warp and consumer warpgroups over a ring of stages with
  // full/empty barriers; a loop over output tiles (persistent when the grid
  // is smaller than the tile count). The consumers split each tile's rows
  // and run its main loop and its epilogue together ("ws", cooperative).
  kWarpSpecialized,
  // The same producer, ring and scheduler, but each of two consumers owns
  // whole tiles, every other piece of work ("pp"): they take turns at the
  // tensor cores, so that one's epilogue (and fp8 promotion) runs while
  // the other's main loop does.
  kPingPong,
};

// Whether a producer warpgroup feeds consumer warpgroups (ws and pp).
inline bool IsWarpSpecialized(GemmSchedule schedule) {
  return schedule == GemmSchedule::kWarpSpecialized ||
         schedule == GemmSchedule::kPingPong;
}

// The order in which a grid's CTAs take the output tiles (clusters of tiles
// with a 2-CTA cluster). CTAs that run at the same time should share
// operand tiles in L2.
enum class TileOrder {
  // Down the tile rows of a group of raster_group rows, one column after
  // another, group after group.
  kRaster,
  // Along a generalized Hilbert curve over the whole grid of tiles, so that
  // any run of consecutive tiles covers a compact patch of it. Measured 0-6%
  // slower than kRaster on the benchmark suite: callers name it, the
  // selector does not pick it.
  kHilbert,
};

// How the accumulators reach D.
enum class GemmEpilogue {
  kDirect,    // registers -> global memory, bounds-checked per element pair
  kTmaStore,  // registers -> swizzled shared tile (stmatrix) -> TMA store
};

// Stream-K's bound on the clusters sharing one tile: more even out the last
// wave better, but the piece ending a tile adds up every other piece's
// partial sums on its own.
inline constexpr int kStreamKMaxPieces = 4;

// The TMA-store epilogue writes C in chunks of this many columns: 128 bytes
// of f16/bf16, one row of the 128-byte swizzle.
inline constexpr int kStoreChunkColumns = 64;

// The deepest ring of shared-memory stages a warp-specialized GEMM may have.
inline constexpr int kMaxGemmStages = 8;

// The kernels take m, n and k as int: each is 1..2^31-1.
inline constexpr int64_t kMaxGemmDimension = (int64_t{1} << 31) - 1;

// The most tile rows a raster group may have: 32 x 256 rows already spread
// one wave of 132 SMs over more of A than L2 keeps, and the bound keeps the
// kernel's raster arithmetic in 32 bits for block_n >= 64.
inline constexpr int kMaxRasterGroup = 32;

// What a kernel computes, beside how it is scheduled (GemmConfig): the
// operands' layouts and types and the epilogue's operations, all compiled
// in. Sizes, leading dimensions, batch strides, alpha and beta are kernel
// arguments. kGeluTanh (cuBLASLt's GELU) takes tanh from the special-function
// unit (relative error about 2^-11) into a 16- or 8-bit D, tanhf into f32.
enum class Activation { kNone, kRelu, kGelu, kGeluTanh, kSilu };
enum class BiasAlong { kNone, kM, kN };

// How fp8 inputs carry their range: none; one f32 scale per tensor
// (device pointers the kernel reads, multiplied into alpha), as cuBLASLt's
// A/B scale pointers; or per block, DeepGEMM's recipe: A one f32 scale per
// row and kScaleBlock of k, B one per kScaleBlock x kScaleBlock block,
// each stage's sums multiplied by theirs as they are promoted
// (BlockScales: how they are stored).
enum class GemmScaling { kNone, kTensor, kBlock };

// Grouped GEMMs (mixture-of-experts layers): the batch's GEMMs are groups
// (experts) that share n and k, each with its own B (and bias, and B's
// block scales), whose rows are known only on the device: the kernel reads
// them from its group_rows array (int32 per group), so nothing about them
// is read on the host and a launch can be captured in a CUDA graph once
// and replayed with new counts.
enum class GemmGrouping {
  kNone,
  // m-grouped, contiguous: A [m, k] and D [m, n] (and C) hold every
  // group's rows, group after group; group g's are
  // [group_rows[g - 1], group_rows[g]) (group_rows[-1] = 0): cumulative row
  // ends, as torch._grouped_mm's offs.
  kContiguous,
  // Masked: A [groups, m, k] and D [groups, m, n] (and C), each group
  // using its first group_rows[g] rows of its m.
  kMasked,
};

// The side of a block-scaling block: 128 of k (one fp8 stage's block_k)
// for A's rows, 128 x 128 of B.
inline constexpr int kScaleBlock = 128;

// How the f32 block scales of a [batch] x m x n x k GEMM are stored, as
// DeepGEMM stores them: A's of row i and k-block kb of batch g at
// a[(g * k_blocks + kb) * m + i] (rows fastest: a stage reads one run of
// them), B's of column block jb at b[(g * n_blocks + jb) * k_blocks + kb].
// Blocks are kScaleBlock wide, the last of k and n ragged.
struct BlockScales {
  int64_t k_blocks = 0;
  int64_t n_blocks = 0;
  int64_t a_count = 0;  // floats of scale_a
  int64_t b_count = 0;  // floats of scale_b
};
BlockScales BlockScalesOf(int64_t m, int64_t n, int64_t k, int64_t batch);

// The operation itself: types, majors, epilogue ops, batching, D's layout.
struct GemmForm {
  ptx::ScalarType element = ptx::ScalarType::kF16;  // A (and B, unless set)
  // B's type where it differs from A's: fp8 mixes e4m3 and e5m2, integers
  // s8 and u8.
  std::optional<ptx::ScalarType> b_element;
  // C and D: f16, bf16, f32, or e4m3/e5m2 (D only, rounded with
  // saturation; with per-tensor scaling multiplied by scale_d first); from
  // s8/u8 inputs also s32 (D only: the exact sums) or s8 (D only: alpha
  // times the sums, rounded to nearest with saturation).
  ptx::ScalarType output = ptx::ScalarType::kF16;
  // kK: A stored [m, k] (B [n, k]); kMN: A stored [k, m] (B [k, n]).
  ptx::MajorOrder a_major = ptx::MajorOrder::kK;
  ptx::MajorOrder b_major = ptx::MajorOrder::kK;
  // D = act(alpha * A.B + beta * C + bias): reads_c compiles the beta * C
  // term in (a caller with beta = 0 never has C read).
  bool reads_c = false;
  BiasAlong bias = BiasAlong::kNone;  // one value per row (m) or column (n)
  ptx::ScalarType bias_type = ptx::ScalarType::kF32;
  Activation activation = Activation::kNone;
  // More than one GEMM per launch: the kernel finds each tile's batch (a
  // division the single-GEMM kernel does without).
  bool batched = false;
  // C and D stored [n, m] (D^T row-major, i.e. D column-major): what the
  // swapped kernel of a small-m GEMM writes (SwappedForm).
  bool d_transposed = false;
  GemmScaling scaling = GemmScaling::kNone;  // fp8 only; kBlock: 16/32-bit D
  // fp8: let wgmma accumulate every k-step in its own reduced-precision
  // accumulator. Without it each stage's products start afresh and are
  // added into f32 registers (promotion): exact f32 sums, twice the
  // accumulator registers and no wgmma group left in flight.
  bool fast_accumulation = false;
  // Raise the f32 at amax_d to the largest |D| before scale_d and rounding
  // (cuBLASLt's amax of D); the caller sets it to 0 before the launch.
  bool records_amax = false;
  // Grouped: the batch's GEMMs are groups whose rows the kernel reads from
  // group_rows (GemmGrouping); then `batched` is false, the groups are not
  // a strided batch. Stores stop at each group's last row; rows a device
  // array puts outside 0..m (or before the previous group's end) are
  // clipped to them, so that no store leaves D.
  GemmGrouping grouping = GemmGrouping::kNone;

  bool operator==(const GemmForm& other) const;
};

// B's element type: form.b_element, else A's.
ptx::ScalarType BElement(const GemmForm& form);

// Whether the kernel adds each stage's products into f32 registers itself
// (fp8 without fast accumulation).
bool PromotesAccumulators(const GemmForm& form);

// The accumulators' type: s32 for s8/u8 inputs (exact), f32 for the rest.
ptx::ScalarType AccumulatorType(const GemmForm& form);

// The output type a problem gets unless it names one: the input type for
// f16 and bf16, bf16 for fp8, f32 for tf32 (stored as f32), s32 for s8/u8.
ptx::ScalarType DefaultOutput(ptx::ScalarType element);

// Whether the form is a grouped GEMM's (contiguous or masked).
inline bool IsGrouped(const GemmForm& form) {
  return form.grouping != GemmGrouping::kNone;
}

// The same GEMM with the operands' roles exchanged: D^T = op(B).op(A)^T,
// so m and n trade places. A and B (and their majors) swap, the bias runs
// along the other dimension and D (with C) is stored the other way round.
// A small-m GEMM runs swapped so that its large n fills wgmma's fixed
// 64-row M and its small m a narrow N.
GemmForm SwappedForm(const GemmForm& form);

// "f16.kk->f16" plus the epilogue's ops ("+c", "+bias_n.f32", "+gelu"), the
// scaling ("+tensor_scaled", "+block_scaled"), fast accumulation
// ("+fast_accum") and grouping ("+contiguous_groups", "+masked_groups");
// mixed
// inputs are written "e4m3xe5m2.kk->bf16": part of kernel names and
// descriptions.
std::string FormName(const GemmForm& form);
// The form FormName writes `name` for; refuses a name not written as
// FormName writes it, naming the part, and a form ValidateGemmForm refuses.
absl::StatusOr<GemmForm> ParseFormName(absl::string_view name);
absl::string_view ActivationName(Activation activation);
// "none", "relu", "gelu", "gelu_tanh", "silu" -> the activation.
absl::StatusOr<Activation> ParseActivation(absl::string_view name);
// "none", "tensor", "block": the scaling's one spelling, which the command
// line, gemm_bench and the C API (Python's) all read; "unknown" otherwise.
absl::string_view ScalingName(GemmScaling scaling);
// The scaling named exactly `name`; another spelling ("NONE") is refused
// rather than read as one of them, so that no caller can see a name pass
// one check and mean another scaling in the next.
absl::StatusOr<GemmScaling> ParseScaling(absl::string_view name);
// "none", "contiguous", "masked": the grouping's one spelling, which the
// command line and the form's name ("+contiguous_groups") read; "unknown"
// otherwise.
absl::string_view GroupingName(GemmGrouping grouping);
// The grouping named exactly `name`; another spelling is refused.
absl::StatusOr<GemmGrouping> ParseGrouping(absl::string_view name);

// Refuses forms no kernel computes, naming the rule: inputs f16, bf16, e4m3,
// e5m2, tf32, s8 or u8 (B of another type only e4m3 with e5m2, s8 with
// u8), outputs f16, bf16, f32, fp8 or (from integers) s8 and s32, a bias of
// f16, bf16 or f32, MN-major only for 16-bit inputs (wgmma transposes no
// other), scaling and fast accumulation for fp8 only (block scaling
// promotes: no fast accumulation, and no fp8 D), no C for an 8-bit or s32
// D, nothing applied to an s32 D.
absl::Status ValidateGemmForm(const GemmForm& form);

// The form of the original GEMM: D = A.B^T, both K-major, D in
// DefaultOutput(element).
GemmForm PlainForm(ptx::ScalarType element);

// Whether the epilogue does more than scale by alpha: reads C, adds a
// bias, applies an activation.
bool HasEpilogueOps(const GemmForm& form);
// Whether the TMA-store strategy computes the form: 16-bit D (stmatrix
// stages 16-bit values) stored [m, n], with or without epilogue ops (the
// one rule; ValidateGemmConfigForForm and the selector read it). A grouped
// tile that crosses its group's last row is copied from the staging buffer
// row by row instead of by TMA.
bool TmaStoreComputes(const GemmForm& form);

// A GemmConfig is made of parts, each read by what it shapes (a function
// that needs one part takes only that part):

// The output tile one CTA computes, and the K of one stage.
struct GemmTileShape {
  int block_m = 128;
  int block_n = 128;
  int block_k = 64;
  // The kernel computes the swapped GEMM (SwappedForm): block_m runs along
  // the problem's n and block_n along its m.
  bool swap_ab = false;
};

// Whether every tile starts on a column block of B's block scales (block_n
// a multiple of kScaleBlock): then each accumulator's block is known when
// the kernel is generated, not only at run time.
inline bool TilesAlignToScaleBlocks(const GemmTileShape& tile) {
  return tile.block_n % kScaleBlock == 0;
}

// What the kernel of `config` computes for `form`: SwappedForm(form) when
// the config swaps A and B, else `form`.
GemmForm KernelForm(const GemmTileShape& tile, const GemmForm& form);

// The warpgroups and the ring of stages between them (warp-specialized
// schedule only). The cluster belongs here, not to the scheduler: its CTAs
// share one ring's B by multicast and release each stage together (the
// empty barriers count the consumer warps of both), and the scheduler
// only hands out work in its units. So does setmaxnreg: it moves registers
// between the producer and the consumers.
struct GemmPipelineShape {
  int stages = 1;
  // Consumer warpgroups: splitting block_m (ws), or taking turns (pp: 2).
  int consumers = 1;
  int mma_groups_in_flight = 0;   // wgmma.wait_group depth: 0 or 1
  int cluster_m = 1;              // 2: CTA pairs along M share B by multicast
  bool set_max_registers = true;  // setmaxnreg: producer gives, consumers take
};

// How the accumulators reach D.
struct GemmEpilogueConfig {
  GemmEpilogue epilogue = GemmEpilogue::kDirect;
  // TMA-store epilogue: how many 64-column chunks of its rows a consumer
  // stages in shared memory per store pass; 0 stages all of block_n at once.
  // Fewer chunks leave room for another stage of the ring.
  int store_chunks = 0;
};

// Which work each cluster of the grid takes, in which order.
struct GemmSchedulerConfig {
  TileOrder tile_order = TileOrder::kRaster;
  int raster_group = 8;  // kRaster: tile rows visited together
  // Cuts K into this many slices computed by different CTAs into an f32
  // workspace, then added by a reduce kernel: for problems with too few
  // output tiles to fill the SMs.
  int split_k = 1;
  // The split_k slices of a tile run instead in the split_k CTAs of one
  // cluster (slice = CTA rank) and meet in the first one through
  // distributed shared memory, which then runs the whole epilogue: no
  // workspace, no reduce kernel, any form.
  bool split_k_in_cluster = false;
  // Stream-K for the last, partial wave: the tiles left after whole waves
  // are shared out by k-tile iterations among the clusters (at most
  // kStreamKMaxPieces sharers per tile), the pieces of a tile added up in
  // the kernel through a workspace. Persistent grid only.
  bool stream_k = false;
};

// The most CTAs a cluster may have without opting in to more (the limit
// split_k_in_cluster runs into).
inline constexpr int kMaxPortableClusterCtas = 8;

// How big a grid runs the kernel: the generated code is the same either way.
struct GemmLaunchPolicy {
  bool persistent = true;  // grid of one CTA per SM, else one per tile
};

// An aggregate of its parts, so that config.block_m and the like name the
// fields themselves; brace-initialized, the parts come first, in this order,
// then the schedule.
struct GemmConfig : GemmTileShape,
                    GemmPipelineShape,
                    GemmEpilogueConfig,
                    GemmSchedulerConfig,
                    GemmLaunchPolicy {
  GemmSchedule schedule = GemmSchedule::kV1;

  bool operator==(const GemmConfig& other) const;
};

// The kStoreChunkColumns-wide chunks of a tile's columns that the TMA-store
// epilogue writes, and how many of them a consumer stages per store pass
// (store_chunks, or all of them when it is 0).
inline int StoreChunkCount(const GemmTileShape& tile) {
  return tile.block_n / kStoreChunkColumns;
}
inline int StoreChunksPerPass(const GemmConfig& config) {
  return config.store_chunks != 0 ? config.store_chunks
                                  : StoreChunkCount(config);
}

// "v1 128x128x64", "ws 128x256x64 s4 c2 w1 m2 tma g8 persistent",
// "pp 128x128x64 s6 c2 w1 m1 tma g8 persistent" (ping-pong),
// "ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap" (A and B swapped),
// "ws 128x256x64 s4 c2 w1 m1 tma e2 g16 persistent" (C stored in 2 passes),
// "ws 128x128x64 s5 c2 w1 m1 tma g8 k2 dsmem persistent" (split-K 2 met in
// a cluster),
// "ws 128x256x64 s3 c2 w1 m1 tma hilbert persistent" (Hilbert tile order),
// "ws 128x128x64 s6 c2 w1 m1 direct g8 k4 persistent" (split-K 4),
// "ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent" (stream-K).
std::string ConfigName(const GemmConfig& config);

// Three integers written "MxNxK": a tile ("128x256x64") or a problem
// ("8192x8192x8192"); whether they are legal sizes is for the caller.
absl::StatusOr<std::array<int64_t, 3>> ParseDimensions(absl::string_view text);
// `config` with the tile written "MxNxK"; sizes that do not fit in int are
// refused, not narrowed.
absl::StatusOr<GemmConfig> WithTile(GemmConfig config, absl::string_view tile);
absl::StatusOr<GemmConfig> ParseConfigName(const std::string& name);

// Whether GEMMs take this input type (f16, bf16, e4m3, e5m2, tf32, s8,
// u8), and the refusal naming the rule when they do not.
bool IsGemmElement(ptx::ScalarType element);
absl::Status CheckGemmElement(ptx::ScalarType element);

// Explains why a configuration cannot be generated or cannot run on any
// sm_90a device (tile shapes, stages, register budget), naming the limit.
// How much shared memory a device gives a block is the caller's to check
// (gemm::PlanGemm against its target; MaxStagesThatFit).
absl::Status ValidateGemmConfig(const GemmConfig& config,
                                ptx::ScalarType element);

// How deep a ring of stages fits in `shared_bytes_limit` bytes beside what
// `config`'s tile, pipeline and epilogue keep in shared memory (C's staging
// tile, barriers, the work schedule, the base-alignment slack), by the
// generator's own layout; config.stages is not read. At most
// kMaxGemmStages, 0 when not even one stage fits. Takes a config whose
// every other field ValidateGemmConfig accepts. The limit is the device's
// (gemm::GemmTarget::max_shared_bytes_per_block_optin): a config fits it
// when stages <= MaxStagesThatFit(config, element, limit).
int MaxStagesThatFit(const GemmConfig& config, ptx::ScalarType element,
                     int shared_bytes_limit);

// A TMA box the kernel expects for one operand: {inner, outer} elements.
struct GemmTensorBox {
  int inner = 0;
  int outer = 0;
  ptx::Swizzle swizzle = ptx::Swizzle::kNone;
  // The map's dimensions: (contiguous, other), and batch for a batched form.
  int rank = 2;
};

// The operands a GEMM kernel reads or writes through a TMA map.
enum class GemmMapOperand { kA, kB, kD };

// The rank of an operand's TMA map: a batch dimension only when the kernel
// steps through batches (a 3-D box costs a coordinate per copy for
// nothing); grouped, B's (and a masked A's) third dimension is the group,
// and a contiguous A is one matrix of every group's rows.
int GemmMapRank(const GemmForm& form, GemmMapOperand operand);

// A generated kernel: its source, the plan it was made from and what the
// host needs to launch it.
struct GeneratedGemm {
  std::string kernel_name;
  std::string source;
  // The kernel's plan block: every planned number its parts read, once.
  std::vector<PlannedConstant> plan;
  GemmConfig config;
  GemmForm form;
  int threads_per_block = 0;
  int shared_bytes = 0;  // dynamic shared memory, alignment slack included
  // Boxes of the operands' TMA maps: {inner, outer} of a map whose
  // dimensions are (contiguous, other[, batch]), one batch per box.
  GemmTensorBox a_box;
  GemmTensorBox b_box;
  GemmTensorBox d_box;  // kTmaStore only
};

// The parameters of every generated GEMM kernel.
enum class GemmKernelParameter {
  kAMap,       // TMA map of A (a 128-byte CUtensorMap, __grid_constant__)
  kBMap,       // TMA map of B
  kDMap,       // TMA map of D: the TMA-store epilogue only
  kD,          // D, for the direct epilogue
  kC,          // C, read when the form reads it (may be D itself)
  kBias,       // the bias vector, when the form has one
  kScaleA,     // per-tensor scales (f32 device scalars), or block scales
  kScaleB,     // (f32 arrays, BlockScales), when the form has them
  kScaleD,     // an fp8 D's scale, with per-tensor scaling
  kAmaxD,      // f32 raised to the largest |D|, when the form records it
  kWorkspace,  // split-K and stream-K only (GemmWorkspaceBytes)
  kGroupRows,  // grouped forms only: int32 per group (GemmGrouping)
  kM,
  kN,
  kK,
  kBatch,  // GEMMs in the strided batch, or groups
  kLdc,    // elements between rows of C, of D
  kLdd,
  kStrideC,  // elements between batches of C, of D, of the bias
  kStrideD,
  kStrideBias,
  kAlpha,
  kBeta,
  kPairStores,  // != 0: one store per pair of adjacent columns of D
};

// One row of the kernel parameter table.
struct GemmKernelParameterSpec {
  GemmKernelParameter parameter;
  const char* declaration;  // CUDA C++, as in the signature
  const char* meaning;      // for the generated source's comment
};

// The one table of the kernel parameters, in order: it renders the
// generated signature and its comment, and gemm::Gemm::Run builds its
// argument array from it.
const std::vector<GemmKernelParameterSpec>& GemmKernelParameters();

// Refuses what no kernel of `config` computes in `form`, naming the rule
// (ValidateGemmForm, then e.g. split-K's reduce kernel takes only the plain
// form, the TMA-store epilogue stores 16-bit D only).
absl::Status ValidateGemmConfigForForm(const GemmConfig& config,
                                       const GemmForm& form);

// The kernel of `config` computing `form` (KernelForm(config, form) when
// the config swaps A and B); refuses what ValidateGemmConfigForForm refuses.
absl::StatusOr<GeneratedGemm> GenerateGemm(const GemmConfig& config,
                                           const GemmForm& form);
// The plain form of `element`.
absl::StatusOr<GeneratedGemm> GenerateGemm(const GemmConfig& config,
                                           ptx::ScalarType element);

// The split-K reduce kernel: extern "C" NAME(const float* workspace,
// unsigned short* c, long long count, int splits) adds `splits` slices of
// `count` floats and rounds them into c. Any grid; 256 threads suit it.
std::string SplitKReduceKernelName(ptx::ScalarType element);
absl::StatusOr<std::string> SplitKReduceSource(ptx::ScalarType element);

// The most GEMMs one batch holds: v1's grid.z.
inline constexpr int64_t kMaxGemmBatch = 65535;

// In 64 bits: CheckGemmLaunch refuses what CUDA cannot launch rather than
// letting it wrap into a grid it can.
struct GemmGrid {
  int64_t x = 1;
  int64_t y = 1;
  int64_t z = 1;  // v1: one per GEMM of the batch
  int cluster_x = 1;
};

// The functions below take a `config` that ValidateGemmConfig accepts and
// m, n in 1..kMaxGemmDimension: then their arithmetic stays far inside 64
// bits.

// The work units of a warp-specialized grid for an m x n problem: output
// tiles, in pairs of tile rows with a 2-CTA cluster, times split-K slices.
// Grouped, the most any group rows can give (the kernel counts the real
// ones): contiguous, m rows cut at batch - 1 group boundaries give at most
// m / cluster rows + batch cluster rows; masked, batch times m's.
int64_t GemmWorkUnits(const GemmConfig& config, int64_t m, int64_t n,
                      int64_t batch = 1,
                      GemmGrouping grouping = GemmGrouping::kNone);

// Whether the slices of split-K meet in an f32 workspace that a reduce
// kernel adds into D (split_k > 1, not in a cluster): what limits such a
// configuration to the plain form and gives it a workspace.
bool ReducesSlicesInWorkspace(const GemmSchedulerConfig& scheduler);

// The CTAs of one cluster as launched: 2 for CTA pairs sharing B, split_k
// for slices meeting in a cluster, else 1.
int ClusterCtas(const GemmConfig& config);

// The launch grid for an m x n problem. A persistent grid has as many
// clusters (CTAs, without a cluster) as can be resident at once,
// `resident_clusters` from the device's occupancy for this kernel, or fewer
// when there are fewer work units; stream-K always takes all of them.
GemmGrid GemmLaunchGrid(const GemmConfig& config, int64_t m, int64_t n,
                        int resident_clusters, int64_t batch = 1,
                        GemmGrouping grouping = GemmGrouping::kNone);

// Checks what only the problem and the grid decide. m, n and k are the
// kernel's int parameters (1..kMaxGemmDimension); the grid must be one CUDA
// launches (x up to 2^31-1, y up to 65535); and the kernel counts in 32
// bits: its work units, the tiles of a raster group's span and, with
// stream-K, the grid's clusters times K's tiles must stay below 2^31.
absl::Status CheckGemmLaunch(const GemmConfig& config, int64_t m, int64_t n,
                             int64_t k, const GemmGrid& grid, int64_t batch = 1,
                             GemmGrouping grouping = GemmGrouping::kNone);

// Every workspace starts with a flag region of this many bytes, whose end
// holds stream-K's flags and which nothing else writes. The flags must be
// zero before a launch, and every launch that completes leaves them zero;
// so a workspace zeroed once serves any sequence of GEMMs, split-K or
// stream-K of any grid, with no zeroing before each. (Room for 1024
// clusters' flags; CheckGemmLaunch refuses a grid with more.)
inline constexpr int64_t kWorkspaceFlagRegionBytes = int64_t{32} << 10;

// The workspace a launch on `grid` that CheckGemmLaunch accepts needs, in
// bytes (0: none): the flag region, then split-K's f32 slices,
// [split_k][m][n] (no workspace when they meet in a cluster), or
// stream-K's slot of f32 partial sums per CTA (block_m x block_n). The
// kernel's workspace pointer is GemmWorkspaceKernelOffset bytes in: at the
// slices, or, for stream-K, at its flags (an int per consumer warpgroup of
// each CTA, each cluster's padded to 16 bytes: GemmStreamKFlagBytes), which
// end where its slots begin.
int64_t GemmWorkspaceBytes(const GemmConfig& config, int64_t m, int64_t n,
                           const GemmGrid& grid);
int64_t GemmWorkspaceKernelOffset(const GemmConfig& config,
                                  const GemmGrid& grid);
int64_t GemmStreamKFlagBytes(const GemmConfig& config, const GemmGrid& grid);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_GEMM_H_
