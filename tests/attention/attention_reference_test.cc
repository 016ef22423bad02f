// The attention test support on the host: the float64 reference on cases
// small enough to compute by hand (one key, equal keys, the causal mask's
// bottom-right corner, GQA and MQA's head mapping, the default scale);
// variable lengths as independent sequences; layouts and padded strides
// giving the same answer with their gaps untouched; the random inputs; the
// comparison; and what is refused.
#include "tests/attention/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/attention/problem.h"

namespace ptxgen::attention {
namespace {

using ptx::ScalarType;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kDim = 16;

// One sequence, one head, head_dim 16, bf16, packed [seq, dim], scale 0.5.
AttentionProblem Tiny(int64_t seq_q, int64_t seq_k) {
  AttentionProblem p;
  p.seq_q = seq_q;
  p.seq_k = seq_k;
  p.head_dim = kDim;
  p.scale = 0.5f;
  return p;
}

// `rows` rows of 16 elements, element d of row r value(r, d), in bf16.
std::vector<uint16_t> Rows(
    int64_t rows, const std::function<float(int64_t, int64_t)>& value) {
  std::vector<uint16_t> bits;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = 0; d < kDim; ++d) {
      bits.push_back(gemm::FloatToHalfBits(value(r, d), ScalarType::kBF16));
    }
  }
  return bits;
}

// A row of 16 elements from its first ones, the rest 0.
std::function<float(int64_t, int64_t)> Leading(
    std::vector<std::vector<float>> rows) {
  return [rows = std::move(rows)](int64_t r, int64_t d) {
    const std::vector<float>& row = rows[r];
    return d < static_cast<int64_t>(row.size()) ? row[d] : 0.0f;
  };
}

// The value rows of the tiny cases: row r, element d is r + d / 16, exact
// in bf16.
float ValueAt(int64_t r, int64_t d) {
  return static_cast<float>(r) + static_cast<float>(d) / 16;
}

struct Outputs {
  std::vector<float> o, lse;
};

// ReferenceAttention into outputs of exactly their spans, NaN before.
absl::StatusOr<Outputs> Reference(const AttentionProblem& problem,
                                  const AttentionInputs& inputs) {
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(problem);
  if (!spans.ok()) return spans.status();
  Outputs out{std::vector<float>(spans->o, kNan),
              std::vector<float>(spans->lse, kNan)};
  if (absl::Status s = ReferenceAttention(problem, inputs, &out.o, &out.lse);
      !s.ok()) {
    return s;
  }
  return out;
}

// Row i of O in a packed one-head problem.
std::vector<float> ORow(const Outputs& out, int64_t i) {
  return std::vector<float>(out.o.begin() + i * kDim,
                            out.o.begin() + (i + 1) * kDim);
}

TEST(AttentionReferenceTest, OneKeyGivesItsValueRowAndItsScore) {
  const AttentionProblem p = Tiny(2, 1);
  AttentionInputs in;
  in.q = Rows(2, Leading({{1, 2}, {-1}}));
  in.k = Rows(1, Leading({{3, 0.5f}}));
  in.v = Rows(1, ValueAt);
  const absl::StatusOr<Outputs> out = Reference(p, in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t d = 0; d < kDim; ++d) {
      EXPECT_EQ(ORow(*out, i)[d], ValueAt(0, d)) << "row " << i;
    }
  }
  EXPECT_EQ(out->lse[0], 0.5f * (3 + 2 * 0.5f));
  EXPECT_EQ(out->lse[1], 0.5f * -3);
}

TEST(AttentionReferenceTest, TwoEqualKeysAverageTheirValues) {
  const AttentionProblem p = Tiny(1, 2);
  AttentionInputs in;
  in.q = Rows(1, Leading({{1}}));
  in.k = Rows(2, Leading({{1}, {1}}));
  in.v = Rows(2, ValueAt);
  const absl::StatusOr<Outputs> out = Reference(p, in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t d = 0; d < kDim; ++d) {
    EXPECT_FLOAT_EQ(out->o[d], (ValueAt(0, d) + ValueAt(1, d)) / 2);
  }
  EXPECT_FLOAT_EQ(out->lse[0], 0.5f + std::log(2.0f));
}

