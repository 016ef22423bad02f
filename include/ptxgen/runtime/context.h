#ifndef PTXGEN_RUNTIME_CONTEXT_H_
#define PTXGEN_RUNTIME_CONTEXT_H_

// Contexts. ptxgen uses each device's primary context, the one the CUDA
// runtime and most libraries share, so memory and modules interoperate with
// them, or whichever context the caller made current; it never creates or
// destroys a context of its own.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// A reference to a device's primary context: retained on creation, released
// on destruction (the driver frees the context when its last user releases
// it). Modules, buffers, streams and events made while it is current belong
// to it and must be destroyed before it.
class PrimaryContext {
 public:
  static absl::StatusOr<PrimaryContext> Retain(int ordinal);

  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext();

  // Makes this context current on the calling thread (replacing whatever
  // was current there); the other runtime calls act on the current context.
  absl::Status SetCurrent() const;

  int ordinal() const { return ordinal_; }
  CUdevice device() const { return device_; }
  CUcontext get() const { return context_; }

 private:
  PrimaryContext(const Driver* driver, int ordinal, CUdevice device,
                 CUcontext context)
      : driver_(driver),
        ordinal_(ordinal),
        device_(device),
        context_(context) {}
  void Release();

  const Driver* driver_ = nullptr;  // null once moved from
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// The primary context of device `ordinal`, retained on its first request
// and kept for the life of the process (thread-safe), so that what is
// loaded into it stays valid however long its users live. InvalidArgument
// for an ordinal outside 0 .. DeviceCount() - 1, in GetDevice's words.
absl::StatusOr<const PrimaryContext*> RetainedPrimaryContext(int ordinal);

// Makes a context current on the calling thread for the life of this object
// (cuCtxPushCurrent) and then restores the one that was current before
// (cuCtxPopCurrent): a call borrows a device without disturbing its
// caller's. Destroy it on the thread that made it.
class ScopedCurrentContext {
 public:
  // InvalidArgument for a null context.
  static absl::StatusOr<ScopedCurrentContext> Push(CUcontext context);

  ScopedCurrentContext(ScopedCurrentContext&& other) noexcept;
  ScopedCurrentContext& operator=(ScopedCurrentContext&&) = delete;
  ScopedCurrentContext(const ScopedCurrentContext&) = delete;
  ScopedCurrentContext& operator=(const ScopedCurrentContext&) = delete;
  ~ScopedCurrentContext();

 private:
  explicit ScopedCurrentContext(const Driver* driver) : driver_(driver) {}

  const Driver* driver_ = nullptr;  // null once moved from
};

// The calling thread's current context, or nullptr when none is current.
absl::StatusOr<CUcontext> CurrentContext();

// The driver's ID of `context` (cuCtxGetId), unique for the life of the
// process: a context created after another was destroyed may get its
// CUcontext handle, never its ID. What per-context caches are keyed by.
absl::StatusOr<uint64_t> ContextId(CUcontext context);

// The device of the calling thread's current context; FailedPrecondition
// when no context is current.
absl::StatusOr<CUdevice> CurrentDevice();

// The ordinal (0 .. DeviceCount() - 1) of CurrentDevice(), found among the
// driver's devices (a CUdevice is a handle, not an ordinal).
absl::StatusOr<int> CurrentDeviceOrdinal();

// The properties of CurrentDevice(), at CurrentDeviceOrdinal().
absl::StatusOr<DeviceProperties> CurrentDeviceProperties();

// Waits for all work of the current context. Returns the first asynchronous
// error, such as a kernel's illegal memory access.
absl::Status SynchronizeCurrentContext();

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_CONTEXT_H_
