// Layer: beside gemm.cc, below Run: where a Run's operands lie, and which
// outputs may share memory with another operand. Plain arithmetic on the
// resolved problem; calls no driver.
#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/gemm/problem_parts.h"
#include "ptxgen/base/memory_region.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gemm {
namespace {

using base::MemoryRegion;
using base::OperandRegion;

// `matrices` of `shape` (rows `ld` apart), `stride` apart, of `type`.
MemoryRegion Matrices(CUdeviceptr address, ptx::ScalarType type,
                      int64_t matrices, int64_t stride, StoredShape shape,
                      int64_t ld) {
  return {address,
          ptx::SizeInBytes(type),
          shape.columns,
          {{{shape.rows, ld}, {matrices, stride}}}};
}

// 4-byte values: f32 scales, int32 group rows.
MemoryRegion Words(CUdeviceptr address, int64_t count) {
  return {address, 4, count, {}};
}

// The operands a run uses, each with its memory: a fixed array, so that
// Run allocates nothing.
struct UsedOperands {
  std::array<OperandRegion, 11> operands;
  int count = 0;
  void Add(const char* name, MemoryRegion region, bool written,
           const char* in_place_of = nullptr) {
    operands[count++] = {name, region, written, in_place_of};
  }
};

UsedOperands UsedBy(const GemmProblem& r, const GemmSpans& spans,
                    const GemmOperands& o) {
  const int64_t row_matrices = RowMatrices(r);
  UsedOperands used;
  used.Add("A",
           Matrices(o.a, r.element, row_matrices, r.stride_a,
                    Stored(r.a_major, r.m, r.k), r.lda),
           false);
  used.Add("B",
           Matrices(o.b, r.b_element.value_or(r.element), r.batch, r.stride_b,
                    Stored(r.b_major, r.n, r.k), r.ldb),
           false);
  used.Add(
      "D",
      Matrices(o.d, *r.output, row_matrices, r.stride_d, StoredD(r), r.ldd),
      true, "C");
  if (r.beta != 0.0f) {
    used.Add(
        "C",
        Matrices(o.c, *r.output, row_matrices, r.stride_c, StoredD(r), r.ldc),
        false);
  }
  if (r.bias != BiasAlong::kNone) {
    used.Add("the bias",
             Matrices(o.bias, r.bias_type, r.batch, r.stride_bias,
                      {1, r.bias == BiasAlong::kM ? r.m : r.n}, 0),
             false);
  }
  if (r.scaling != GemmScaling::kNone) {
    used.Add("scale_a", Words(o.scale_a, spans.scale_a), false);
    used.Add("scale_b", Words(o.scale_b, spans.scale_b), false);
  }
  if (r.scaling == GemmScaling::kTensor && ptx::IsFp8(*r.output)) {
    used.Add("scale_d", Words(o.scale_d, 1), false);
  }
  if (r.record_amax) used.Add("amax_d", Words(o.amax_d, 1), true);
  if (r.grouping != Grouping::kNone) {
    used.Add("group_rows", Words(o.group_rows, r.batch), false);
  }
  return used;
}

}  // namespace

absl::Status CheckOutputsApart(const GemmProblem& problem,
                               const GemmOperands& operands,
                               CUdeviceptr workspace, int64_t workspace_bytes) {
  const GemmProblem r = Resolved(problem);
  const absl::StatusOr<GemmSpans> spans = StoredSpans(r);
  if (!spans.ok()) return spans.status();
  UsedOperands used = UsedBy(r, *spans, operands);
  if (workspace_bytes > 0) {
    used.Add("the workspace", MemoryRegion::Bytes(workspace, workspace_bytes),
             true);
  }
  const base::SharedPair shared =
      base::FirstSharedPair(used.operands.data(), used.count);
  if (shared.output < 0) return absl::OkStatus();
  return Refuse(absl::StrCat(
      base::SharedPairText(used.operands[shared.output],
                           used.operands[shared.other]),
      " (D may be C itself, the same memory and strides, to update it in "
      "place)"));
}

}  // namespace ptxgen::gemm
