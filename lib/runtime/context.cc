#include "ptxgen/runtime/context.h"

#include <utility>

#include "absl/strings/str_cat.h"
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

absl::StatusOr<DeviceProperties> CurrentDeviceProperties() {
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  for (int ordinal = 0; ordinal < *count; ++ordinal) {
    absl::StatusOr<CUdevice> candidate = GetDevice(ordinal);
    if (!candidate.ok()) return candidate.status();
    if (*candidate == *device) return GetDeviceProperties(ordinal);
  }
  return absl::InternalError(
      "the current context's device is not among the driver's devices");
}

absl::Status SynchronizeCurrentContext() {
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  const Driver* driver = *Driver::Get();  // CurrentDevice() loaded it.
  return driver->Check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace ptxgen::runtime
