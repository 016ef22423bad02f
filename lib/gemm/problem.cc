// Layer: the problem model, the bottom of lib/gemm: validation,
// resolution, the kernel's form and the operands' spans. Calls nothing of
// lib/gemm above it.
#include "ptxgen/gemm/problem.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/gemm/problem_parts.h"
#include "ptxgen/base/extent.h"
#include "ptxgen/ptx/tma.h"

namespace ptxgen::gemm {
namespace {

// The elements from a stored matrix's first to past its last.
int64_t MatrixSpan(StoredShape shape, int64_t ld) {
  return (shape.rows - 1) * ld + shape.columns;
}
// rows * ld, the stride of packed matrices; past int64_t (sizes or an ld
// ValidateProblem refuses) the largest int64_t, which every bound refuses,
// rather than a wrapped one.
int64_t PackedStride(int64_t rows, int64_t ld) {
  int64_t stride = 0;
  if (__builtin_mul_overflow(rows, ld, &stride)) {
    return std::numeric_limits<int64_t>::max();
  }
  return stride;
}

using base::Extent;

}  // namespace

GemmProblem Resolved(const GemmProblem& problem) {
  GemmProblem resolved = problem;
  if (!resolved.output) resolved.output = gen::DefaultOutput(problem.element);
  const StoredShape a = Stored(problem.a_major, problem.m, problem.k);
  const StoredShape b = Stored(problem.b_major, problem.n, problem.k);
  auto fill = [](int64_t& value, int64_t packed) {
    if (value == 0) value = packed;
  };
  fill(resolved.lda, a.columns);
  fill(resolved.ldb, b.columns);
  const StoredShape d = StoredD(problem);
  fill(resolved.ldc, d.columns);
  fill(resolved.ldd, d.columns);
  fill(resolved.stride_b, PackedStride(b.rows, resolved.ldb));
  // A contiguous grouped GEMM's A, C and D are one matrix each.
  if (problem.grouping == Grouping::kContiguous) return resolved;
  fill(resolved.stride_a, PackedStride(a.rows, resolved.lda));
  fill(resolved.stride_c, PackedStride(d.rows, resolved.ldc));
  fill(resolved.stride_d, PackedStride(d.rows, resolved.ldd));
  return resolved;
}

GemmProblem SwappedProblem(const GemmProblem& problem) {
  // What the kernel computes swaps as gen::SwappedForm says; the sizes and
  // strides of A and B go with their operands.
  const gen::GemmForm form = gen::SwappedForm(FormOf(problem));
  GemmProblem swapped = problem;
  swapped.element = form.element;
  swapped.b_element = form.b_element;
  swapped.a_major = form.a_major;
  swapped.b_major = form.b_major;
  swapped.bias = form.bias;
  swapped.d_transposed = form.d_transposed;
  swapped.m = problem.n;
  swapped.n = problem.m;
  swapped.lda = problem.ldb;
  swapped.ldb = problem.lda;
  swapped.stride_a = problem.stride_b;
  swapped.stride_b = problem.stride_a;
  return swapped;
}

GemmProblem KernelProblem(const gen::GemmConfig& config,
                          const GemmProblem& problem) {
  return config.swap_ab ? SwappedProblem(problem) : problem;
}

int64_t RowMatrices(const GemmProblem& problem) {
  return problem.grouping == Grouping::kContiguous ? 1 : problem.batch;
}

int64_t PlannedGroupRows(const GemmProblem& problem) {
  if (problem.grouping == Grouping::kNone) return problem.m;
  if (problem.expected_m > 0) return problem.expected_m;
  if (problem.grouping == Grouping::kMasked) return problem.m;
  return std::max<int64_t>(1, problem.m / std::max<int64_t>(1, problem.batch));
}

gen::GemmForm FormOf(const GemmProblem& problem) {
  gen::GemmForm form;
  form.element = problem.element;
  form.b_element = problem.b_element;
  form.output = problem.output.value_or(gen::DefaultOutput(problem.element));
  form.a_major = problem.a_major;
  form.b_major = problem.b_major;
  form.reads_c = problem.beta != 0.0f;
  form.bias = problem.bias;
  form.bias_type = problem.bias_type;
  form.activation = problem.activation;
  form.batched = problem.batch > 1 && problem.grouping == Grouping::kNone;
  form.grouping = problem.grouping;
  form.d_transposed = problem.d_transposed;
  form.scaling = problem.scaling;
  form.fast_accumulation = problem.fast_accumulation;
  form.records_amax = problem.record_amax;
  return form;
}

namespace {

// A leading dimension of at least the stored row, and (for TMA operands)
// rows starting on 16-byte boundaries.
absl::Status CheckLeadingDimension(absl::string_view name, int64_t ld,
                                   int64_t row, ptx::ScalarType element,
                                   bool tma,
                                   absl::string_view packed_size = "") {
  if (ld < row || ld > gen::kMaxGemmDimension) {
    return Refuse(
        absl::StrCat(name, "=", ld, " must be at least the stored row (", row,
                     " elements) and at most ", gen::kMaxGemmDimension));
  }
  constexpr int64_t kRowAlignment = ptx::kTensorGlobalAlignmentBytes;
  const int64_t bytes = ld * ptx::SizeInBytes(element);
  if (tma && bytes % kRowAlignment != 0 && !packed_size.empty()) {
    return Refuse(absl::StrCat(
        packed_size, "=", ld, " gives packed rows of ", name.substr(2), " of ",
        bytes,
        " bytes; TMA needs every row to start on a 16-byte boundary, so ",
        packed_size, " must be a multiple of ",
        kRowAlignment / ptx::SizeInBytes(element), " (or give ", name, ")"));
  }
  if (tma && bytes % kRowAlignment != 0) {
    return Refuse(absl::StrCat(name, "=", ld, " gives rows of ", bytes,
                               " bytes; TMA needs every row to "
                               "start on a 16-byte boundary (",
                               name, " a multiple of ",
                               kRowAlignment / ptx::SizeInBytes(element), ")"));
  }
  return absl::OkStatus();
}

// The bound of every batch stride, TMA's stride field (a tensor map takes
// strides below it): the kernels' batch offsets then stay far inside
// int64_t.
constexpr int64_t kMaxStrideBytes = ptx::kTensorStrideLimitBytes;

// The matrices of a batch must not overlap, and TMA steps between them in
// multiples of 16 bytes.
absl::Status CheckBatchStride(absl::string_view name, int64_t stride,
                              int64_t matrix, ptx::ScalarType element,
                              bool tma) {
  if (stride < matrix ||
      stride >= kMaxStrideBytes / ptx::SizeInBytes(element)) {
    return Refuse(absl::StrCat(name, "=", stride,
                               " must be at least one matrix (", matrix,
                               " elements) and below 2^40 bytes"));
  }
  if (tma &&
      (stride * ptx::SizeInBytes(element)) % ptx::kTensorGlobalAlignmentBytes !=
          0) {
    return Refuse(absl::StrCat(name, "=", stride,
                               " must be a multiple of 16 bytes (TMA steps "
                               "between the matrices of a batch)"));
  }
  return absl::OkStatus();
}

// A grouped problem's own rules; the form's (gen::ValidateGemmForm) come
// with it.
absl::Status CheckGrouping(const GemmProblem& problem) {
  if (problem.grouping == Grouping::kNone) {
    if (problem.expected_m != 0) {
      return Refuse("expected_m is a grouped GEMM's planning hint; leave it 0");
    }
    return absl::OkStatus();
  }
  if (problem.expected_m < 0 || problem.expected_m > problem.m) {
    return Refuse(absl::StrCat("expected_m=", problem.expected_m,
                               " is outside 0..m (", problem.m, ")"));
  }
  if (problem.grouping == Grouping::kContiguous &&
      (problem.stride_a != 0 || problem.stride_c != 0 ||
       problem.stride_d != 0)) {
    return Refuse(
        "a contiguous grouped GEMM's A, C and D are one matrix each, the "
        "groups' rows one after another: stride_a, stride_c and stride_d "
        "must be 0");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblem(const GemmProblem& problem) {
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", problem.m},
        {"n", problem.n},
        {"k", problem.k}}) {
    if (size < 1 || size > gen::kMaxGemmDimension) {
      return Refuse(absl::StrCat(name, "=", size, " is outside 1..",
                                 gen::kMaxGemmDimension));
    }
  }
  if (absl::Status valid = gen::ValidateGemmForm(FormOf(problem));
      !valid.ok()) {
    return valid;
  }
  if (problem.batch < 1 || problem.batch > gen::kMaxGemmBatch) {
    return Refuse(absl::StrCat("batch=", problem.batch, " is outside 1..",
                               gen::kMaxGemmBatch));
  }
  if (!std::isfinite(problem.alpha) || !std::isfinite(problem.beta)) {
    return Refuse("alpha and beta must be finite");
  }
  if (absl::Status grouped = CheckGrouping(problem); !grouped.ok()) {
    return grouped;
  }
  const GemmProblem r = Resolved(problem);
  const ptx::ScalarType out = *r.output;
  if (out == ptx::ScalarType::kS32 && r.alpha != 1.0f) {
    return Refuse(
        absl::StrCat("an s32 D is the exact sums: alpha must be 1, not ",
                     r.alpha, " (an s8, 16-bit or f32 D scales them)"));
  }
  const StoredShape a = Stored(r.a_major, r.m, r.k);
  const StoredShape b = Stored(r.b_major, r.n, r.k);
  const StoredShape d = StoredD(r);
  const bool reads_c = r.beta != 0.0f;
  for (const absl::Status& rule : {
           CheckLeadingDimension("lda", r.lda, a.columns, r.element, true,
                                 problem.lda != 0              ? ""
                                 : r.a_major == MajorOrder::kK ? "k"
                                                               : "m"),
           CheckLeadingDimension("ldb", r.ldb, b.columns, r.element, true,
                                 problem.ldb != 0              ? ""
                                 : r.b_major == MajorOrder::kK ? "k"
                                                               : "n"),
           reads_c ? CheckLeadingDimension("ldc", r.ldc, d.columns, out, false)
                   : absl::OkStatus(),
           CheckLeadingDimension("ldd", r.ldd, d.columns, out, false),
       }) {
    if (!rule.ok()) return rule;
  }
  const bool batches_a_and_d = RowMatrices(r) > 1;
  if (r.batch > 1) {
    for (const absl::Status& rule : {
             batches_a_and_d
                 ? CheckBatchStride("stride_a", r.stride_a,
                                    MatrixSpan(a, r.lda), r.element, true)
                 : absl::OkStatus(),
             CheckBatchStride("stride_b", r.stride_b, MatrixSpan(b, r.ldb),
                              r.element, true),
             reads_c && batches_a_and_d
                 ? CheckBatchStride("stride_c", r.stride_c,
                                    MatrixSpan(d, r.ldc), out, false)
                 : absl::OkStatus(),
             batches_a_and_d
                 ? CheckBatchStride("stride_d", r.stride_d,
                                    MatrixSpan(d, r.ldd), out, false)
                 : absl::OkStatus(),
         }) {
      if (!rule.ok()) return rule;
    }
    const int64_t bias_length = r.bias == BiasAlong::kM ? r.m : r.n;
    if (r.bias != BiasAlong::kNone && r.stride_bias != 0 &&
        (r.stride_bias < bias_length ||
         r.stride_bias >= kMaxStrideBytes / ptx::SizeInBytes(r.bias_type))) {
      return Refuse(
          absl::StrCat("stride_bias=", r.stride_bias,
                       " must be 0 (one bias for the batch) or at least ",
                       bias_length, " and below 2^40 bytes"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GemmSpans> StoredSpans(const GemmProblem& problem) {
  const GemmProblem r = Resolved(problem);
  absl::Status fits;
  // `matrices` of `shape`, `stride` apart.
  auto span = [&](absl::string_view operand, int64_t matrices,
                  StoredShape shape, int64_t ld, int64_t stride) -> int64_t {
    const std::optional<int64_t> matrix = Extent(shape.rows, ld, shape.columns);
    const std::optional<int64_t> all =
        matrix ? Extent(matrices, stride, *matrix) : std::nullopt;
    if (!all) {
      fits.Update(
          Refuse(absl::StrCat(operand, " spans more than 2^63-1 elements")));
    }
    return all.value_or(0);
  };
  const int64_t row_matrices = RowMatrices(r);
  GemmSpans spans;
  spans.a =
      span("A", row_matrices, Stored(r.a_major, r.m, r.k), r.lda, r.stride_a);
  spans.b = span("B", r.batch, Stored(r.b_major, r.n, r.k), r.ldb, r.stride_b);
  if (r.beta != 0.0f) {
    spans.c = span("C", row_matrices, StoredD(r), r.ldc, r.stride_c);
  }
  spans.d = span("D", row_matrices, StoredD(r), r.ldd, r.stride_d);
  if (r.bias != BiasAlong::kNone) {
    spans.bias =
        span("the bias", r.batch, {1, r.bias == BiasAlong::kM ? r.m : r.n}, 0,
             r.stride_bias);
  }
  if (r.scaling == GemmScaling::kTensor) spans.scale_a = spans.scale_b = 1;
  if (r.scaling == GemmScaling::kBlock) {
    spans.scale_a = gen::BlockScalesOf(r.m, r.n, r.k, row_matrices).a_count;
    spans.scale_b = gen::BlockScalesOf(r.m, r.n, r.k, r.batch).b_count;
  }
  if (!fits.ok()) return fits;
  return spans;
}

}  // namespace ptxgen::gemm
