#ifndef PTXGEN_RUNTIME_LAUNCH_CHECKS_H_
#define PTXGEN_RUNTIME_LAUNCH_CHECKS_H_

// What every prepared kernel family (a Gemm, an Attention) checks before it
// launches, and where it is prepared: the context it belongs to, the
// stream's, and whether its kernel reaches each device pointer. A bad
// pointer or context is refused naming the rule, never left to fault the
// kernel and take its context down.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "cuda.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// Who launches, as messages name it: {"GEMM", "Gemm", "a Gemm",
// "GemmOptions"} gives "GEMM: a Gemm runs only in the context it was
// prepared in ... (GemmOptions::device ...)".
struct LaunchOwner {
  const char* family;    // the messages' prefix
  const char* object;    // the prepared object's type
  const char* a_object;  // with its article
  const char* options;   // the options type that names a device
};

// The calling thread's current context; with none, device 0's primary
// context, made current (and left so, for the caller's later calls).
// Retained primary contexts live as long as the process: modules loaded
// into them must stay valid.
absl::StatusOr<CUcontext> CurrentOrPrimaryContext();

// The primary context of device `ordinal` (retained for the process),
// refused when the ordinal names no device ("<options>::device=...").
absl::StatusOr<const PrimaryContext*> PrimaryContextOfDevice(
    const LaunchOwner& owner, int ordinal);

// A device pointer a launch reads or writes: checked when `used`, against
// the alignment it needs (TMA's 16 bytes for tensors, a float's for
// scales).
struct LaunchOperand {
  const char* name;
  CUdeviceptr address;
  bool used;
  int alignment = 16;
};

// Refuses (InvalidArgument, naming the rule) a null or misaligned used
// operand; then makes the owner's context current when none is (another
// one current is refused: FailedPrecondition), refuses a stream of
// another context, and refuses an operand the kernel cannot reach from
// the owner's context (another device's memory without peer access,
// another context's, the host address of registered host memory). One
// cuPointerGetAttributes query per used operand; nothing remembered that
// could go stale when memory is freed and its address reused.
absl::Status CheckLaunchHere(const LaunchOwner& owner,
                             absl::Span<const LaunchOperand> operands,
                             CUstream stream, CUcontext owner_context,
                             int owner_device);

// CheckLaunchHere's reach check alone, for memory a launch is given apart
// from its operands (a caller's workspace).
absl::Status CheckOperandReachable(const LaunchOwner& owner,
                                   const Driver& driver, const char* name,
                                   CUdeviceptr address, CUcontext owner_context,
                                   int owner_device);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_LAUNCH_CHECKS_H_
