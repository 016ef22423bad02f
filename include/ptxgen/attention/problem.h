#ifndef PTXGEN_ATTENTION_PROBLEM_H_
#define PTXGEN_ATTENTION_PROBLEM_H_

// The problem model of attention forward (issue #37): O = softmax(Q·Kᵀ·scale
// + mask)·V and each row's log-sum-exp, as the caller stores Q, K, V, O and
// the LSE; its resolution, validation and spans. What is computed, not how:
// planning and generation will read it, and it calls neither.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::attention {

// How Q, K, V and O are laid out: what their 0 (packed) strides become, and
// which strides are inner for the overlap rule. dim is innermost in both.
enum class Layout {
  kBatchSeqHeadDim,  // [batch, seq, heads, dim]: FlashAttention's
  kBatchHeadSeqDim,  // [batch, heads, seq, dim]: PyTorch SDPA's
};

// One tensor's strides in elements: between sequences of the batch, rows
// (positions of a sequence) and heads. dim is contiguous (stride 1), as
// TMA and wgmma read it. 0: packed, as the layout nests the dimensions:
// the extent of the next dimension in times its stride, so an explicit
// inner stride's padding carries outward (as PyTorch allocates).
struct Strides {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t head = 0;
};

// Sizes, totals and the varlen offsets are the kernel's int (and int32
// cumulative offsets, as FlashAttention's): 1..2^31-1.
inline constexpr int64_t kMaxAttentionDimension = (int64_t{1} << 31) - 1;
// Q·Kᵀ runs along head_dim in wgmma's K steps, 16 for 16-bit inputs.
inline constexpr int64_t kHeadDimMultiple = 16;
// O's f32 accumulator of a warpgroup's 64 rows takes head_dim / 2
// registers a thread: 128 at 256, half of a thread's 255, beside the
// scores. FlashAttention's limit too.
inline constexpr int64_t kMaxHeadDim = 256;

// One attention forward as the caller stores it. The mask: none, or causal,
// aligned to the bottom-right corner when seq_q != seq_k (FlashAttention's
// convention): query row i sees keys 0..i + seq_k - seq_q, so with seq_q >
// seq_k the first seq_q - seq_k rows see none (O 0, LSE +inf, as
// FlashAttention stores them). Variable lengths apply it per sequence.
struct AttentionProblem {
  // Fixed lengths: the sequences of the batch; variable: their number.
  int64_t batch = 1;
  int64_t heads_q = 1;
  // K's and V's heads; each serves heads_q / heads_kv query heads (GQA,
  // MQA with 1). 0: heads_q.
  int64_t heads_kv = 0;
  // Fixed lengths: every sequence's rows of Q (and O), and of K (and V).
  // Variable: the longest the host plans for; the real ones are on the
  // device.
  int64_t seq_q = 0;
  int64_t seq_k = 0;
  int64_t head_dim = 0;  // of Q, K, V and O alike
  // Q, K, V and O; the LSE is f32. f16 or bf16 (e4m3, the stretch,
  // is refused until it is generated).
  ptx::ScalarType element = ptx::ScalarType::kBF16;
  bool causal = false;
  // Multiplies Q·Kᵀ before the softmax. Unset: 1/sqrt(head_dim).
  std::optional<float> scale;
  Layout layout = Layout::kBatchSeqHeadDim;
  Strides q_stride, k_stride, v_stride, o_stride;
  // Variable lengths: Q, K, V and O stored [total, heads, dim], the
  // sequences one after another (the layout kBatchSeqHeadDim with no batch
  // stride: 0); the int32 cumulative offsets the run passes on the device
  // (cu_seqlens_q, cu_seqlens_k, batch + 1 each) give sequence b the rows
  // cu[b]..cu[b+1]. The host never reads them, so a run can be captured in
  // a CUDA graph and replayed with new lengths.
  bool variable_lengths = false;
  // Variable lengths: the rows of Q (and O) and of K (and V) as allocated,
  // what the tensor maps bound (TMA never reads past them); every
  // sequence's rows must lie inside. 0 with fixed lengths.
  int64_t total_q = 0;
  int64_t total_k = 0;
};

// The problem with heads_kv, every 0 (packed) stride and the scale filled
// in. A variable-length problem's batch strides stay 0.
AttentionProblem Resolved(const AttentionProblem& problem);

// A scale in base 2, as the kernel applies it (each weight one ex2): the
// scale times log2(e), in f32. The validator refuses a problem whose
// resolved scale makes this infinite, so no surface hands the kernel an
// infinity.
float ScaleLog2(float scale);

// How many elements each tensor spans as Resolved(problem) stores it, from
// its first element to past its last, gaps included: what a buffer for it
// must hold. The LSE (f32) is packed: [batch, heads_q, seq_q], or with
// variable lengths [heads_q, total_q] (FlashAttention's varlen LSE).
struct AttentionSpans {
  int64_t q = 0, k = 0, v = 0, o = 0, lse = 0;
};
// Every span of a problem ValidateAttentionProblem accepts fits in
// int64_t; of another, one that does not is refused naming the tensor,
// never wrapped.
absl::StatusOr<AttentionSpans> StoredSpans(const AttentionProblem& problem);

// Refuses, naming the rule: batch, heads_q, heads_kv, seq_q, seq_k and
// head_dim in 1..kMaxAttentionDimension; heads_q a multiple of heads_kv;
// head_dim a multiple of 16, at most 256; element f16 or bf16; a known
// layout; a finite positive scale (the online softmax takes each row's
// maximum before scaling) whose ScaleLog2 is finite too; variable lengths
// only as [total, heads, dim] (kBatchSeqHeadDim, batch strides 0) with
// total_q and total_k in 1..kMaxAttentionDimension, which fixed lengths
// leave 0, and seq_q and seq_k (the longest sequences) at most total_q and
// total_k; each stride at
// least what the dimensions inside it span (no two rows or heads overlap),
// below TMA's 2^40 bytes (ptx::kTensorStrideLimitBytes) and a multiple of
// 16 bytes (ptx::kTensorGlobalAlignmentBytes: every row starts where TMA can
// read it); every tensor's span inside int64_t (so no element offset
// wraps). The tensors' addresses are the run's to check.
absl::Status ValidateAttentionProblem(const AttentionProblem& problem);

}  // namespace ptxgen::attention

#endif  // PTXGEN_ATTENTION_PROBLEM_H_
