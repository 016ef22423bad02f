#ifndef PTXGEN_GEN_ATTENTION_H_
#define PTXGEN_GEN_ATTENTION_H_

// Attention forward kernel generation (issue #37), from the parts GEMMs are
// made of: a persistent grid whose CTAs take tiles of query rows in turn;
// a TMA producer warp loads a tile's block of Q and streams K and V
// through two pipelines; consumer warpgroups, 64 query rows each,
// run S = Q·Kᵀ (wgmma from shared memory), the online softmax on S in
// registers, and O += P·V with P as wgmma's register A operand; O is
// staged in shared memory and stored by TMA. Sizes, strides, the scale and
// the GQA ratio are kernel arguments; what changes the code (element, head
// dim, mask, variable lengths, tiles) is an AttentionConfig.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/gen/planned_constant.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"

namespace ptxgen::gen {

// Query rows a consumer warpgroup owns: one wgmma's M.
inline constexpr int kAttentionRowsPerConsumer = 64;
// The deepest K and V rings an attention kernel may have.
inline constexpr int kMaxAttentionStages = 4;

// Everything that changes an attention kernel's code.
struct AttentionConfig {
  // What is computed (from the problem).
  ptx::ScalarType element = ptx::ScalarType::kBF16;  // f16 or bf16
  int head_dim = 128;  // a multiple of 16 (one wgmma K step), 16..256
  bool causal = false;
  // Sequences of their own lengths, read from cumulative offsets on the
  // device; O stored row by row where a block crosses its sequence's end.
  bool variable_lengths = false;
  // How.
  int consumers = 2;  // consumer warpgroups: block_m = 64 * consumers
  int block_n = 128;  // keys per K and V stage: S's wgmma N
  int stages = 2;     // of the K ring and of the V ring
  // Of the Q ring: with 2, a tile's Q block loads while the tile before
  // it is computed and stored (its O is staged where its Q was).
  int query_stages = 1;
  // The consumers take turns at the tensor cores (ordered named barriers):
  // one's softmax runs while the other's GEMMs do.
  bool ping_pong = true;
};

// "bf16 d128 causal varlen: 2x64 rows, 128 keys, 2 stages, 2 Q stages,
// ping-pong" (the Q stages named only when there are 2).
std::string AttentionConfigName(const AttentionConfig& config);

// Refuses, naming the rule: element f16 or bf16; head_dim a multiple of 16
// in 16..256; consumers 1..3; block_n a legal wgmma N that is a multiple
// of 16 (P's register-A slices) and of 8 rows (the swizzle); stages
// 1..kMaxAttentionStages; query_stages 1 or 2; ping-pong only with 2
// consumers; the registers
// of S, P and O within a consumer thread's budget.
absl::Status ValidateAttentionConfig(const AttentionConfig& config);

// The dynamic shared memory (alignment slack included) of the kernel
// GenerateAttention makes for `config`, without generating it.
absl::StatusOr<int> AttentionSharedBytes(const AttentionConfig& config);

// A generated attention kernel and what the host needs to launch it.
struct GeneratedAttention {
  std::string kernel_name;
  std::string source;
  std::vector<PlannedConstant> plan;  // every planned number the kernel reads
  AttentionConfig config;
  int threads_per_block = 0;
  int shared_bytes = 0;  // dynamic shared memory, alignment slack included
  int block_m = 0;       // query rows per CTA
  // Q's, K's, V's and O's TMA maps are 4-D: (head_dim, rows, heads,
  // batch), each box box_columns x box_rows x 1 x 1 in `swizzle`: one
  // swizzle span of head_dim (64 columns of a 128B swizzle).
  int box_columns = 0;
  ptx::Swizzle swizzle = ptx::Swizzle::kNone;
  int q_box_rows = 0;   // block_m: the CTA's query rows
  int kv_box_rows = 0;  // block_n
  int o_box_rows = 0;   // a consumer's 64 rows
  // Consecutive tiles a CTA takes at a time (attention_tile.cu): two with
  // a causal mask and fixed lengths (a folded pair, a long and a short
  // block of one head), else one.
  int tiles_per_turn = 0;
};

// The parameters of every generated attention kernel, in order.
enum class AttentionKernelParameter {
  kQMap,  // TMA maps (128-byte CUtensorMap, __grid_constant__)
  kKMap,
  kVMap,
  kOMap,
  kO,           // O itself, for rows stored one by one (variable lengths)
  kLse,         // f32 log-sum-exp per query row and head (natural log)
  kCuSeqlensQ,  // int32 [batch + 1]: variable lengths only
  kCuSeqlensK,
  kSeqQ,         // fixed lengths: every sequence's rows; variable: the most one
  kSeqK,         // may have (max_seqlen_q; seq_k unused)
  kTotalQ,       // variable lengths: the rows of Q and O, and of K and V, as
  kTotalK,       // allocated: no sequence's rows may end past them
  kQueryBlocks,  // tiles of each sequence and head: the longest's
  kHeadsQ,
  kBatch,
  kHeadsPerKv,  // heads_q / heads_kv: query heads sharing a K/V head
  kOSeqStride,  // O's strides in elements: rows, heads, sequences
  kOHeadStride,
  kOBatchStride,
  kScaleLog2,  // the softmax scale times log2(e): scores in base 2
};

// Declaration and meaning of each parameter, in the order above.
struct AttentionParameterText {
  AttentionKernelParameter parameter;
  std::string declaration;
  std::string meaning;
};
const std::vector<AttentionParameterText>& AttentionKernelParameters();

// The kernel for `config`, which must pass ValidateAttentionConfig; its
// shared memory is what the config needs (the caller compares it with the
// device's).
absl::StatusOr<GeneratedAttention> GenerateAttention(
    const AttentionConfig& config);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_ATTENTION_H_
