#include "tests/attention/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/testing/verification.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::attention {
namespace {

// f16's and bf16's NaN alike (exponent all ones, a mantissa bit set).
constexpr uint16_t kNanBits = 0x7FFF;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

absl::Status Refuse(absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("attention reference: ", rule));
}

// SplitMix64: the same numbers on every platform.
class Random {
 public:
  explicit Random(uint32_t seed) : state_(seed) {}

  // [0, 1), 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

  double Normal() {                    // Box-Muller
    const double u = 1.0 - Uniform();  // (0, 1]: log(u) finite
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * kPi * Uniform());
  }

 private:
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
  }

  uint64_t state_;
};

// One sequence of the batch: where its rows of Q and K start in their
// tensors' rows (0 with fixed lengths) and how many there are.
struct Sequence {
  int64_t index;  // b: the batch stride's multiplier (0 in varlen strides)
  int64_t first_q, rows_q;
  int64_t first_k, rows_k;
};

// Whether the kernel computes sequence b of variable lengths (attention.h's
// AttentionOperands): its rows in order, inside the rows allocated, and no
// more query rows than the host planned for. The kernel skips any other.
bool Computed(const AttentionProblem& r, const AttentionInputs& inputs,
              int64_t b) {
  const int64_t q_start = inputs.cu_seqlens_q[b];
  const int64_t q_end = inputs.cu_seqlens_q[b + 1];
  const int64_t k_start = inputs.cu_seqlens_k[b];
  const int64_t k_end = inputs.cu_seqlens_k[b + 1];
  return 0 <= q_start && q_start <= q_end && q_end <= r.total_q &&
         q_end - q_start <= r.seq_q && 0 <= k_start && k_start <= k_end &&
         k_end <= r.total_k;
}

// The sequences of a resolved problem the kernel computes; with variable
// lengths, batch + 1 offsets each (CheckOffsets).
std::vector<Sequence> Sequences(const AttentionProblem& r,
                                const AttentionInputs& inputs) {
  std::vector<Sequence> sequences;
  for (int64_t b = 0; b < r.batch; ++b) {
    if (!r.variable_lengths) {
      sequences.push_back({b, 0, r.seq_q, 0, r.seq_k});
      continue;
    }
    if (!Computed(r, inputs, b)) continue;
    const std::vector<int32_t>& q = inputs.cu_seqlens_q;
    const std::vector<int32_t>& k = inputs.cu_seqlens_k;
    sequences.push_back({b, q[b], q[b + 1] - q[b], k[b], k[b + 1] - k[b]});
  }
  return sequences;
}

// The offsets a reference can be computed for: batch + 1 of each, and no
// two computed sequences sharing a row of O (which would be written in no
// set order). Sequences the kernel skips may hold anything.
absl::Status CheckOffsets(const AttentionProblem& r,
                          const AttentionInputs& inputs) {
  if (!r.variable_lengths) return absl::OkStatus();
  for (const auto* cu : {&inputs.cu_seqlens_q, &inputs.cu_seqlens_k}) {
    if (static_cast<int64_t>(cu->size()) != r.batch + 1) {
      return Refuse(absl::StrCat(
          cu == &inputs.cu_seqlens_q ? "cu_seqlens_q" : "cu_seqlens_k",
          " must hold batch + 1 = ", r.batch + 1, " offsets"));
    }
  }
  std::vector<Sequence> sequences = Sequences(r, inputs);
  std::sort(sequences.begin(), sequences.end(),
            [](const Sequence& a, const Sequence& b) {
              return a.first_q < b.first_q;
            });
  for (size_t i = 1; i < sequences.size(); ++i) {
    const Sequence& before = sequences[i - 1];
    if (before.first_q + before.rows_q > sequences[i].first_q) {
      return Refuse(absl::StrCat("sequences ", before.index, " and ",
                                 sequences[i].index,
                                 " share rows of O: no reference order"));
    }
  }
  return absl::OkStatus();
}

// The element (row, head, 0) of sequence b as `s` places it.
int64_t At(const Strides& s, int64_t b, int64_t row, int64_t head) {
  return b * s.batch + row * s.seq + head * s.head;
}

