#include "ptxgen/runtime/context.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {

absl::StatusOr<PrimaryContext> PrimaryContext::Retain(int ordinal) {
  absl::StatusOr<CUdevice> device = GetDevice(ordinal);
  if (!device.ok()) return device.status();
  const Driver* driver = *Driver::Get();  // GetDevice() loaded it.
  CUcontext context = nullptr;
  if (absl::Status status = driver->Check(
          driver->cuDevicePrimaryCtxRetain(&context, *device),
          absl::StrCat("cuDevicePrimaryCtxRetain(device ", ordinal, ")"));
      !status.ok()) {
    return status;
  }
  return PrimaryContext(driver, ordinal, *device, context);
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      ordinal_(other.ordinal_),
      device_(other.device_),
      context_(std::exchange(other.context_, nullptr)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    Release();
    driver_ = std::exchange(other.driver_, nullptr);
    ordinal_ = other.ordinal_;
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

PrimaryContext::~PrimaryContext() { Release(); }

void PrimaryContext::Release() {
  // Nothing to report to from a destructor; a failing release leaves the
  // context alive, which is harmless.
  if (driver_ != nullptr) driver_->cuDevicePrimaryCtxRelease(device_);
  driver_ = nullptr;
}

absl::Status PrimaryContext::SetCurrent() const {
  if (driver_ == nullptr) {
    return absl::FailedPreconditionError(
        "PrimaryContext::SetCurrent on a moved-from context");
  }
  return driver_->Check(driver_->cuCtxSetCurrent(context_),
                        absl::StrCat("cuCtxSetCurrent(device ", ordinal_, ")"));
}

absl::StatusOr<const PrimaryContext*> RetainedPrimaryContext(int ordinal) {
  struct Retained {
    absl::Mutex mutex;
    std::map<int, std::unique_ptr<const PrimaryContext>> contexts
        ABSL_GUARDED_BY(mutex);
  };
  // Never destroyed: modules and buffers in these contexts may be released
  // by other static objects during exit.
  static Retained* const retained = new Retained;
  {
    absl::MutexLock lock(&retained->mutex);
    auto it = retained->contexts.find(ordinal);
    if (it != retained->contexts.end()) return it->second.get();
  }
  // Retained outside the lock: the first retain of a device initializes its
  // context, which takes long enough to hold up the other devices' callers.
  // Only successes are kept, so a bad ordinal leaves nothing behind.
  absl::StatusOr<PrimaryContext> context = PrimaryContext::Retain(ordinal);
  if (!context.ok()) return context.status();
  auto owned = std::make_unique<const PrimaryContext>(*std::move(context));
  absl::MutexLock lock(&retained->mutex);
  // A thread that retained it meanwhile wins; this reference is released.
  return retained->contexts.emplace(ordinal, std::move(owned))
      .first->second.get();
}

absl::StatusOr<ScopedCurrentContext> ScopedCurrentContext::Push(
    CUcontext context) {
  if (context == nullptr) {
    return absl::InvalidArgumentError(
        "ScopedCurrentContext::Push: the context is null");
  }
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  if (absl::Status pushed = (*driver)->Check(
          (*driver)->cuCtxPushCurrent(context), "cuCtxPushCurrent");
      !pushed.ok()) {
    return pushed;
  }
  return ScopedCurrentContext(*driver);
}

ScopedCurrentContext::ScopedCurrentContext(
    ScopedCurrentContext&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)) {}

ScopedCurrentContext::~ScopedCurrentContext() {
  // Nothing to report to from a destructor; the pop of a context pushed on
  // this thread fails only when the caller popped it already.
  CUcontext popped = nullptr;
  if (driver_ != nullptr) driver_->cuCtxPopCurrent(&popped);
}

absl::StatusOr<CUcontext> CurrentContext() {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  CUcontext context = nullptr;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuCtxGetCurrent(&context), "cuCtxGetCurrent");
      !status.ok()) {
    return status;
  }
  return context;
}

absl::StatusOr<uint64_t> ContextId(CUcontext context) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  unsigned long long id = 0;
  if (absl::Status status =
          (*driver)->Check((*driver)->cuCtxGetId(context, &id), "cuCtxGetId");
      !status.ok()) {
    return status;
  }
  return static_cast<uint64_t>(id);
}

absl::StatusOr<CUdevice> CurrentDevice() {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<CUcontext> context = CurrentContext();
  if (!context.ok()) return context.status();
  if (*context == nullptr) {
    return absl::FailedPreconditionError(
        "no CUDA context is current on this thread: retain a PrimaryContext "
        "and call its SetCurrent() first");
  }
  CUdevice device = 0;
  if (absl::Status status = (*driver)->Check((*driver)->cuCtxGetDevice(&device),
                                             "cuCtxGetDevice");
      !status.ok()) {
    return status;
  }
  return device;
}

absl::StatusOr<int> CurrentDeviceOrdinal() {
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  for (int ordinal = 0; ordinal < *count; ++ordinal) {
    absl::StatusOr<CUdevice> candidate = GetDevice(ordinal);
    if (!candidate.ok()) return candidate.status();
    if (*candidate == *device) return ordinal;
  }
  return absl::InternalError(
      "the current context's device is not among the driver's devices");
}

absl::StatusOr<DeviceProperties> CurrentDeviceProperties() {
  absl::StatusOr<int> ordinal = CurrentDeviceOrdinal();
  if (!ordinal.ok()) return ordinal.status();
  return GetDeviceProperties(*ordinal);
}

absl::Status SynchronizeCurrentContext() {
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  const Driver* driver = *Driver::Get();  // CurrentDevice() loaded it.
  return driver->Check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace ptxgen::runtime