TEST(AttentionReferenceTest, UnequalScoresWeighByTheirExponentials) {
  const AttentionProblem p = Tiny(1, 2);
  AttentionInputs in;
  in.q = Rows(1, Leading({{1}}));
  in.k = Rows(2, Leading({{0}, {2}}));  // scores 0 and 1
  in.v = Rows(2, ValueAt);
  const absl::StatusOr<Outputs> out = Reference(p, in);
  ASSERT_TRUE(out.ok()) << out.status();
  const double e = std::exp(1.0);
  for (int64_t d = 0; d < kDim; ++d) {
    EXPECT_FLOAT_EQ(out->o[d], (ValueAt(0, d) + e * ValueAt(1, d)) / (1 + e));
  }
  EXPECT_FLOAT_EQ(out->lse[0], std::log(1 + e));
}

// With every key 0 each row's scores are equal: O is the mean of the value
// rows it sees and the LSE the log of their count.
struct CausalCase {
  int64_t seq_q, seq_k;
  std::vector<int64_t> keys_seen;  // by each query row
};

TEST(AttentionReferenceTest, CausalMaskIsAlignedBottomRight) {
  const std::vector<CausalCase> cases = {
      {3, 3, {1, 2, 3}},     // square: row i sees keys 0..i
      {2, 4, {3, 4}},        // fewer queries: the last row sees every key
      {3, 2, {0, 1, 2}},     // more queries: the first row sees none
      {4, 1, {0, 0, 0, 1}},  // one key: only the last row sees it
      {1, 5, {5}},           // decoding one row sees everything
  };
  for (const CausalCase& c : cases) {
    SCOPED_TRACE(absl::StrCat("seq_q ", c.seq_q, ", seq_k ", c.seq_k));
    AttentionProblem p = Tiny(c.seq_q, c.seq_k);
    p.causal = true;
    AttentionInputs in;
    in.q = Rows(c.seq_q, [](int64_t r, int64_t d) { return r + d + 1.0f; });
    in.k = Rows(c.seq_k, [](int64_t, int64_t) { return 0.0f; });
    in.v = Rows(c.seq_k, ValueAt);
    const absl::StatusOr<Outputs> out = Reference(p, in);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int64_t i = 0; i < c.seq_q; ++i) {
      const int64_t n = c.keys_seen[i];
      if (n == 0) {
        EXPECT_EQ(ORow(*out, i), std::vector<float>(kDim, 0.0f)) << i;
        EXPECT_EQ(out->lse[i], kInf) << i;
        continue;
      }
      for (int64_t d = 0; d < kDim; ++d) {
        // The mean of rows 0..n-1: (n - 1) / 2 + d / 16.
        EXPECT_FLOAT_EQ(out->o[i * kDim + d],
                        (n - 1) / 2.0f + static_cast<float>(d) / 16)
            << "row " << i << ", element " << d;
      }
      EXPECT_FLOAT_EQ(out->lse[i], std::log(static_cast<float>(n))) << i;
    }
  }
}

TEST(AttentionReferenceTest, QueryHeadsReadTheirGroupsKeyValueHead) {
  // Packed [seq, heads, dim]. Every query head's row is (1, 0, ...); K/V
  // head g's keys score g == 0 ? (0, 1) : (1, 0), and its value rows are
  // 10g + (1, 0): a query head of group g gets 10g + its weight of key 0.
  for (const int64_t heads_kv : {int64_t{1}, int64_t{2}, int64_t{4}}) {
    SCOPED_TRACE(absl::StrCat("heads_kv ", heads_kv));
    AttentionProblem p = Tiny(1, 2);
    p.heads_q = 4;
    p.heads_kv = heads_kv;
    const auto stored =
        [](int64_t rows, int64_t heads,
           const std::function<float(int64_t, int64_t, int64_t)>& value) {
          std::vector<uint16_t> bits;
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t h = 0; h < heads; ++h) {
              for (int64_t d = 0; d < kDim; ++d) {
                bits.push_back(
                    gemm::FloatToHalfBits(value(r, h, d), ScalarType::kBF16));
              }
            }
          }
          return bits;
        };
    AttentionInputs in;
    in.q = stored(
        1, 4, [](int64_t, int64_t, int64_t d) { return d == 0 ? 1.0f : 0.0f; });
    in.k = stored(2, heads_kv, [](int64_t r, int64_t g, int64_t d) {
      return d == 0 && (g == 0 ? r == 1 : r == 0) ? 2.0f : 0.0f;
    });
    in.v = stored(2, heads_kv, [](int64_t r, int64_t g, int64_t) {
      return 10.0f * g + (r == 0 ? 1.0f : 0.0f);
    });
    const absl::StatusOr<Outputs> out = Reference(p, in);
    ASSERT_TRUE(out.ok()) << out.status();
    const double e = std::exp(1.0);
    for (int64_t h = 0; h < 4; ++h) {
      const int64_t g = h / (4 / heads_kv);
      const double weight_of_key_0 = g == 0 ? 1 / (1 + e) : e / (1 + e);
      EXPECT_FLOAT_EQ(out->o[h * kDim + 5], 10.0 * g + weight_of_key_0)
          << "query head " << h;
      EXPECT_FLOAT_EQ(out->lse[h], std::log(1 + e)) << "query head " << h;
    }
  }
}