// Where the LSE of row i of sequence `seq` and query head h is.
int64_t LseAt(const AttentionProblem& r, const Sequence& seq, int64_t head,
              int64_t i) {
  if (r.variable_lengths) return head * r.total_q + seq.first_q + i;
  return (seq.index * r.heads_q + head) * r.seq_q + i;
}

// The keys row i of `seq` sees: 0..KeysSeen - 1.
int64_t KeysSeen(const AttentionProblem& r, const Sequence& seq, int64_t i) {
  if (!r.causal) return seq.rows_k;
  return std::clamp<int64_t>(i + seq.rows_k - seq.rows_q + 1, 0, seq.rows_k);
}

// Every element position of one of Q, K, V, O (every row allocated, owned
// by a sequence or not), set in a mask of its span.
std::vector<bool> Occupied(const AttentionProblem& r, const Strides& s,
                           int64_t rows, int64_t heads, int64_t span) {
  std::vector<bool> occupied(static_cast<size_t>(span));
  const int64_t sequences = r.variable_lengths ? 1 : r.batch;
  for (int64_t b = 0; b < sequences; ++b) {
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t at = At(s, b, row, h);
        for (int64_t d = 0; d < r.head_dim; ++d) occupied[at + d] = true;
      }
    }
  }
  return occupied;
}

std::vector<float> Decoded(const std::vector<uint16_t>& bits,
                           ptx::ScalarType element) {
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    values[i] = gemm::HalfBitsToFloat(bits[i], element);
  }
  return values;
}

// The checks ReferenceAttention and CompareAttention share: the problem,
// the inputs' sizes and the offsets.
absl::StatusOr<AttentionSpans> CheckInputs(const AttentionProblem& problem,
                                           const AttentionInputs& inputs) {
  if (absl::Status valid = ValidateAttentionProblem(problem); !valid.ok()) {
    return valid;
  }
  absl::StatusOr<AttentionSpans> spans = StoredSpans(problem);
  if (!spans.ok()) return spans.status();
  struct Input {
    absl::string_view name;
    size_t size;
    int64_t span;
  };
  for (const Input& input : {Input{"Q", inputs.q.size(), spans->q},
                             Input{"K", inputs.k.size(), spans->k},
                             Input{"V", inputs.v.size(), spans->v}}) {
    if (static_cast<int64_t>(input.size) < input.span) {
      return Refuse(absl::StrCat(input.name, " holds ", input.size,
                                 " elements, fewer than its span of ",
                                 input.span));
    }
  }
  if (absl::Status offsets = CheckOffsets(Resolved(problem), inputs);
      !offsets.ok()) {
    return offsets;
  }
  return spans;
}

}  // namespace

std::vector<uint16_t> RandomElements(int64_t count, ptx::ScalarType element,
                                     uint32_t seed, Distribution distribution) {
  Random random(seed);
  std::vector<uint16_t> bits(static_cast<size_t>(std::max<int64_t>(count, 0)));
  for (uint16_t& value : bits) {
    const double x = distribution == Distribution::kNormal
                         ? random.Normal()
                         : 2.0 * random.Uniform() - 1.0;
    value = gemm::FloatToHalfBits(static_cast<float>(x), element);
  }
  return bits;
}

absl::StatusOr<AttentionInputs> RandomAttentionInputs(
    const AttentionProblem& problem, uint32_t seed, Distribution distribution) {
  if (absl::Status valid = ValidateAttentionProblem(problem); !valid.ok()) {
    return valid;
  }
  const AttentionProblem r = Resolved(problem);
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(r);
  if (!spans.ok()) return spans.status();
  const int64_t rows_q = r.variable_lengths ? r.total_q : r.seq_q;
  const int64_t rows_k = r.variable_lengths ? r.total_k : r.seq_k;
  struct Tensor {
    std::vector<uint16_t>* bits;
    int64_t span;
    const Strides& strides;
    int64_t rows, heads;
  };
  AttentionInputs inputs;
  uint32_t tensor_seed = seed;
  for (const Tensor& t :
       {Tensor{&inputs.q, spans->q, r.q_stride, rows_q, r.heads_q},
        Tensor{&inputs.k, spans->k, r.k_stride, rows_k, r.heads_kv},
        Tensor{&inputs.v, spans->v, r.v_stride, rows_k, r.heads_kv}}) {
    *t.bits = RandomElements(t.span, r.element, tensor_seed++, distribution);
    const std::vector<bool> occupied =
        Occupied(r, t.strides, t.rows, t.heads, t.span);
    for (size_t i = 0; i < occupied.size(); ++i) {
      if (!occupied[i]) (*t.bits)[i] = kNanBits;
    }
  }
  return inputs;
}

