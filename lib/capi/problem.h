#ifndef PTXGEN_LIB_CAPI_PROBLEM_H_
#define PTXGEN_LIB_CAPI_PROBLEM_H_

// The C API's plain structs in the GEMM and attention layers' terms. A C
// caller may store any int in an enumeration field: each is checked here,
// and a value outside its enumeration is refused naming the field and the
// legal values.

#include "absl/status/statusor.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/ptxgen.h"

namespace ptxgen::capi {

// The problem as gemm::GemmProblem; its rules (ValidateProblem) are not
// checked here, only that every enumeration holds one of its values.
absl::StatusOr<gemm::GemmProblem> ProblemOf(const ptxgenGemmProblem_t& problem);

// What ptxgenGemmProblemInit refuses: m, n or k outside
// 1..gen::kMaxGemmDimension, a type outside ptxgenDataType_t.
absl::Status CheckInit(int64_t m, int64_t n, int64_t k, ptxgenDataType_t type);

// The output type ptxgenGemmProblemInit gives `input` (gen::DefaultOutput);
// a value outside ptxgenDataType_t is kept, for planning to refuse.
ptxgenDataType_t DefaultOutputType(ptxgenDataType_t input);

// The C value of a scaling (every gemm::GemmScaling has one).
ptxgenScaling_t ScalingOf(gemm::GemmScaling scaling);

// The problem as attention::AttentionProblem, scale 0 as the default
// (nullopt); its rules (ValidateAttentionProblem) are not checked here,
// only its enumerations and its 0-or-1 flags.
absl::StatusOr<attention::AttentionProblem> AttentionProblemOf(
    const ptxgenAttentionProblem_t& problem);

// What ptxgenAttentionProblemInit refuses: a size outside
// 1..attention::kMaxAttentionDimension, a type outside ptxgenDataType_t.
absl::Status CheckAttentionInit(int64_t batch, int64_t heads_q,
                                int64_t heads_kv, int64_t seq_q, int64_t seq_k,
                                int64_t head_dim, ptxgenDataType_t type);

// The target (the H200 for nullptr) as gemm::GemmTarget for sm_90a; not
// validated (runtime::ValidateKernelTarget).
gemm::GemmTarget TargetOf(const ptxgenTarget_t* target);

}  // namespace ptxgen::capi

#endif  // PTXGEN_LIB_CAPI_PROBLEM_H_