TEST(AttentionReferenceTest, TheDefaultScaleIsOneOverTheRootOfHeadDim) {
  AttentionProblem p = Tiny(1, 1);
  p.head_dim = 64;
  p.scale.reset();
  AttentionInputs in;
  in.q.assign(64, gemm::FloatToHalfBits(1.0f, ScalarType::kBF16));
  in.k.assign(64, gemm::FloatToHalfBits(0.5f, ScalarType::kBF16));
  in.v.assign(64, gemm::FloatToHalfBits(3.0f, ScalarType::kBF16));
  const absl::StatusOr<Outputs> out = Reference(p, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->lse[0], 64 * 0.5f / 8);
  EXPECT_EQ(out->o[0], 3.0f);
}

// Two query heads sharing one K/V head, packed [total, heads, dim].
AttentionProblem Varlen(const std::vector<int32_t>& lengths_q,
                        const std::vector<int32_t>& lengths_k, bool causal) {
  AttentionProblem p;
  p.batch = static_cast<int64_t>(lengths_q.size());
  p.heads_q = 2;
  p.heads_kv = 1;
  p.head_dim = kDim;
  p.element = ScalarType::kF16;
  p.causal = causal;
  p.variable_lengths = true;
  p.seq_q = p.seq_k = 1;
  for (int32_t l : lengths_q) p.seq_q = std::max<int64_t>(p.seq_q, l);
  for (int32_t l : lengths_k) p.seq_k = std::max<int64_t>(p.seq_k, l);
  p.total_q = CumulativeOffsets(lengths_q).back() + 2;  // 2 rows unowned
  p.total_k = CumulativeOffsets(lengths_k).back() + 1;
  return p;
}

// Each sequence of a variable-length problem gives what it gives alone (a
// fixed-length problem of its rows); a sequence without keys gives O 0 and
// LSE +inf; the unowned rows of O and the LSE keep their NaN.
TEST(AttentionReferenceTest, VariableLengthSequencesAreIndependent) {
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    const std::vector<int32_t> lengths_q = {3, 0, 1, 5, 2};
    const std::vector<int32_t> lengths_k = {4, 0, 1, 2, 0};
    const AttentionProblem p = Varlen(lengths_q, lengths_k, causal);
    absl::StatusOr<AttentionInputs> in = RandomAttentionInputs(p, 7);
    ASSERT_TRUE(in.ok()) << in.status();
    in->cu_seqlens_q = CumulativeOffsets(lengths_q);
    in->cu_seqlens_k = CumulativeOffsets(lengths_k);
    const absl::StatusOr<Outputs> out = Reference(p, *in);
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t row = 2 * kDim;  // elements of one row of Q, O
    for (size_t b = 0; b < lengths_q.size(); ++b) {
      const int64_t q0 = in->cu_seqlens_q[b], k0 = in->cu_seqlens_k[b];
      const int64_t rows_q = lengths_q[b], rows_k = lengths_k[b];
      if (rows_q == 0) continue;
      SCOPED_TRACE(absl::StrCat("sequence ", b));
      if (rows_k == 0) {
        for (int64_t at = q0 * row; at < (q0 + rows_q) * row; ++at) {
          EXPECT_EQ(out->o[at], 0.0f);
        }
        for (int64_t h = 0; h < 2; ++h) {
          for (int64_t i = 0; i < rows_q; ++i) {
            EXPECT_EQ(out->lse[h * p.total_q + q0 + i], kInf);
          }
        }
        continue;
      }
      AttentionProblem alone = p;
      alone.variable_lengths = false;
      alone.batch = 1;
      alone.seq_q = rows_q;
      alone.seq_k = rows_k;
      alone.total_q = alone.total_k = 0;
      AttentionInputs part;
      part.q.assign(in->q.begin() + q0 * row,
                    in->q.begin() + (q0 + rows_q) * row);
      part.k.assign(in->k.begin() + k0 * kDim,
                    in->k.begin() + (k0 + rows_k) * kDim);
      part.v.assign(in->v.begin() + k0 * kDim,
                    in->v.begin() + (k0 + rows_k) * kDim);
      const absl::StatusOr<Outputs> expected = Reference(alone, part);
      ASSERT_TRUE(expected.ok()) << expected.status();
      EXPECT_EQ(std::vector<float>(out->o.begin() + q0 * row,
                                   out->o.begin() + (q0 + rows_q) * row),
                expected->o);
      for (int64_t h = 0; h < 2; ++h) {
        for (int64_t i = 0; i < rows_q; ++i) {
          EXPECT_EQ(out->lse[h * p.total_q + q0 + i],
                    expected->lse[h * rows_q + i])
              << "head " << h << ", row " << i;
        }
      }
    }
    const int64_t owned = in->cu_seqlens_q.back();
    for (int64_t at = owned * row; at < p.total_q * row; ++at) {
      EXPECT_TRUE(std::isnan(out->o[at])) << "O element " << at;
    }
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t i = owned; i < p.total_q; ++i) {
        EXPECT_TRUE(std::isnan(out->lse[h * p.total_q + i]))
            << "head " << h << ", row " << i;
      }
    }
  }
}