AttentionProblem WithPaddedStrides(const AttentionProblem& problem,
                                   int64_t pad) {
  AttentionProblem p = problem;
  const int64_t heads_kv = p.heads_kv == 0 ? p.heads_q : p.heads_kv;
  const int64_t rows_q = p.variable_lengths ? p.total_q : p.seq_q;
  const int64_t rows_k = p.variable_lengths ? p.total_k : p.seq_k;
  const auto pad_strides = [&](Strides& s, int64_t rows, int64_t heads,
                               int64_t padding) {
    // Inner to outer: each level steps over its inner one's count and
    // `padding` more.
    int64_t& inner = p.layout == Layout::kBatchHeadSeqDim ? s.seq : s.head;
    int64_t& outer = p.layout == Layout::kBatchHeadSeqDim ? s.head : s.seq;
    const int64_t inner_count =
        p.layout == Layout::kBatchHeadSeqDim ? rows : heads;
    const int64_t outer_count =
        p.layout == Layout::kBatchHeadSeqDim ? heads : rows;
    inner = p.head_dim + padding;
    outer = inner_count * inner + padding;
    s.batch = p.variable_lengths ? 0 : outer_count * outer + padding;
  };
  pad_strides(p.q_stride, rows_q, p.heads_q, pad);
  pad_strides(p.k_stride, rows_k, heads_kv, pad);
  pad_strides(p.v_stride, rows_k, heads_kv, pad);
  pad_strides(p.o_stride, rows_q, p.heads_q, 2 * pad);
  return p;
}

std::vector<int32_t> CumulativeOffsets(const std::vector<int32_t>& lengths) {
  std::vector<int32_t> offsets = {0};
  for (int32_t length : lengths) offsets.push_back(offsets.back() + length);
  return offsets;
}

