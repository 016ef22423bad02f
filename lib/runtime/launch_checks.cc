#include "ptxgen/runtime/launch_checks.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {

absl::StatusOr<CUcontext> CurrentOrPrimaryContext() {
  absl::StatusOr<CUcontext> current = CurrentContext();
  if (!current.ok() || *current != nullptr) return current;
  absl::StatusOr<const PrimaryContext*> primary = RetainedPrimaryContext(0);
  if (!primary.ok()) return primary.status();
  if (absl::Status set = (*primary)->SetCurrent(); !set.ok()) return set;
  return (*primary)->get();
}

absl::StatusOr<const PrimaryContext*> PrimaryContextOfDevice(
    const LaunchOwner& owner, int ordinal) {
  if (ordinal < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(owner.family, ": ", owner.options, "::device=", ordinal,
                     " is not a device ordinal (0 or more)"));
  }
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  if (ordinal >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat(owner.family, ": ", owner.options, "::device=", ordinal,
                     " is not below the driver's device count, ", *count));
  }
  return RetainedPrimaryContext(ordinal);
}

namespace {

absl::Status CheckOperandAddress(const LaunchOwner& owner,
                                 const LaunchOperand& operand) {
  if (operand.address == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(owner.family, ": ", operand.name, " is a null pointer"));
  }
  if (operand.address % operand.alignment == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      owner.family, ": ", operand.name, " must be ", operand.alignment,
      "-byte aligned (address 0x", absl::Hex(operand.address), ")"));
}

// "context 0x... (device 1)": the current context, for messages.
std::string CurrentContextName(CUcontext context) {
  absl::StatusOr<int> device = CurrentDeviceOrdinal();
  return absl::StrCat(
      "context 0x", absl::Hex(reinterpret_cast<uintptr_t>(context)),
      device.ok() ? absl::StrCat(" (device ", *device, ")") : "");
}

// Makes the owner's context the one its launch goes to. A thread with no
// context current has nothing of its own to disturb and the owner's is the
// only context its kernel runs in: it is made current and left so (as the
// CUDA runtime does on a thread's first call), so that the caller's next
// calls (synchronizing, copying results back) act on it too and later
// launches pay nothing; pushing and popping it would cost two driver calls
// every launch. Another context current is the caller's choice, not ours
// to override: its streams and memory would not be the kernel's.
absl::Status EnterOwnerContext(const LaunchOwner& owner, const Driver& driver,
                               CUcontext owner_context, int owner_device) {
  CUcontext current = nullptr;
  if (absl::Status got =
          driver.Check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
      !got.ok()) {
    return got;
  }
  if (current == owner_context) return absl::OkStatus();
  if (current == nullptr) {
    return driver.Check(
        driver.cuCtxSetCurrent(owner_context),
        absl::StrCat("cuCtxSetCurrent (the ", owner.object, "'s context)"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      owner.family, ": ", owner.a_object,
      " runs only in the context it was prepared in, context 0x",
      absl::Hex(reinterpret_cast<uintptr_t>(owner_context)), " (device ",
      owner_device, "), but this thread's current context is ",
      CurrentContextName(current), ": make the ", owner.object,
      "'s context current, or prepare ", owner.a_object, " in this one (",
      owner.options, "::device for a device's primary context)"));
}

// The stream's context must be the owner's: a launch cannot cross
// contexts. Null is the current context's legacy stream, the owner's once
// EnterOwnerContext passed, so it needs no query.
absl::Status CheckStreamContext(const LaunchOwner& owner, const Driver& driver,
                                CUstream stream, CUcontext owner_context,
                                int owner_device) {
  if (stream == nullptr) return absl::OkStatus();
  CUcontext stream_context = nullptr;
  if (absl::Status got = driver.Check(
          driver.cuStreamGetCtx(stream, &stream_context), "cuStreamGetCtx");
      !got.ok()) {
    return got;
  }
  if (stream_context == owner_context) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      owner.family, ": the stream belongs to context 0x",
      absl::Hex(reinterpret_cast<uintptr_t>(stream_context)), ", not to this ",
      owner.object, "'s context 0x",
      absl::Hex(reinterpret_cast<uintptr_t>(owner_context)), " (device ",
      owner_device, "): launch on a stream created in the ", owner.object,
      "'s context"));
}

