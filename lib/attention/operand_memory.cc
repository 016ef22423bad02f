// Layer: beside attention.cc, below Run: where a run's operands lie, and
// whether O or the LSE may share memory with another. Plain arithmetic on
// the resolved problem; calls no driver.
#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/base/memory_region.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::attention {
namespace {

using base::MemoryRegion;
using base::OperandRegion;

// A tensor of `rows` and `heads` per sequence (one sequence with variable
// lengths), head_dim elements contiguous, as `s` strides it.
MemoryRegion Tensor(const AttentionProblem& r, CUdeviceptr address,
                    int64_t rows, int64_t heads, const Strides& s) {
  const int64_t sequences = r.variable_lengths ? 1 : r.batch;
  return {address,
          ptx::SizeInBytes(r.element),
          r.head_dim,
          {{{sequences, s.batch}, {rows, s.seq}, {heads, s.head}}}};
}

}  // namespace

absl::Status CheckOutputsApart(const AttentionProblem& problem,
                               const AttentionOperands& operands) {
  const AttentionProblem r = Resolved(problem);
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(r);
  if (!spans.ok()) return spans.status();
  const int64_t rows_q = r.variable_lengths ? r.total_q : r.seq_q;
  const int64_t rows_k = r.variable_lengths ? r.total_k : r.seq_k;
  const MemoryRegion offsets_q = {operands.cu_seqlens_q, 4, r.batch + 1, {}};
  const MemoryRegion offsets_k = {operands.cu_seqlens_k, 4, r.batch + 1, {}};
  const std::array<OperandRegion, 7> used = {{
      {"O", Tensor(r, operands.o, rows_q, r.heads_q, r.o_stride), true},
      {"the LSE",
       {operands.lse, 4, operands.lse != 0 ? spans->lse : 0, {}},
       true},
      {"Q", Tensor(r, operands.q, rows_q, r.heads_q, r.q_stride)},
      {"K", Tensor(r, operands.k, rows_k, r.heads_kv, r.k_stride)},
      {"V", Tensor(r, operands.v, rows_k, r.heads_kv, r.v_stride)},
      {"cu_seqlens_q", r.variable_lengths ? offsets_q : MemoryRegion{}},
      {"cu_seqlens_k", r.variable_lengths ? offsets_k : MemoryRegion{}},
  }};
  const base::SharedPair shared =
      base::FirstSharedPair(used.data(), static_cast<int>(used.size()));
  if (shared.output >= 0) {
    const OperandRegion& out = used[shared.output];
    const OperandRegion& other = used[shared.other];
    return absl::InvalidArgumentError(absl::StrCat(
        "attention: ", out.name, " (at 0x", absl::Hex(out.region.address),
        ") shares memory with ", other.name, " (at 0x",
        absl::Hex(other.region.address),
        "): the kernel would race on it; give each output memory of its "
        "own"));
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::attention