absl::Status ReferenceAttention(const AttentionProblem& problem,
                                const AttentionInputs& inputs,
                                std::vector<float>* o,
                                std::vector<float>* lse) {
  const absl::StatusOr<AttentionSpans> spans = CheckInputs(problem, inputs);
  if (!spans.ok()) return spans.status();
  if (static_cast<int64_t>(o->size()) < spans->o) {
    return Refuse(absl::StrCat("O holds ", o->size(),
                               " elements, fewer than its span of ", spans->o));
  }
  if (lse != nullptr && static_cast<int64_t>(lse->size()) < spans->lse) {
    return Refuse(absl::StrCat("the LSE holds ", lse->size(),
                               " elements, fewer than its span of ",
                               spans->lse));
  }
  const AttentionProblem r = Resolved(problem);
  const std::vector<float> q = Decoded(inputs.q, r.element);
  const std::vector<float> k = Decoded(inputs.k, r.element);
  const std::vector<float> v = Decoded(inputs.v, r.element);
  const int64_t group = r.heads_q / r.heads_kv;
  const double scale = *r.scale;
  const int64_t dim = r.head_dim;
  std::vector<double> scores, out(static_cast<size_t>(dim));
  for (const Sequence& seq : Sequences(r, inputs)) {
    for (int64_t h = 0; h < r.heads_q; ++h) {
      const int64_t kv = h / group;
      for (int64_t i = 0; i < seq.rows_q; ++i) {
        const int64_t keys = KeysSeen(r, seq, i);
        const int64_t q_at = At(r.q_stride, seq.index, seq.first_q + i, h);
        scores.assign(static_cast<size_t>(keys), 0.0);
        double max = -kInfinity;
        for (int64_t j = 0; j < keys; ++j) {
          const int64_t k_at = At(r.k_stride, seq.index, seq.first_k + j, kv);
          double dot = 0;
          for (int64_t d = 0; d < dim; ++d) {
            dot += static_cast<double>(q[q_at + d]) * k[k_at + d];
          }
          scores[j] = scale * dot;
          max = std::max(max, scores[j]);
        }
        double sum = 0;
        for (double& s : scores) {
          s = std::exp(s - max);
          sum += s;
        }
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t j = 0; j < keys; ++j) {
          const double p = scores[j] / sum;
          const int64_t v_at = At(r.v_stride, seq.index, seq.first_k + j, kv);
          for (int64_t d = 0; d < dim; ++d) out[d] += p * v[v_at + d];
        }
        const int64_t o_at = At(r.o_stride, seq.index, seq.first_q + i, h);
        for (int64_t d = 0; d < dim; ++d) {
          (*o)[o_at + d] = static_cast<float>(out[d]);
        }
        if (lse != nullptr) {
          (*lse)[LseAt(r, seq, h, i)] =
              static_cast<float>(keys == 0 ? kInfinity : max + std::log(sum));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<AttentionErrors> CompareAttention(
    const AttentionProblem& problem, const AttentionInputs& inputs,
    const std::vector<double>& got_o, const std::vector<float>& want_o,
    const std::vector<double>* got_lse, const std::vector<float>* want_lse) {
  const absl::StatusOr<AttentionSpans> spans = CheckInputs(problem, inputs);
  if (!spans.ok()) return spans.status();
  if ((got_lse == nullptr) != (want_lse == nullptr)) {
    return Refuse("compare both LSEs or neither");
  }
  const auto shorter = [](size_t size, int64_t span) {
    return static_cast<int64_t>(size) < span;
  };
  if (shorter(got_o.size(), spans->o) || shorter(want_o.size(), spans->o) ||
      (got_lse != nullptr && (shorter(got_lse->size(), spans->lse) ||
                              shorter(want_lse->size(), spans->lse)))) {
    return Refuse("an O or LSE is shorter than its span");
  }
  const AttentionProblem r = Resolved(problem);
  AttentionErrors errors;
  std::vector<bool> o_owned(got_o.size());
  std::vector<bool> lse_owned(got_lse == nullptr ? 0 : got_lse->size());
  double difference = 0, norm = 0;
  bool finite = true;
  for (const Sequence& seq : Sequences(r, inputs)) {
    for (int64_t h = 0; h < r.heads_q; ++h) {
      for (int64_t i = 0; i < seq.rows_q; ++i) {
        const int64_t o_at = At(r.o_stride, seq.index, seq.first_q + i, h);
        for (int64_t d = o_at; d < o_at + r.head_dim; ++d) {
          o_owned[d] = true;
          finite = finite && std::isfinite(got_o[d]);
          const double want = want_o[d];
          difference += (got_o[d] - want) * (got_o[d] - want);
          norm += want * want;
        }
        if (got_lse == nullptr) continue;
        const int64_t at = LseAt(r, seq, h, i);
        lse_owned[at] = true;
        const double got = (*got_lse)[at];
        if (KeysSeen(r, seq, i) == 0) {
          if (got != kInfinity) ++errors.lse_infinity_mismatches;
        } else {
          const double error =
              std::isfinite(got) ? std::abs(got - (*want_lse)[at]) : kInfinity;
          errors.lse_max_abs = std::max(errors.lse_max_abs, error);
        }
      }
    }
  }
  errors.o_relative = !finite     ? kInfinity
                      : norm == 0 ? std::sqrt(difference)
                                  : std::sqrt(difference / norm);
  for (size_t at = 0; at < got_o.size(); ++at) {
    if (o_owned[at] || std::isnan(got_o[at])) continue;
    if (errors.o_written_outside++ == 0) {
      errors.first_o_written_outside = static_cast<int64_t>(at);
    }
  }
  for (size_t at = 0; at < lse_owned.size(); ++at) {
    if (lse_owned[at] || std::isnan((*got_lse)[at])) continue;
    if (errors.lse_written_outside++ == 0) {
      errors.first_lse_written_outside = static_cast<int64_t>(at);
    }
  }
  return errors;
}

}  // namespace ptxgen::attention