// A batch of 2 with GQA 2:1, causal, seq_q 3 and seq_k 5.
AttentionProblem Strided() {
  AttentionProblem p;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seq_q = 3;
  p.seq_k = 5;
  p.head_dim = kDim;
  p.causal = true;
  return p;
}

// Q, K, V of `packed` (Strided(), [batch, seq, heads, dim] packed) copied
// element by element to where `to` stores them; positions no element
// occupies NaN.
AttentionInputs Restored(const AttentionProblem& packed,
                         const AttentionInputs& in,
                         const AttentionProblem& to) {
  const AttentionProblem from = Resolved(packed);
  const AttentionProblem r = Resolved(to);
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(to);
  AttentionInputs out;
  out.q.assign(spans->q, 0x7FFF);
  out.k.assign(spans->k, 0x7FFF);
  out.v.assign(spans->v, 0x7FFF);
  const auto copy = [&](const std::vector<uint16_t>& source,
                        const Strides& s_from, std::vector<uint16_t>& dest,
                        const Strides& s_to, int64_t rows, int64_t heads) {
    for (int64_t b = 0; b < r.batch; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t h = 0; h < heads; ++h) {
          for (int64_t d = 0; d < r.head_dim; ++d) {
            dest[b * s_to.batch + i * s_to.seq + h * s_to.head + d] =
                source[b * s_from.batch + i * s_from.seq + h * s_from.head + d];
          }
        }
      }
    }
  };
  copy(in.q, from.q_stride, out.q, r.q_stride, r.seq_q, r.heads_q);
  copy(in.k, from.k_stride, out.k, r.k_stride, r.seq_k, r.heads_kv);
  copy(in.v, from.v_stride, out.v, r.v_stride, r.seq_k, r.heads_kv);
  return out;
}

