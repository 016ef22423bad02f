#include "ptxgen/runtime/device.h"

#include "absl/strings/str_cat.h"
#include "ptxgen/compile/arch.h"

namespace ptxgen::runtime {
namespace {

absl::Status Refuse(absl::string_view arch, absl::string_view rule,
                    int cc_major, int cc_minor) {
  return absl::FailedPreconditionError(
      absl::StrCat(arch, " code ", rule, "; this device is compute capability ",
                   cc_major, ".", cc_minor));
}

}  // namespace

absl::StatusOr<int> DeviceCount() {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  int count = 0;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuDeviceGetCount(&count), "cuDeviceGetCount");
      !status.ok()) {
    return status;
  }
  return count;
}

absl::StatusOr<CUdevice> GetDevice(int ordinal) {
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  if (ordinal < 0 || ordinal >= *count) {
    return absl::InvalidArgumentError(absl::StrCat("device ordinal ", ordinal,
                                                   " is out of range: ", *count,
                                                   " CUDA device(s)"));
  }
  const Driver* driver = *Driver::Get();  // DeviceCount() loaded it.
  CUdevice device = 0;
  if (absl::Status status =
          driver->Check(driver->cuDeviceGet(&device, ordinal),
                        absl::StrCat("cuDeviceGet(", ordinal, ")"));
      !status.ok()) {
    return status;
  }
  return device;
}

absl::StatusOr<int> GetDeviceAttribute(CUdevice device,
                                       CUdevice_attribute attribute) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  int value = 0;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuDeviceGetAttribute(&value, attribute, device),
          absl::StrCat("cuDeviceGetAttribute(", static_cast<int>(attribute),
                       ")"));
      !status.ok()) {
    return status;
  }
  return value;
}

absl::StatusOr<DeviceProperties> GetDeviceProperties(int ordinal) {
  absl::StatusOr<CUdevice> device = GetDevice(ordinal);
  if (!device.ok()) return device.status();
  const Driver* driver = *Driver::Get();  // GetDevice() loaded it.
  DeviceProperties properties;
  properties.ordinal = ordinal;
  char name[256] = {};
  size_t global_bytes = 0;
  if (absl::Status status =
          driver->Check(driver->cuDeviceGetName(name, sizeof(name), *device),
                        "cuDeviceGetName");
      !status.ok()) {
    return status;
  }
  if (absl::Status status = driver->Check(
          driver->cuDeviceTotalMem(&global_bytes, *device), "cuDeviceTotalMem");
      !status.ok()) {
    return status;
  }
  properties.name = name;
  properties.global_memory_bytes = global_bytes;

  int cluster_launch = 0;
  const struct {
    CUdevice_attribute attribute;
    int* value;
  } queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &properties.cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &properties.cc_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &properties.sm_count},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
       &properties.max_shared_bytes_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &properties.max_shared_bytes_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
       &properties.max_shared_bytes_per_sm},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &properties.l2_bytes},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
       &properties.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &cluster_launch},
  };
  for (const auto& query : queries) {
    absl::StatusOr<int> value = GetDeviceAttribute(*device, query.attribute);
    if (!value.ok()) return value.status();
    *query.value = *value;
  }
  properties.cluster_launch = cluster_launch != 0;
  return properties;
}

absl::Status CheckDeviceRuns(int ordinal, absl::string_view arch) {
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  if (*count == 0) {
    return absl::FailedPreconditionError("the CUDA driver reports no device");
  }
  absl::StatusOr<DeviceProperties> device = GetDeviceProperties(ordinal);
  if (!device.ok()) return device.status();
  absl::Status runs =
      CheckArchSupported(arch, device->cc_major, device->cc_minor);
  if (runs.ok()) return runs;
  return absl::Status(runs.code(),
                      absl::StrCat(device->name, ": ", runs.message()));
}

absl::Status CheckArchSupported(absl::string_view arch, int cc_major,
                                int cc_minor) {
  absl::StatusOr<compile::ArchName> parsed = compile::ParseArchName(arch);
  if (!parsed.ok()) return parsed.status();
  const int major = parsed->major;
  const int minor = parsed->minor;
  const bool same_family = cc_major == major && cc_minor >= minor;
  switch (parsed->variant) {
    case 'a':
      if (cc_major == major && cc_minor == minor) return absl::OkStatus();
      return Refuse(
          arch,
          absl::StrCat("runs only on compute capability ", major, ".", minor,
                       " (architecture-specific features "
                       "do not exist on any other GPU)"),
          cc_major, cc_minor);
    case 'f':
      if (same_family) return absl::OkStatus();
      return Refuse(
          arch,
          absl::StrCat("runs only on compute capability ", major,
                       ".x with x >= ", minor, " (family-specific features)"),
          cc_major, cc_minor);
    default:
      break;
  }
  if (parsed->is_ptx) {
    if (cc_major > major || same_family) return absl::OkStatus();
    return Refuse(arch,
                  absl::StrCat("(PTX) needs compute capability ", major, ".",
                               minor, " or newer"),
                  cc_major, cc_minor);
  }
  if (same_family) return absl::OkStatus();
  return Refuse(
      arch,
      absl::StrCat("(a CUBIN) runs only on compute capability ", major,
                   ".x with x >= ", minor, " (other GPUs need PTX)"),
      cc_major, cc_minor);
}

}  // namespace ptxgen::runtime
