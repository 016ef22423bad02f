// Layer: beside attention.cc, below Run: where a run's operands lie, and
// whether O or the LSE may share memory with another. Plain arithmetic on
// the resolved problem; calls no driver.
#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/attention/attention_internal.h"
#include "lib/attention/problem_parts.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/base/memory_region.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::attention {
namespace {

using base::MemoryRegion;
using base::OperandRegion;

// A tensor at `address`: head_dim elements contiguous, then its rows, heads
// and sequences as its strides place them.
MemoryRegion Region(const AttentionProblem& r, const StoredTensor& t,
                    CUdeviceptr address) {
  return {address,
          ptx::SizeInBytes(r.element),
          r.head_dim,
          {{{t.sequences, t.strides.batch},
            {t.rows, t.strides.seq},
            {t.heads, t.strides.head}}}};
}

// batch + 1 int32 offsets at `address`, read with variable lengths only.
MemoryRegion Offsets(const AttentionProblem& r, CUdeviceptr address) {
  return {address, 4, r.variable_lengths ? r.batch + 1 : 0, {}};
}

}  // namespace

absl::Status OutputsApart(const AttentionProblem& r,
                          const AttentionOperands& operands) {
  const std::array<StoredTensor, 4> t = StoredTensors(r);  // Q, K, V, O
  const int64_t lse = operands.lse != 0 ? LseElements(r).value_or(0) : 0;
  const std::array<OperandRegion, 7> used = {{
      {"O", Region(r, t[3], operands.o), true},
      {"the LSE", {operands.lse, 4, lse, {}}, true},
      {"Q", Region(r, t[0], operands.q)},
      {"K", Region(r, t[1], operands.k)},
      {"V", Region(r, t[2], operands.v)},
      {"cu_seqlens_q", Offsets(r, operands.cu_seqlens_q)},
      {"cu_seqlens_k", Offsets(r, operands.cu_seqlens_k)},
  }};
  const base::SharedPair shared =
      base::FirstSharedPair(used.data(), static_cast<int>(used.size()));
  if (shared.output < 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "attention: ",
      base::SharedPairText(used[shared.output], used[shared.other])));
}

absl::Status CheckOutputsApart(const AttentionProblem& problem,
                               const AttentionOperands& operands) {
  if (absl::Status valid = ValidateAttentionProblem(problem); !valid.ok()) {
    return valid;
  }
  return OutputsApart(Resolved(problem), operands);
}

}  // namespace ptxgen::attention
