#include "lib/capi/status.h"

#include <array>

namespace ptxgen::capi {
namespace {

struct StatusText {
  ptxgenStatus_t status;
  const char* name;
  const char* sentence;
};

constexpr std::array<StatusText, 8> kStatuses = {{
    {PTXGEN_STATUS_SUCCESS, "PTXGEN_STATUS_SUCCESS", "success"},
    {PTXGEN_STATUS_INVALID_VALUE, "PTXGEN_STATUS_INVALID_VALUE",
     "an argument is invalid: a null pointer, an unknown enumeration value, or "
     "a problem or target that breaks a rule"},
    {PTXGEN_STATUS_NOT_SUPPORTED, "PTXGEN_STATUS_NOT_SUPPORTED",
     "the problem is valid, but no kernel computes it on this target or "
     "device"},
    {PTXGEN_STATUS_NO_DEVICE, "PTXGEN_STATUS_NO_DEVICE",
     "no CUDA driver or no CUDA device: planning works without one, preparing "
     "and running need one"},
    {PTXGEN_STATUS_ARCH_MISMATCH, "PTXGEN_STATUS_ARCH_MISMATCH",
     "the device cannot run sm_90a code: only compute capability 9.0 (H100, "
     "H200) can"},
    {PTXGEN_STATUS_ALLOC_FAILED, "PTXGEN_STATUS_ALLOC_FAILED",
     "host or device memory could not be allocated"},
    {PTXGEN_STATUS_EXECUTION_FAILED, "PTXGEN_STATUS_EXECUTION_FAILED",
     "the CUDA driver refused to load or launch the kernel"},
    {PTXGEN_STATUS_INTERNAL_ERROR, "PTXGEN_STATUS_INTERNAL_ERROR",
     "an unexpected internal failure"},
}};

const StatusText* Find(ptxgenStatus_t status) {
  for (const StatusText& text : kStatuses) {
    if (text.status == status) return &text;
  }
  return nullptr;
}

}  // namespace

const char* StatusName(ptxgenStatus_t status) {
  const StatusText* text = Find(status);
  return text != nullptr ? text->name : "PTXGEN_STATUS_UNKNOWN";
}

const char* StatusString(ptxgenStatus_t status) {
  const StatusText* text = Find(status);
  return text != nullptr ? text->sentence : "not a ptxgenStatus_t value";
}

ptxgenStatus_t StatusOf(absl::StatusCode code, Step step) {
  if (code == absl::StatusCode::kOk) return PTXGEN_STATUS_SUCCESS;
  if (code == absl::StatusCode::kResourceExhausted) {
    // A launch's registers or shared memory are not an allocation.
    return step == Step::kRun ? PTXGEN_STATUS_EXECUTION_FAILED
                              : PTXGEN_STATUS_ALLOC_FAILED;
  }
  const bool refused = code == absl::StatusCode::kInvalidArgument ||
                       code == absl::StatusCode::kOutOfRange ||
                       code == absl::StatusCode::kFailedPrecondition ||
                       code == absl::StatusCode::kUnimplemented;
  switch (step) {
    case Step::kPlan:
      return refused ? PTXGEN_STATUS_NOT_SUPPORTED
                     : PTXGEN_STATUS_INTERNAL_ERROR;
    case Step::kPrepare:
      // The driver's own failures arrive as kInternal.
      return refused ? PTXGEN_STATUS_NOT_SUPPORTED
                     : PTXGEN_STATUS_EXECUTION_FAILED;
    case Step::kRun:
      // Null or misaligned pointers, tensor maps the driver would refuse.
      return code == absl::StatusCode::kInvalidArgument ||
                     code == absl::StatusCode::kOutOfRange
                 ? PTXGEN_STATUS_INVALID_VALUE
                 : PTXGEN_STATUS_EXECUTION_FAILED;
  }
  return PTXGEN_STATUS_INTERNAL_ERROR;
}

}  // namespace ptxgen::capi
