#ifndef PTXGEN_LIB_CAPI_STATUS_H_
#define PTXGEN_LIB_CAPI_STATUS_H_

// The C API's status codes: their names and sentences, and which one an
// absl::Status of the layers below becomes at each step of a GEMM's life.

#include "absl/status/status.h"
#include "ptxgen/ptxgen.h"

namespace ptxgen::capi {

// "PTXGEN_STATUS_SUCCESS", ...; "PTXGEN_STATUS_UNKNOWN" for any other value.
const char* StatusName(ptxgenStatus_t status);
// What the status means, one sentence.
const char* StatusString(ptxgenStatus_t status);

// The step that failed. Each is reached only after the problem (and the
// target) passed their rules, which are PTXGEN_STATUS_INVALID_VALUE before
// any step, so a refusal within a step is of what it could not do.
enum class Step {
  kPlan,     // generating and compiling for a target: no kernel fits it
  kPrepare,  // loading into the current context: the device refused it
  kRun,      // launching: a bad operand, or the launch failed
};

ptxgenStatus_t StatusOf(absl::StatusCode code, Step step);

}  // namespace ptxgen::capi

#endif  // PTXGEN_LIB_CAPI_STATUS_H_