// The same tensors stored in either layout, packed or with every stride
// padded (WithPaddedStrides), give the same O and LSE, and the
// gaps of O keep their NaN.
TEST(AttentionReferenceTest, LayoutsAndPaddedStridesGiveTheSameAnswer) {
  const AttentionProblem packed = Strided();
  absl::StatusOr<AttentionInputs> in = RandomAttentionInputs(packed, 3);
  ASSERT_TRUE(in.ok()) << in.status();
  const absl::StatusOr<Outputs> expected = Reference(packed, *in);
  ASSERT_TRUE(expected.ok()) << expected.status();

  struct Storage {
    std::string name;
    Layout layout;
    bool padded;
  };
  for (const Storage& storage :
       {Storage{"bhsd packed", Layout::kBatchHeadSeqDim, false},
        Storage{"bshd padded", Layout::kBatchSeqHeadDim, true},
        Storage{"bhsd padded", Layout::kBatchHeadSeqDim, true}}) {
    SCOPED_TRACE(storage.name);
    AttentionProblem p = packed;
    p.layout = storage.layout;
    if (storage.padded) p = WithPaddedStrides(p, 8);
    const AttentionInputs stored = Restored(packed, *in, p);
    const absl::StatusOr<Outputs> out = Reference(p, stored);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->lse, expected->lse);
    const AttentionProblem r = Resolved(p);
    const AttentionProblem e = Resolved(packed);
    int64_t written = 0;
    for (float value : out->o) written += std::isnan(value) ? 0 : 1;
    EXPECT_EQ(written, r.batch * r.seq_q * r.heads_q * r.head_dim)
        << "O's gaps were written";
    for (int64_t b = 0; b < r.batch; ++b) {
      for (int64_t i = 0; i < r.seq_q; ++i) {
        for (int64_t h = 0; h < r.heads_q; ++h) {
          for (int64_t d = 0; d < r.head_dim; ++d) {
            const Strides& s = r.o_stride;
            const Strides& t = e.o_stride;
            ASSERT_EQ(out->o[b * s.batch + i * s.seq + h * s.head + d],
                      expected->o[b * t.batch + i * t.seq + h * t.head + d])
                << "sequence " << b << ", row " << i << ", head " << h
                << ", element " << d;
          }
        }
      }
    }
  }
}

TEST(AttentionReferenceTest, RandomElementsAreRepeatableAndInRange) {
  const std::vector<uint16_t> a = RandomElements(4096, ScalarType::kF16, 5);
  EXPECT_EQ(a, RandomElements(4096, ScalarType::kF16, 5));
  EXPECT_NE(a, RandomElements(4096, ScalarType::kF16, 6));
  double sum = 0;
  for (uint16_t bits : a) {
    const float value = gemm::HalfBitsToFloat(bits, ScalarType::kF16);
    ASSERT_GE(value, -1.0f);
    ASSERT_LE(value, 1.0f);
    sum += value;
  }
  EXPECT_NEAR(sum / a.size(), 0.0, 0.05);

  const std::vector<uint16_t> normal =
      RandomElements(8192, ScalarType::kBF16, 5, Distribution::kNormal);
  double mean = 0, square = 0;
  for (uint16_t bits : normal) {
    const double value = gemm::HalfBitsToFloat(bits, ScalarType::kBF16);
    mean += value / normal.size();
    square += value * value / normal.size();
  }
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(square - mean * mean, 1.0, 0.05);
}

TEST(AttentionReferenceTest, RandomInputsPutNanInThePaddingOnly) {
  AttentionProblem p = Strided();
  p.layout = Layout::kBatchHeadSeqDim;
  p.k_stride.seq = kDim + 8;
  const absl::StatusOr<AttentionInputs> in = RandomAttentionInputs(p, 1);
  ASSERT_TRUE(in.ok()) << in.status();
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(p);
  ASSERT_TRUE(spans.ok()) << spans.status();
  const auto nans = [](const std::vector<uint16_t>& bits) {
    int64_t count = 0;
    for (uint16_t b : bits) {
      count += std::isnan(gemm::HalfBitsToFloat(b, ScalarType::kBF16)) ? 1 : 0;
    }
    return count;
  };
  EXPECT_EQ(static_cast<int64_t>(in->q.size()), spans->q);
  EXPECT_EQ(nans(in->q), 0);
  EXPECT_EQ(nans(in->v), 0);
  // K: 2 sequences x 2 heads x 5 rows of 16 elements in rows of 24.
  EXPECT_EQ(static_cast<int64_t>(in->k.size()), spans->k);
  EXPECT_EQ(static_cast<int64_t>(in->k.size()) - nans(in->k), 2 * 2 * 5 * kDim);
}

