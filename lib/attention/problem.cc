// Layer: the problem model, the bottom of lib/attention: resolution,
// validation and the tensors' spans. Calls nothing above lib/ptx.
#include "ptxgen/attention/problem.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "lib/attention/problem_parts.h"
#include "ptxgen/base/extent.h"
#include "ptxgen/ptx/tma.h"

namespace ptxgen::attention {
namespace {

// The messages name TMA's stride limit as a power of two.
static_assert(ptx::kTensorStrideLimitBytes == int64_t{1} << 40);

absl::Status Refuse(absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("attention: ", rule));
}

// a * b; nullopt past int64_t.
std::optional<int64_t> Product(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}
// a * b; past int64_t the largest int64_t, which every bound refuses,
// rather than a wrapped product.
int64_t SaturatingProduct(int64_t a, int64_t b) {
  return Product(a, b).value_or(std::numeric_limits<int64_t>::max());
}

// "a", "a and b", "a, b and c".
std::string Listed(const std::vector<absl::string_view>& items) {
  if (items.size() < 2) return absl::StrJoin(items, "");
  return absl::StrCat(absl::StrJoin(items.begin(), items.end() - 1, ", "),
                      " and ", items.back());
}

using base::Extent;

// A tensor's strides, inner to outer as its layout nests them (dim, the
// innermost, has stride 1), each with its dimension's extent.
struct Level {
  int64_t Strides::*stride;
  absl::string_view name;   // "seq"
  absl::string_view units;  // what it steps between: "rows"
  int64_t count;
};
std::array<Level, 3> Levels(Layout layout, const StoredTensor& t) {
  const Level seq{&Strides::seq, "seq", "rows", t.rows};
  const Level head{&Strides::head, "head", "heads", t.heads};
  const Level batch{&Strides::batch, "batch", "sequences", t.sequences};
  if (layout == Layout::kBatchHeadSeqDim) return {seq, head, batch};
  return {head, seq, batch};
}

// The elements from the tensor's first to past its last; nullopt past
// int64_t.
std::optional<int64_t> TensorSpan(Layout layout, const StoredTensor& t,
                                  int64_t head_dim) {
  std::optional<int64_t> span = head_dim;
  for (const Level& level : Levels(layout, t)) {
    if (span) span = Extent(level.count, t.strides.*level.stride, *span);
  }
  return span;
}

// Every stride of `t` steps past what is inside it, within TMA's limit and
// on its 16-byte boundaries. `given`: the strides as the caller wrote them,
// whose 0s (packed) are named as such, not by the value they resolved to.
absl::Status CheckStrides(Layout layout, const StoredTensor& t,
                          const Strides& given, int64_t head_dim,
                          ptx::ScalarType element, bool variable_lengths) {
  const int64_t bytes = ptx::SizeInBytes(element);
  std::optional<int64_t> inner = head_dim;
  std::vector<absl::string_view> inside = {"head_dim"};
  for (const Level& level : Levels(layout, t)) {
    // Variable lengths have no batch stride (their rule, checked before).
    if (variable_lengths && level.stride == &Strides::batch) break;
    const int64_t value = t.strides.*level.stride;
    const std::string name =
        given.*level.stride == 0
            ? absl::StrCat(t.field, ".", level.name, " (0: packed, ", value,
                           " elements)")
            : absl::StrCat(t.field, ".", level.name, "=", value);
    if (!inner || value < *inner) {
      return Refuse(absl::StrCat(
          name, " is less than the span of the ", Listed(inside),
          " inside it (", inner ? absl::StrCat(*inner) : "more than 2^63-1",
          " elements): ", t.name, "'s ", level.units, " would overlap"));
    }
    if (value >= ptx::kTensorStrideLimitBytes / bytes) {
      return Refuse(absl::StrCat(name, " must be below 2^40 bytes (TMA's ",
                                 "stride limit)"));
    }
    if (value * bytes % ptx::kTensorGlobalAlignmentBytes != 0) {
      return Refuse(absl::StrCat(
          name, " steps ", value * bytes, " bytes: TMA needs each of ", t.name,
          "'s ", level.units, " to start on a ",
          ptx::kTensorGlobalAlignmentBytes, "-byte boundary (a multiple of ",
          ptx::kTensorGlobalAlignmentBytes / bytes, " elements)"));
    }
    inner = Extent(level.count, value, *inner);
    inside.insert(inside.begin(), level.units);
  }
  return absl::OkStatus();
}

// The rules of variable lengths: packed [total, heads, dim] tensors with
// their allocated rows; fixed lengths have neither.
absl::Status CheckVariableLengths(const AttentionProblem& r) {
  if (!r.variable_lengths) {
    if (r.total_q != 0 || r.total_k != 0) {
      return Refuse(
          "total_q and total_k are the packed rows of variable lengths; "
          "leave them 0 with fixed lengths");
    }
    return absl::OkStatus();
  }
  if (r.layout != Layout::kBatchSeqHeadDim) {
    return Refuse(
        "variable lengths store Q, K, V and O [total, heads, dim], the "
        "sequences one after another: the layout must be kBatchSeqHeadDim");
  }
  for (const auto& [name, total] :
       {std::pair<const char*, int64_t>{"total_q", r.total_q},
        {"total_k", r.total_k}}) {
    if (total < 1 || total > kMaxAttentionDimension) {
      return Refuse(absl::StrCat(name, "=", total, " is outside 1..",
                                 kMaxAttentionDimension,
                                 " (the rows allocated, with variable "
                                 "lengths: int32 offsets)"));
    }
  }
  struct Longest {
    const char* name;
    int64_t rows;
    const char* total_name;
    int64_t total;
    const char* tensors;
  };
  for (const Longest& l :
       {Longest{"seq_q", r.seq_q, "total_q", r.total_q, "Q and O"},
        Longest{"seq_k", r.seq_k, "total_k", r.total_k, "K and V"}}) {
    if (l.rows > l.total) {
      return Refuse(absl::StrCat(l.name, "=", l.rows,
                                 " (the longest sequence) is more than ",
                                 l.total_name, "=", l.total, ", the rows ",
                                 l.tensors, " have in all"));
    }
  }
  for (const StoredTensor& t : StoredTensors(r)) {
    if (t.strides.batch != 0) {
      return Refuse(absl::StrCat(
          t.field, ".batch=", t.strides.batch,
          " must be 0: with variable lengths the offsets place each "
          "sequence, there is no batch stride"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::array<StoredTensor, 4> StoredTensors(const AttentionProblem& problem) {
  const bool packed = problem.variable_lengths;
  const int64_t sequences = packed ? 1 : problem.batch;
  const int64_t rows_q = packed ? problem.total_q : problem.seq_q;
  const int64_t rows_k = packed ? problem.total_k : problem.seq_k;
  const int64_t heads_kv =
      problem.heads_kv != 0 ? problem.heads_kv : problem.heads_q;
  return {
      {{"Q", "q_stride", sequences, rows_q, problem.heads_q, problem.q_stride},
       {"K", "k_stride", sequences, rows_k, heads_kv, problem.k_stride},
       {"V", "v_stride", sequences, rows_k, heads_kv, problem.v_stride},
       {"O", "o_stride", sequences, rows_q, problem.heads_q,
        problem.o_stride}}};
}

std::optional<int64_t> LseElements(const AttentionProblem& problem) {
  std::optional<int64_t> lse =
      Product(problem.heads_q,
              problem.variable_lengths ? problem.total_q : problem.seq_q);
  if (lse && !problem.variable_lengths) lse = Product(problem.batch, *lse);
  return lse;
}

AttentionProblem Resolved(const AttentionProblem& problem) {
  AttentionProblem r = problem;
  if (r.heads_kv == 0) r.heads_kv = r.heads_q;
  if (!r.scale) {
    r.scale = 1.0f / std::sqrt(static_cast<float>(problem.head_dim));
  }
  // A packed stride steps over what is inside it: the extent times the
  // stride of the next dimension in (explicit or packed itself).
  Strides* const strides[] = {&r.q_stride, &r.k_stride, &r.v_stride,
                              &r.o_stride};
  const std::array<StoredTensor, 4> tensors = StoredTensors(r);
  for (size_t i = 0; i < tensors.size(); ++i) {
    int64_t inner_count = r.head_dim;
    int64_t inner_stride = 1;
    for (const Level& level : Levels(r.layout, tensors[i])) {
      int64_t& stride = strides[i]->*level.stride;
      const bool none = r.variable_lengths && level.stride == &Strides::batch;
      if (stride == 0 && !none) {
        stride = SaturatingProduct(inner_count, inner_stride);
      }
      inner_count = level.count;
      inner_stride = stride;
    }
  }
  return r;
}

float ScaleLog2(float scale) { return scale * static_cast<float>(M_LOG2E); }

absl::StatusOr<AttentionSpans> StoredSpans(const AttentionProblem& problem) {
  const AttentionProblem r = Resolved(problem);
  AttentionSpans spans;
  int64_t* const fields[] = {&spans.q, &spans.k, &spans.v, &spans.o};
  const std::array<StoredTensor, 4> tensors = StoredTensors(r);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::optional<int64_t> span =
        TensorSpan(r.layout, tensors[i], r.head_dim);
    if (!span) {
      return Refuse(
          absl::StrCat(tensors[i].name, " spans more than 2^63-1 elements"));
    }
    *fields[i] = *span;
  }
  const std::optional<int64_t> lse = LseElements(r);
  if (!lse) return Refuse("the LSE spans more than 2^63-1 elements");
  spans.lse = *lse;
  return spans;
}

absl::Status ValidateAttentionProblem(const AttentionProblem& problem) {
  const AttentionProblem r = Resolved(problem);
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"batch", r.batch},
        {"heads_q", r.heads_q},
        {"heads_kv", r.heads_kv},
        {"seq_q", r.seq_q},
        {"seq_k", r.seq_k},
        {"head_dim", r.head_dim}}) {
    if (size < 1 || size > kMaxAttentionDimension) {
      return Refuse(absl::StrCat(name, "=", size, " is outside 1..",
                                 kMaxAttentionDimension));
    }
  }
  if (r.heads_q % r.heads_kv != 0) {
    return Refuse(absl::StrCat("heads_q=", r.heads_q,
                               " must be a multiple of heads_kv=", r.heads_kv,
                               " (each K, V head serves a group of query "
                               "heads)"));
  }
  if (r.head_dim % kHeadDimMultiple != 0 || r.head_dim > kMaxHeadDim) {
    return Refuse(absl::StrCat("head_dim=", r.head_dim,
                               " must be a multiple of ", kHeadDimMultiple,
                               " and at most ", kMaxHeadDim));
  }
  if (r.element == ptx::ScalarType::kE4M3) {
    return Refuse(
        "element e4m3 (fp8, issue #37's stretch) is not generated yet: f16 "
        "or bf16");
  }
  if (r.element != ptx::ScalarType::kF16 &&
      r.element != ptx::ScalarType::kBF16) {
    return Refuse(absl::StrCat("element must be f16 or bf16, not ",
                               ptx::PtxName(r.element)));
  }
  if (r.layout != Layout::kBatchSeqHeadDim &&
      r.layout != Layout::kBatchHeadSeqDim) {
    return Refuse(absl::StrCat("layout=", static_cast<int>(r.layout),
                               " is not a Layout (kBatchSeqHeadDim=0, "
                               "kBatchHeadSeqDim=1)"));
  }
  if (!std::isfinite(*r.scale) || *r.scale <= 0.0f) {
    return Refuse(absl::StrCat(
        "scale=", *r.scale,
        " must be finite and positive: the online softmax takes each row's "
        "maximum before scaling"));
  }
  if (!std::isfinite(ScaleLog2(*r.scale))) {
    return Refuse(absl::StrCat(
        "scale=", *r.scale,
        " is too large: the kernel scales by scale * log2(e) ",
        "in f32, which would be infinite (the largest scale is ",
        std::numeric_limits<float>::max() / static_cast<float>(M_LOG2E), ")"));
  }
  if (absl::Status varlen = CheckVariableLengths(r); !varlen.ok()) {
    return varlen;
  }
  const std::array<StoredTensor, 4> tensors = StoredTensors(r);
  const std::array<StoredTensor, 4> given = StoredTensors(problem);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (absl::Status strides =
            CheckStrides(r.layout, tensors[i], given[i].strides, r.head_dim,
                         r.element, r.variable_lengths);
        !strides.ok()) {
      return strides;
    }
  }
  return StoredSpans(r).status();
}

}  // namespace ptxgen::attention