// Why the kernel cannot reach an operand, from the driver's record of
// where it lives (asked only on this path, so a launch's own query stays
// one).
absl::Status RefuseUnreachable(const LaunchOwner& owner, const Driver& driver,
                               const char* name, CUdeviceptr address,
                               CUcontext owner_context, int owner_device) {
  int memory_device = -1;
  CUcontext memory_context = nullptr;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      CU_POINTER_ATTRIBUTE_CONTEXT};
  void* values[] = {&memory_device, &memory_context};
  // A failed query leaves the memory's owner unknown; the refusal stands.
  driver.cuPointerGetAttributes(2, attributes, values, address);
  const std::string operand =
      absl::StrCat(owner.family, ": ", name, " (0x", absl::Hex(address), ")");
  if (memory_device >= 0 && memory_device != owner_device) {
    return absl::InvalidArgumentError(absl::StrCat(
        operand, " is memory of device ", memory_device, ", which this ",
        owner.object, "'s kernel on device ", owner_device,
        " cannot reach (no peer access): pass memory of device ", owner_device,
        ", enable peer access to device ", memory_device, ", or run ",
        owner.a_object, " prepared for device ", memory_device, " (",
        owner.options, "::device)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      operand, " is memory of context 0x",
      absl::Hex(reinterpret_cast<uintptr_t>(memory_context)), ", which this ",
      owner.object, "'s context 0x",
      absl::Hex(reinterpret_cast<uintptr_t>(owner_context)), " (device ",
      owner_device, ") cannot reach: allocate it in the ", owner.object,
      "'s context, or prepare ", owner.a_object, " in its context"));
}

}  // namespace

// Refuses an operand the kernel could not reach from the current context
// (the owner's): memory CUDA knows of with no device address there, such
// as another device's without peer access or another context's, on which
// the kernel would fault and take its context down; or the host address of
// registered host memory whose device address differs. Memory CUDA does
// not know (system memory a device may reach through HMM or ATS) passes:
// there is nothing to check it against. One cuPointerGetAttributes query
// per operand, tens of nanoseconds each beside a launch's microseconds
// (host time per call: gemm_bench --mode=launch), and nothing remembered
// that could go stale when memory is freed and its address reused.
absl::Status CheckOperandReachable(const LaunchOwner& owner,
                                   const Driver& driver, const char* name,
                                   CUdeviceptr address, CUcontext owner_context,
                                   int owner_device) {
  unsigned int memory_type = 0;
  CUdeviceptr device_address = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                      CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
  void* values[] = {&memory_type, &device_address};
  if (absl::Status queried = driver.Check(
          driver.cuPointerGetAttributes(2, attributes, values, address),
          "cuPointerGetAttributes");
      !queried.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(owner.family, ": cannot tell whether this ", owner.object,
                     "'s kernel reaches ", name, " (0x", absl::Hex(address),
                     "): ", queried.message()));
  }
  if (memory_type == 0 || device_address == address) return absl::OkStatus();
  if (device_address != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        owner.family, ": ", name, " (0x", absl::Hex(address),
        ") is the host address of registered host memory, which kernels "
        "reach at 0x",
        absl::Hex(device_address), ": pass that"));
  }
  return RefuseUnreachable(owner, driver, name, address, owner_context,
                           owner_device);
}

absl::Status CheckLaunchHere(const LaunchOwner& owner,
                             absl::Span<const LaunchOperand> operands,
                             CUstream stream, CUcontext owner_context,
                             int owner_device) {
  // The addresses first: a null or misaligned pointer is refused the same
  // with or without a driver.
  for (const LaunchOperand& operand : operands) {
    if (!operand.used) continue;
    if (absl::Status usable = CheckOperandAddress(owner, operand);
        !usable.ok()) {
      return usable;
    }
  }
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  if (absl::Status entered =
          EnterOwnerContext(owner, **driver, owner_context, owner_device);
      !entered.ok()) {
    return entered;
  }
  if (absl::Status same = CheckStreamContext(owner, **driver, stream,
                                             owner_context, owner_device);
      !same.ok()) {
    return same;
  }
  for (const LaunchOperand& operand : operands) {
    if (!operand.used) continue;
    if (absl::Status reachable =
            CheckOperandReachable(owner, **driver, operand.name,
                                  operand.address, owner_context, owner_device);
        !reachable.ok()) {
      return reachable;
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::runtime
