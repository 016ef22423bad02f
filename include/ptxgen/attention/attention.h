#ifndef PTXGEN_ATTENTION_ATTENTION_H_
#define PTXGEN_ATTENTION_ATTENTION_H_

// The user-facing attention forward (issue #37): for every sequence and
// query head, O = softmax(Q·Kᵀ·scale + mask)·V and each query row's
// log-sum-exp, as AttentionProblem (problem.h) describes the tensors.
//
//   AttentionProblem problem;
//   problem.batch = 2; problem.heads_q = 32; problem.heads_kv = 8;
//   problem.seq_q = problem.seq_k = 4096; problem.head_dim = 128;
//   problem.causal = true;
//   absl::StatusOr<Attention> attention = Attention::Prepare(problem);
//   absl::Status run = attention->Run({q, k, v, o, lse}, stream);
//
// Prepare plans the kernel for the current device (PlanAttention: the
// configuration, the kernel generated and compiled or fetched from the
// kernel cache), and loads it into the current context (the primary
// context of device 0 when none is current; AttentionOptions::device names
// another). Its source, PTX and resource usage stay inspectable. As a Gemm,
// an Attention runs only in the context it was prepared in, and Run only
// enqueues work: it may be captured into a CUDA graph, and with variable
// lengths replayed with new lengths (the kernel reads them on the device).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/runtime/target.h"

namespace ptxgen::attention {

// The device pointers of one Run, each 16-byte aligned. lse: f32, as
// StoredSpans' lse counts them (packed [batch, heads_q, seq_q], or with
// variable lengths [heads_q, total_q]); null: not written. With variable
// lengths cu_seqlens_q and cu_seqlens_k (int32, batch + 1 each, from 0,
// non-decreasing) are read by the kernel alone, which checks each sequence
// b: its rows cu[b]..cu[b+1] in order and inside total_q (total_k), at
// most seq_q query rows. A sequence that breaks this is skipped: its O and
// LSE rows are left as they were, and nothing outside O, the LSE, Q, K or V
// is read or written whatever the offsets hold. (Offsets that decrease
// make the next sequences overlap earlier ones' rows; each is computed,
// in no set order.)
struct AttentionOperands {
  CUdeviceptr q = 0;
  CUdeviceptr k = 0;
  CUdeviceptr v = 0;
  CUdeviceptr o = 0;
  CUdeviceptr lse = 0;
  CUdeviceptr cu_seqlens_q = 0;
  CUdeviceptr cu_seqlens_k = 0;
};

// What Run refuses (InvalidArgument, naming both) of where the operands
// of `problem` lie: O or the LSE sharing memory with Q, K, V, the offsets
// or each other (base::MayShareMemory: heads or rows of one buffer that
// interleave without touching pass), which the kernel would race on; a
// problem ValidateAttentionProblem refuses is refused as it refuses it.
// Plain arithmetic: no driver call.
absl::Status CheckOutputsApart(const AttentionProblem& problem,
                               const AttentionOperands& operands);

// What Prepare (and PlanAttention) may be told beyond the problem.
struct AttentionOptions {
  std::optional<gen::AttentionConfig> config;  // exactly this configuration
  compile::KernelCache* cache = nullptr;  // nullptr: KernelCache::Default()
  // As GemmOptions::device: the device to prepare for, by ordinal.
  std::optional<int> device;
};

// The device attention is planned for: every kernel family's target.
using AttentionTarget = runtime::KernelTarget;

// The family's name in what its target, its loaded kernels and its
// launches say ("attention target: ...").
inline constexpr char kAttentionFamily[] = "attention";

// The configuration the heuristic picks for `problem` on `target`: the
// problem's element, head dim, mask and lengths, with tiles that fit the
// target's shared memory and a thread's registers.
gen::AttentionConfig HeuristicAttentionConfig(const AttentionProblem& problem,
                                              const AttentionTarget& target);

// One launch: its tiles, query_blocks x heads x batch (blocks of the
// longest sequence's query rows). With fixed lengths `ctas` persistent
// CTAs, one an SM at most, take turns of GeneratedAttention::tiles_per_turn
// tiles; with variable lengths a CTA takes one tile.
struct AttentionGrid {
  int ctas = 0;
  int query_blocks = 0;
  int heads = 0;
  int batch = 0;
};

// What Prepare plans; PlanAttention makes it without a GPU.
struct AttentionPlan {
  AttentionProblem problem;  // Resolved()
  AttentionTarget target;
  gen::AttentionConfig config;
  AttentionGrid grid;
  gen::GeneratedAttention generated;
  std::shared_ptr<const compile::CompiledModule> compiled;
};

// Validates the target, the problem and the configuration (options.config,
// else the heuristic's, which must agree with the problem on what it
// computes), generates the kernel, refuses it when its shared memory
// exceeds the target's, and compiles it through options.cache.
absl::StatusOr<AttentionPlan> PlanAttention(
    const AttentionProblem& problem, const AttentionTarget& target,
    const AttentionOptions& options = {});

// Defined in attention.cc: a planned kernel loaded into one context, shared
// by the Attentions of that context.
class LoadedAttentionKernel;
// Defined in attention.cc: makes an Attention of a loaded kernel.
class AttentionPreparation;

// A prepared attention: its kernel loaded, its grid planned. Copyable;
// copies share the kernel.
class Attention {
 public:
  static absl::StatusOr<Attention> Prepare(
      const AttentionProblem& problem, const AttentionOptions& options = {});

  // Computes O (and the LSE, when given) on `stream` in the Attention's
  // context. Refused (InvalidArgument, naming the rule): a null or
  // misaligned Q, K, V or O; a misaligned LSE; variable lengths without
  // their offsets; memory the kernel cannot reach; an output sharing
  // memory with another operand (CheckOutputsApart); another context
  // current, or a stream of another context (FailedPrecondition).
  absl::Status Run(const AttentionOperands& operands, CUstream stream) const;

  const AttentionProblem& problem() const { return problem_; }
  const gen::AttentionConfig& config() const;
  const gen::GeneratedAttention& generated() const;
  const compile::CompiledModule& compiled() const;
  int device() const { return device_; }
  CUcontext context() const { return context_; }

 private:
  Attention(AttentionProblem problem, AttentionGrid grid, CUcontext context,
            int device, std::shared_ptr<const LoadedAttentionKernel> kernel)
      : problem_(problem),
        grid_(grid),
        context_(context),
        device_(device),
        kernel_(std::move(kernel)) {}

  friend class AttentionPreparation;

  AttentionProblem problem_;
  AttentionGrid grid_;
  CUcontext context_;
  int device_;
  std::shared_ptr<const LoadedAttentionKernel> kernel_;
};

}  // namespace ptxgen::attention

#endif  // PTXGEN_ATTENTION_ATTENTION_H_
