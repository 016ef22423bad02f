#ifndef PTXGEN_TESTS_ATTENTION_ATTENTION_REFERENCE_H_
#define PTXGEN_TESTS_ATTENTION_ATTENTION_REFERENCE_H_

// Test support for attention forward (issue #37): random inputs, a float64
// host reference of what AttentionProblem (problem.h) defines, and the
// comparison of a run's O and LSE with it.
// //tests/attention:attention_reference.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::attention {

// Q, K and V as a problem stores them: StoredSpans' q, k and v elements,
// each the bits of an f16 or bf16; with variable lengths the int32
// cumulative offsets a run passes on the device (batch + 1 each).
struct AttentionInputs {
  std::vector<uint16_t> q, k, v;
  std::vector<int32_t> cu_seqlens_q, cu_seqlens_k;
};

enum class Distribution {
  kUniform,  // U(-1, 1)
  kNormal,   // N(0, 1)
};

// `count` values drawn from `seed`, each rounded to `element` (f16 or
// bf16). The same on every platform: its own generator, no std::
// distribution.
std::vector<uint16_t> RandomElements(
    int64_t count, ptx::ScalarType element, uint32_t seed,
    Distribution distribution = Distribution::kUniform);

// Q, K and V of `problem` (K from seed + 1, V from seed + 2): every element
// of each tensor random, rows no sequence owns included; the positions of a
// span that no element occupies (explicit strides' padding) NaN, so a
// kernel that reads them spoils O. The offsets are left empty for the
// caller (CumulativeOffsets). Refused: what ValidateAttentionProblem
// refuses.
absl::StatusOr<AttentionInputs> RandomAttentionInputs(
    const AttentionProblem& problem, uint32_t seed,
    Distribution distribution = Distribution::kUniform);

// `problem` with every stride of Q, K and V `pad` elements longer than a
// packed one over the strides inside it, and O's 2 * pad: gaps a kernel
// must neither read nor write, O's unlike the inputs'. Variable lengths
// keep their batch strides 0. `pad` a multiple of 8 (16 bytes of f16 or
// bf16) keeps every row where TMA reads it.
AttentionProblem WithPaddedStrides(const AttentionProblem& problem,
                                   int64_t pad);

// {0, l0, l0 + l1, ...}: the cumulative offsets of sequences of `lengths`.
std::vector<int32_t> CumulativeOffsets(const std::vector<int32_t>& lengths);

// O and the LSE of `problem` from `inputs` in float64, stored as float, as
// problem.h defines them: for every sequence b, query head h and row i of
// b, with K/V head h / (heads_q / heads_kv) and the keys j row i sees (all
// of b's; causal: j <= i + rows_k - rows_q, aligned bottom-right),
// s_j = scale * q_i . k_j (Resolved's scale), LSE = log(sum_j exp(s_j))
// and O = sum_j exp(s_j - LSE) v_j; a row that sees no key gets O 0 and
// LSE +inf. Writes those rows' O elements where Resolved's o_stride places
// them and their LSE where StoredSpans' packed LSE does; every other
// position of `o` and `lse` keeps what it held (a test's poison). `lse`
// null: not computed. With variable lengths, a sequence the kernel skips
// (attention.h's AttentionOperands: rows out of order, outside total_q or
// total_k, or more than seq_q) is skipped here too, its rows left as they
// were. Refused (InvalidArgument): what ValidateAttentionProblem refuses;
// inputs, `o` or `lse` shorter than their spans; with variable lengths,
// other than batch + 1 offsets each, or two computed sequences sharing
// rows.
absl::Status ReferenceAttention(const AttentionProblem& problem,
                                const AttentionInputs& inputs,
                                std::vector<float>* o, std::vector<float>* lse);

// How far a run's O and LSE are from the reference's.
struct AttentionErrors {
  // ||got - want|| / ||want|| over the O elements of every sequence's rows
  // (||got - want|| where want is all 0); +inf where got holds a NaN or an
  // infinity among them.
  double o_relative = 0;
  // The largest |got - want| of the LSE of a row that sees a key; +inf
  // where got is not finite.
  double lse_max_abs = 0;
  // Rows that see no key whose LSE is not +inf.
  int64_t lse_infinity_mismatches = 0;
  // Positions of got's O and LSE that no row owns (padding, rows outside
  // every sequence, past the spans) yet no longer NaN: written where
  // nothing should be. The first of each: -1 when none.
  int64_t o_written_outside = 0;
  int64_t first_o_written_outside = -1;
  int64_t lse_written_outside = 0;
  int64_t first_lse_written_outside = -1;
};

// A run's O and LSE (`got_*`: as a test downloads them, NaN before the
// run, at least their spans long) against ReferenceAttention's (`want_*`)
// for the same problem and inputs. Both LSEs null: not compared. Refused
// (InvalidArgument): what ReferenceAttention refuses, and one LSE given
// without the other.
absl::StatusOr<AttentionErrors> CompareAttention(
    const AttentionProblem& problem, const AttentionInputs& inputs,
    const std::vector<double>& got_o, const std::vector<float>& want_o,
    const std::vector<double>* got_lse, const std::vector<float>* want_lse);

}  // namespace ptxgen::attention

#endif  // PTXGEN_TESTS_ATTENTION_ATTENTION_REFERENCE_H_
