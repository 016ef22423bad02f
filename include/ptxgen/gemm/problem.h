#ifndef PTXGEN_GEMM_PROBLEM_H_
#define PTXGEN_GEMM_PROBLEM_H_

// The problem model: one GEMM (or a strided batch) as the caller stores it,
// its validation, resolution, form and spans. Below planning, selection,
// autotuning and the Gemm itself, which all read it and none of which it
// calls.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gemm {

// The generator's names for a problem's parts, used as they are.
using gen::Activation;
using gen::BiasAlong;
using gen::GemmScaling;
using Grouping = gen::GemmGrouping;
using ptx::MajorOrder;

// One GEMM, a strided batch of them, or a grouped GEMM, as the caller
// stores it.
struct GemmProblem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  ptx::ScalarType element = ptx::ScalarType::kF16;  // A (and B, unless set)
  // B's type where it differs: e4m3 with e5m2, s8 with u8.
  std::optional<ptx::ScalarType> b_element;
  // D's type; unset: gen::DefaultOutput(element) (the input type for f16
  // and bf16, bf16 for fp8, f32 for tf32, s32 for s8/u8). f16, bf16, f32,
  // or e4m3/e5m2 (rounded with saturation to the largest finite value, as
  // cuBLASLt); from s8/u8 also s8 (rounded to nearest, ties to even,
  // saturated to -128..127) or s32 (the exact sums: alpha 1, no C, bias,
  // activation or amax).
  std::optional<ptx::ScalarType> output;
  MajorOrder a_major = MajorOrder::kK;  // kMN: A stored [k, m]
  MajorOrder b_major = MajorOrder::kK;  // kMN: B stored [k, n]
  // Elements between consecutive rows of each matrix as stored; 0: packed
  // (the row's length).
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  // GEMMs in the strided batch; grouped, the groups.
  int64_t batch = 1;
  // Elements between consecutive matrices of the batch; 0: packed (the
  // matrix's rows times its leading dimension). The bias's: 0 shares one
  // vector among the batch.
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  int64_t stride_bias = 0;
  // Host values, passed to the kernel. beta = 0 never reads C.
  float alpha = 1.0f;
  float beta = 0.0f;
  BiasAlong bias = BiasAlong::kNone;  // one value per row (m) or column (n)
  ptx::ScalarType bias_type = ptx::ScalarType::kF32;
  Activation activation = Activation::kNone;
  // C and D stored [n, m] (D column-major, as cuBLAS stores it): their
  // leading dimensions count rows of n.
  bool d_transposed = false;
  // fp8: kTensor multiplies alpha by the f32 scales Run's operands point to
  // (GemmOperands::scale_a, scale_b), read by the kernel, as cuBLASLt's
  // A/B scale pointers; an e4m3/e5m2 D is also multiplied by scale_d
  // before its rounding. kBlock (DeepGEMM's recipe) multiplies each product
  // of row i of A and row j of B over a 128-k block kb by A's scale of
  // (i, kb) and B's of (j / 128, kb), f32 arrays laid out as
  // gen::BlockScales says, before adding it into f32; D f16, bf16 or f32,
  // no fast accumulation.
  GemmScaling scaling = GemmScaling::kNone;
  // Record the largest |D| before scale_d (cuBLASLt's amax of D) in the f32
  // GemmOperands::amax_d points to; Run sets it, then each tile raises it.
  bool record_amax = false;
  // fp8: accumulate in wgmma's reduced-precision fp8 accumulator (faster,
  // as cuBLASLt's fast accumulation) instead of promoting every stage
  // (gen::GemmForm::fast_accumulation).
  bool fast_accumulation = false;
  // A grouped GEMM (mixture-of-experts layers; gen::GemmGrouping): `batch`
  // groups share n and k, each with its own B (stride_b apart), bias
  // (stride_bias apart, or 0: one for all) and B block scales; each
  // group's rows are read by the kernel from GemmOperands::group_rows
  // (int32), never on the host, so a run can be captured in a CUDA graph
  // and replayed with new counts.
  //   kContiguous: A [m, k] and C, D [m, n] hold every group's rows, group
  //     after group (m: their total); group_rows[g] is where group g's
  //     rows end (cumulative, torch._grouped_mm's offs). A, C and D are
  //     one matrix each: stride_a, stride_c and stride_d stay 0. A's block
  //     scales are one matrix's, [k blocks][m].
  //   kMasked: A [batch, m, k] and C, D [batch, m, n] (m: the rows each
  //     group has room for); group g uses its first group_rows[g] rows.
  // B may be K- or MN-major as above, and a masked A too (a contiguous A
  // is K-major: its groups start at any row); D is not transposed and a
  // bias runs along n. Rows the array puts outside 0..m are clipped.
  Grouping grouping = Grouping::kNone;
  // Grouped: the rows per group the host plans tiles for (the routing is
  // on the device); 0: m / batch contiguous, m masked. At most m.
  int64_t expected_m = 0;
};

// The problem with every 0 (packed) leading dimension and stride and the
// output type filled in.
GemmProblem Resolved(const GemmProblem& problem);

// What the kernel computes for `problem`: types, majors, epilogue ops.
gen::GemmForm FormOf(const GemmProblem& problem);

// The same product with A and B exchanged (gen::SwappedForm): m and n,
// the operands' majors, leading dimensions and batch strides trade places,
// the bias runs along the other dimension and D (with C) is stored the
// other way round, at the same addresses. Swapping twice is the identity.
GemmProblem SwappedProblem(const GemmProblem& problem);

// How many elements each operand spans as Resolved(problem) stores it,
// from its first element to past its last, padding and batch gaps
// included: what a buffer for it must hold. C's is 0 with beta = 0 (C is
// never read), the bias's 0 without one. The scales' in floats: 1 each
// with per-tensor scaling, gen::BlockScalesOf's counts with block scaling.
struct GemmSpans {
  int64_t a = 0, b = 0, c = 0, d = 0, bias = 0;
  int64_t scale_a = 0, scale_b = 0;
};
// Every span of a problem ValidateProblem accepts fits in int64_t; of
// another, one that does not is refused naming the operand, never wrapped.
absl::StatusOr<GemmSpans> StoredSpans(const GemmProblem& problem);

// The problem the kernel of `config` is launched on: the swapped one when
// the config swaps A and B (config.swap_ab), else `problem`.
GemmProblem KernelProblem(const gen::GemmConfig& config,
                          const GemmProblem& problem);

// The matrices A, C and D hold: one per GEMM of the batch (or masked
// group), one of every group's rows for contiguous groups.
int64_t RowMatrices(const GemmProblem& problem);

// The rows per group a grouped problem's plan assumes: expected_m, or
// m / batch (contiguous) or m (masked) when it is 0; m for the rest.
int64_t PlannedGroupRows(const GemmProblem& problem);

// Refuses, naming the rule: m, n, k in 1..2^31-1 (gen::kMaxGemmDimension);
// the form (gen::ValidateGemmForm); leading dimensions at least the stored
// row; every row of A and B starting on a 16-byte boundary (TMA: lda and
// ldb times the element size, and the batch strides, multiples of 16
// bytes; so with packed K-major operands k a multiple of 8); ldc and ldd
// at least n (at least m when D is transposed); batch 1..65535 with
// strides that keep the matrices of a batch apart, each below 2^40 bytes
// (stride_bias too, unless 0); grouped, the groups 1..65535 with
// expected_m in 0..m, and a contiguous A, C and D unbatched (strides 0).
absl::Status ValidateProblem(const GemmProblem& problem);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_PROBLEM_H_