TEST(AttentionReferenceTest, CompareMeasuresWhatARunGotWrong) {
  const std::vector<int32_t> lengths_q = {3, 2}, lengths_k = {0, 4};
  const AttentionProblem p = Varlen(lengths_q, lengths_k, /*causal=*/true);
  absl::StatusOr<AttentionInputs> in = RandomAttentionInputs(p, 9);
  ASSERT_TRUE(in.ok()) << in.status();
  in->cu_seqlens_q = CumulativeOffsets(lengths_q);
  in->cu_seqlens_k = CumulativeOffsets(lengths_k);
  const absl::StatusOr<Outputs> want = Reference(p, *in);
  ASSERT_TRUE(want.ok()) << want.status();
  const std::vector<double> o(want->o.begin(), want->o.end());
  const std::vector<double> lse(want->lse.begin(), want->lse.end());
  const auto compare = [&](const std::vector<double>& got_o,
                           const std::vector<double>& got_lse) {
    absl::StatusOr<AttentionErrors> errors =
        CompareAttention(p, *in, got_o, want->o, &got_lse, &want->lse);
    EXPECT_TRUE(errors.ok()) << errors.status();
    return errors.value_or(AttentionErrors{});
  };

  const AttentionErrors same = compare(o, lse);
  EXPECT_EQ(same.o_relative, 0);
  EXPECT_EQ(same.lse_max_abs, 0);
  EXPECT_EQ(same.lse_infinity_mismatches, 0);
  EXPECT_EQ(same.o_written_outside, 0);
  EXPECT_EQ(same.lse_written_outside, 0);

  // Sequence 1's rows are 3 and 4 of 7; sequence 0's see no key.
  const int64_t row = 2 * kDim;
  std::vector<double> off = o;
  off[3 * row] += 0.5;
  EXPECT_GT(compare(off, lse).o_relative, 0);
  off[3 * row] = NAN;
  EXPECT_EQ(compare(off, lse).o_relative, INFINITY);

  std::vector<double> outside = o;
  outside[5 * row + 1] = 0;  // row 5: no sequence's
  outside[6 * row] = 0;
  const AttentionErrors written = compare(outside, lse);
  EXPECT_EQ(written.o_written_outside, 2);
  EXPECT_EQ(written.first_o_written_outside, 5 * row + 1);
  EXPECT_EQ(written.o_relative, 0);

  std::vector<double> bad_lse = lse;
  bad_lse[0] = 0;              // head 0, row 0 sees no key
  bad_lse[3] += 0.25;          // head 0, row 3 sees keys
  bad_lse[p.total_q + 6] = 1;  // head 1, row 6: no sequence's
  const AttentionErrors lse_errors = compare(o, bad_lse);
  EXPECT_EQ(lse_errors.lse_infinity_mismatches, 1);
  EXPECT_NEAR(lse_errors.lse_max_abs, 0.25, 1e-6);
  EXPECT_EQ(lse_errors.lse_written_outside, 1);
  EXPECT_EQ(lse_errors.first_lse_written_outside, p.total_q + 6);
  bad_lse[3] = INFINITY;
  EXPECT_EQ(compare(o, bad_lse).lse_max_abs, INFINITY);

  const absl::StatusOr<AttentionErrors> one_lse =
      CompareAttention(p, *in, o, want->o, &lse, nullptr);
  EXPECT_EQ(one_lse.status().code(), absl::StatusCode::kInvalidArgument);
}

