#include "ptxgen/runtime/memory.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ptxgen::runtime {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  if (bytes == 0) {
    return absl::InvalidArgumentError("DeviceBuffer: cannot allocate 0 bytes");
  }
  CUdeviceptr address = 0;
  if (absl::Status status =
          (*driver)->Check((*driver)->cuMemAlloc(&address, bytes),
                           absl::StrCat("cuMemAlloc(", bytes, " bytes)"));
      !status.ok()) {
    return status;
  }
  return DeviceBuffer(*driver, address, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      address_(std::exchange(other.address_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Free();
    driver_ = std::exchange(other.driver_, nullptr);
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

void DeviceBuffer::Free() {
  // A destructor cannot report; freeing fails only when the context that
  // owned the memory is already gone, and then so is the memory.
  if (driver_ != nullptr) driver_->cuMemFree(address_);
  driver_ = nullptr;
}

absl::Status DeviceBuffer::CheckFits(size_t bytes,
                                     absl::string_view what) const {
  if (driver_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("DeviceBuffer::", what, " on a moved-from buffer"));
  }
  if (bytes > size_) {
    return absl::OutOfRangeError(absl::StrCat("DeviceBuffer::", what, " of ",
                                              bytes, " bytes into a buffer of ",
                                              size_, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status DeviceBuffer::CopyFromHost(const void* source, size_t bytes) {
  if (absl::Status fits = CheckFits(bytes, "CopyFromHost"); !fits.ok()) {
    return fits;
  }
  return driver_->Check(driver_->cuMemcpyHtoD(address_, source, bytes),
                        absl::StrCat("cuMemcpyHtoD(", bytes, " bytes)"));
}

absl::Status DeviceBuffer::CopyToHost(void* destination, size_t bytes) const {
  if (absl::Status fits = CheckFits(bytes, "CopyToHost"); !fits.ok()) {
    return fits;
  }
  return driver_->Check(driver_->cuMemcpyDtoH(destination, address_, bytes),
                        absl::StrCat("cuMemcpyDtoH(", bytes, " bytes)"));
}

absl::Status DeviceBuffer::CopyFromDeviceAsync(const DeviceBuffer& source,
                                               CUstream stream) {
  if (absl::Status fits = CheckFits(source.size(), "CopyFromDeviceAsync");
      !fits.ok()) {
    return fits;
  }
  return driver_->Check(
      driver_->cuMemcpyDtoDAsync(address_, source.address(), source.size(),
                                 stream),
      absl::StrCat("cuMemcpyDtoDAsync(", source.size(), " bytes)"));
}

absl::Status DeviceBuffer::Memset8(uint8_t value) {
  if (absl::Status fits = CheckFits(0, "Memset8"); !fits.ok()) return fits;
  return driver_->Check(driver_->cuMemsetD8(address_, value, size_),
                        "cuMemsetD8");
}

absl::Status DeviceBuffer::Fill32(uint32_t pattern) {
  if (absl::Status fits = CheckFits(0, "Fill32"); !fits.ok()) return fits;
  if (size_ % sizeof(uint32_t) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DeviceBuffer::Fill32 needs a size that is a multiple of 4 bytes, not ",
        size_));
  }
  return driver_->Check(
      driver_->cuMemsetD32(address_, pattern, size_ / sizeof(uint32_t)),
      "cuMemsetD32");
}

void Stream::Destroy::operator()(CUstream_st* stream) const {
  // Returns at once; the driver finishes the stream's work, then frees it.
  driver->cuStreamDestroy(stream);
}

absl::StatusOr<Stream> Stream::Create() {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  CUstream stream = nullptr;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuStreamCreate(&stream, CU_STREAM_DEFAULT),
          "cuStreamCreate");
      !status.ok()) {
    return status;
  }
  return Stream(*driver, stream);
}

absl::Status Stream::Synchronize() const {
  const Driver* driver = stream_.get_deleter().driver;
  return driver->Check(driver->cuStreamSynchronize(stream_.get()),
                       "cuStreamSynchronize");
}

absl::StatusOr<uint64_t> StreamCaptureId(CUstream stream) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  if (absl::Status queried = (*driver)->Check(
          (*driver)->cuStreamGetCaptureInfo(stream, &status, &id, nullptr,
                                            nullptr, nullptr, nullptr),
          "cuStreamGetCaptureInfo");
      !queried.ok()) {
    return queried;
  }
  return status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? uint64_t{id} : 0;
}

void Event::Destroy::operator()(CUevent_st* event) const {
  driver->cuEventDestroy(event);
}

absl::StatusOr<Event> Event::Create() {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  CUevent event = nullptr;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
      !status.ok()) {
    return status;
  }
  return Event(*driver, event);
}

absl::Status Event::Record(CUstream stream) const {
  const Driver* driver = event_.get_deleter().driver;
  return driver->Check(driver->cuEventRecord(event_.get(), stream),
                       "cuEventRecord");
}

absl::Status Event::Synchronize() const {
  const Driver* driver = event_.get_deleter().driver;
  return driver->Check(driver->cuEventSynchronize(event_.get()),
                       "cuEventSynchronize");
}

absl::StatusOr<float> ElapsedMilliseconds(const Event& start,
                                          const Event& end) {
  if (absl::Status done = end.Synchronize(); !done.ok()) return done;
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  float milliseconds = 0;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuEventElapsedTime(&milliseconds, start.get(), end.get()),
          "cuEventElapsedTime");
      !status.ok()) {
    return status;
  }
  return milliseconds;
}

}  // namespace ptxgen::runtime
