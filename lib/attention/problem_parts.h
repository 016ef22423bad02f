#ifndef PTXGEN_LIB_ATTENTION_PROBLEM_PARTS_H_
#define PTXGEN_LIB_ATTENTION_PROBLEM_PARTS_H_

// What the problem model (problem.cc) and Run's checks (operand_memory.cc)
// both read of a stored problem (private to lib/attention).

#include <array>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "ptxgen/attention/problem.h"

namespace ptxgen::attention {

// One of Q, K, V, O as a problem stores it.
struct StoredTensor {
  absl::string_view name;   // "Q"
  absl::string_view field;  // "q_stride"
  int64_t sequences;        // 1 with variable lengths: no batch dimension
  int64_t rows;             // seq, or total with variable lengths
  int64_t heads;
  Strides strides;
};

// Q, K, V and O of a problem, in that order, with its strides as given
// (resolved for a resolved problem).
std::array<StoredTensor, 4> StoredTensors(const AttentionProblem& problem);

// The LSE's f32 values: [heads_q, total_q], or [batch, heads_q, seq_q];
// nullopt past int64_t.
std::optional<int64_t> LseElements(const AttentionProblem& problem);

}  // namespace ptxgen::attention

#endif  // PTXGEN_LIB_ATTENTION_PROBLEM_PARTS_H_
