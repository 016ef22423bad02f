#ifndef PTXGEN_RUNTIME_MEMORY_H_
#define PTXGEN_RUNTIME_MEMORY_H_

// Device memory, streams and events: as much as samples and tests need.
// Everything belongs to the context current at creation and must be
// destroyed while that context is alive.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// Global memory; freed on destruction. Copies and fills run on the legacy
// default stream, after earlier work on blocking streams; copies also wait
// on the host until they are done.
class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  // The first `bytes` of the buffer from or to host memory; OutOfRange when
  // `bytes` exceeds size().
  absl::Status CopyFromHost(const void* source, size_t bytes);
  absl::Status CopyToHost(void* destination, size_t bytes) const;
  // The whole of `source` into the start of this buffer, enqueued on
  // `stream`; OutOfRange when `source` is larger.
  absl::Status CopyFromDeviceAsync(const DeviceBuffer& source, CUstream stream);

  // Sets every byte to `value`.
  absl::Status Memset8(uint8_t value);
  // Sets every 32-bit word to `pattern` (1.0f is 0x3f800000); the size must
  // be a multiple of 4.
  absl::Status Fill32(uint32_t pattern);

  CUdeviceptr address() const { return address_; }
  size_t size() const { return size_; }

 private:
  DeviceBuffer(const Driver* driver, CUdeviceptr address, size_t size)
      : driver_(driver), address_(address), size_(size) {}
  absl::Status CheckFits(size_t bytes, absl::string_view what) const;
  void Free();

  const Driver* driver_ = nullptr;  // null once moved from
  CUdeviceptr address_ = 0;
  size_t size_ = 0;
};

// A stream that orders itself with the legacy default stream (so the
// synchronous copies above wait for kernels launched on it).
class Stream {
 public:
  static absl::StatusOr<Stream> Create();
  absl::Status Synchronize() const;
  CUstream get() const { return stream_.get(); }

 private:
  struct Destroy {
    const Driver* driver;
    void operator()(CUstream_st* stream) const;
  };
  Stream(const Driver* driver, CUstream stream)
      : stream_(stream, Destroy{driver}) {}

  std::unique_ptr<CUstream_st, Destroy> stream_;
};

// The id of the CUDA graph capture underway on `stream` (unique among the
// process's captures), 0 when none is: what tells one capture's work from
// the next capture's on the same stream.
absl::StatusOr<uint64_t> StreamCaptureId(CUstream stream);

// A timing event.
class Event {
 public:
  static absl::StatusOr<Event> Create();
  // Records on `stream` (nullptr: the legacy default stream).
  absl::Status Record(CUstream stream = nullptr) const;
  absl::Status Synchronize() const;
  CUevent get() const { return event_.get(); }

 private:
  struct Destroy {
    const Driver* driver;
    void operator()(CUevent_st* event) const;
  };
  Event(const Driver* driver, CUevent event) : event_(event, Destroy{driver}) {}

  std::unique_ptr<CUevent_st, Destroy> event_;
};

// Milliseconds between two recorded events; waits for `end` to complete.
absl::StatusOr<float> ElapsedMilliseconds(const Event& start, const Event& end);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_MEMORY_H_