// A sequence whose offsets break AttentionOperands' rules is skipped, as
// the kernel skips it: its rows keep what they held, and every other
// sequence gives what it gives with good offsets.
TEST(AttentionReferenceTest, SkipsTheSequencesTheKernelSkips) {
  const std::vector<int32_t> lengths = {2, 3, 2};  // rows 0..1, 2..4, 5..6
  const AttentionProblem p = Varlen(lengths, lengths, /*causal=*/true);
  absl::StatusOr<AttentionInputs> good = RandomAttentionInputs(p, 3);
  ASSERT_TRUE(good.ok()) << good.status();
  good->cu_seqlens_q = good->cu_seqlens_k = CumulativeOffsets(lengths);
  const absl::StatusOr<Outputs> want = Reference(p, *good);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(p.total_q, 9);
  ASSERT_EQ(p.total_k, 8);
  ASSERT_EQ(p.seq_q, 3);

  struct Skip {
    std::string what;
    std::vector<int32_t> cu_q, cu_k;
    int64_t seq_q;
    std::vector<int64_t> skipped;
  };
  const std::vector<Skip> skips = {
      {"an end before its start", {0, 2, 1, 7}, {0, 2, 5, 7}, 3, {1, 2}},
      {"rows past total_q", {0, 2, 5, 10}, {0, 2, 5, 7}, 8, {2}},
      {"keys past total_k", {0, 2, 5, 7}, {0, 2, 5, 9}, 3, {2}},
      {"keys from a negative row", {0, 2, 5, 7}, {-1, 2, 5, 7}, 3, {0}},
      {"more rows than seq_q", {0, 2, 5, 7}, {0, 2, 5, 7}, 2, {1}},
      {"int32's extremes",
       {0, 2, INT32_MIN, INT32_MAX},
       {0, 2, 5, 7},
       3,
       {1, 2}},
  };
  const int64_t row = 2 * kDim;  // elements of one row of O
  for (const Skip& skip : skips) {
    SCOPED_TRACE(skip.what);
    AttentionProblem problem = p;
    problem.seq_q = skip.seq_q;
    AttentionInputs in = *good;
    in.cu_seqlens_q = skip.cu_q;
    in.cu_seqlens_k = skip.cu_k;
    Outputs expected = *want;
    for (const int64_t b : skip.skipped) {
      const int32_t first = good->cu_seqlens_q[b];
      const int32_t end = good->cu_seqlens_q[b + 1];
      std::fill(expected.o.begin() + first * row,
                expected.o.begin() + end * row, kNan);
      for (int64_t h = 0; h < 2; ++h) {
        std::fill(expected.lse.begin() + h * p.total_q + first,
                  expected.lse.begin() + h * p.total_q + end, kNan);
      }
    }
    const absl::StatusOr<Outputs> got = Reference(problem, in);
    ASSERT_TRUE(got.ok()) << got.status();
    const auto same = [](float a, float b) {
      return a == b || (std::isnan(a) && std::isnan(b));
    };
    EXPECT_TRUE(std::equal(got->o.begin(), got->o.end(), expected.o.begin(),
                           expected.o.end(), same));
    EXPECT_TRUE(std::equal(got->lse.begin(), got->lse.end(),
                           expected.lse.begin(), expected.lse.end(), same));
  }
}

TEST(AttentionReferenceTest, RefusesWhatItCannotCompute) {
  const std::vector<int32_t> lengths = {2, 3};
  const AttentionProblem p = Varlen(lengths, lengths, /*causal=*/false);
  absl::StatusOr<AttentionInputs> good = RandomAttentionInputs(p, 2);
  ASSERT_TRUE(good.ok()) << good.status();
  good->cu_seqlens_q = good->cu_seqlens_k = CumulativeOffsets(lengths);
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(p);
  ASSERT_TRUE(spans.ok()) << spans.status();

  struct Refusal {
    std::string what;
    std::function<void(AttentionProblem&, AttentionInputs&)> change;
  };
  const std::vector<Refusal> refusals = {
      {"a problem the rules refuse",
       [](AttentionProblem& p, AttentionInputs&) { p.head_dim = 20; }},
      {"Q shorter than its span",
       [](AttentionProblem&, AttentionInputs& in) { in.q.pop_back(); }},
      {"offsets missing",
       [](AttentionProblem&, AttentionInputs& in) { in.cu_seqlens_k = {}; }},
      {"one offset too many",
       [](AttentionProblem&, AttentionInputs& in) {
         in.cu_seqlens_q = {0, 2, 5, 5};
       }},
      {"two computed sequences sharing rows",
       [](AttentionProblem& p, AttentionInputs& in) {
         p.batch = 3;
         in.cu_seqlens_q = {0, 3, 1, 4};  // 0: 0..3, 2: 1..4
         in.cu_seqlens_k = {0, 1, 2, 3};
       }},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.what);
    AttentionProblem problem = p;
    AttentionInputs in = *good;
    refusal.change(problem, in);
    std::vector<float> o(spans->o), lse(spans->lse);
    EXPECT_EQ(ReferenceAttention(problem, in, &o, &lse).code(),
              absl::StatusCode::kInvalidArgument);
  }
  std::vector<float> short_o(spans->o - 1), lse(spans->lse);
  EXPECT_EQ(ReferenceAttention(p, *good, &short_o, &lse).code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<float> o(spans->o), short_lse(spans->lse - 1);
  EXPECT_EQ(ReferenceAttention(p, *good, &o, &short_lse).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ReferenceAttention(p, *good, &o, nullptr).ok());
}

}  // namespace
}  // namespace ptxgen::attention
