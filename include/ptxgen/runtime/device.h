#ifndef PTXGEN_RUNTIME_DEVICE_H_
#define PTXGEN_RUNTIME_DEVICE_H_

// Devices: what they are, and whether code built for an architecture runs on
// them.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// What the driver says of one device.
struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;  // compute capability: 9.0 for H100 and H200
  int cc_minor = 0;
  int sm_count = 0;
  // A kernel gets max_shared_bytes_per_block (48 KB) of shared memory unless
  // it opts in to more, up to the _optin figure (Function::
  // SetMaxDynamicSharedMemory).
  int max_shared_bytes_per_block = 0;
  int max_shared_bytes_per_block_optin = 0;
  int max_shared_bytes_per_sm = 0;
  int l2_bytes = 0;
  int max_threads_per_block = 0;
  bool cluster_launch = false;
  uint64_t global_memory_bytes = 0;
};

// How many devices the driver sees.
absl::StatusOr<int> DeviceCount();
// The device of `ordinal` (0 .. DeviceCount() - 1).
absl::StatusOr<CUdevice> GetDevice(int ordinal);
absl::StatusOr<DeviceProperties> GetDeviceProperties(int ordinal);
absl::StatusOr<int> GetDeviceAttribute(CUdevice device,
                                       CUdevice_attribute attribute);

// Whether code for `arch` runs on a device of compute capability
// cc_major.cc_minor, by the rules of NVIDIA's compatibility guide:
// - "sm_90a", "compute_90a" (architecture-specific): exactly 9.0;
// - "sm_100f", "compute_100f" (family-specific): 10.x with x >= 0;
// - "sm_80" (a CUBIN): the same major, minor at least 0 (8.x);
// - "compute_80" (PTX, JIT-compiled by the driver): 8.0 or newer.
// FailedPrecondition names the rule; InvalidArgument for an unknown arch.
// Pure: needs no driver.
absl::Status CheckArchSupported(absl::string_view arch, int cc_major,
                                int cc_minor);

// Whether device `ordinal` can run code for `arch` here: a driver, such a
// device, and CheckArchSupported for its compute capability; the status
// says which is missing ("<device name>: <rule>" for the architecture).
absl::Status CheckDeviceRuns(int ordinal, absl::string_view arch);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_DEVICE_H_
