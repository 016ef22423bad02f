#ifndef PTXGEN_LIB_GEMM_PROBLEM_PARTS_H_
#define PTXGEN_LIB_GEMM_PROBLEM_PARTS_H_

// What the problem model (problem.cc) and the Gemm (gemm.cc) both read of
// a stored problem, and the prefix of their refusals.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ptxgen/gemm/problem.h"

namespace ptxgen::gemm {

// The stored shape of an operand: [mn, k] K-major, [k, mn] MN-major.
struct StoredShape {
  int64_t rows, columns;
};
inline StoredShape Stored(MajorOrder major, int64_t mn, int64_t k) {
  return major == MajorOrder::kK ? StoredShape{mn, k} : StoredShape{k, mn};
}

// D's (and C's) stored shape: [m, n], or [n, m] transposed.
inline StoredShape StoredD(const GemmProblem& problem) {
  return problem.d_transposed ? StoredShape{problem.n, problem.m}
                              : StoredShape{problem.m, problem.n};
}

inline absl::Status Refuse(absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("GEMM: ", rule));
}

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_PROBLEM_PARTS_H_
