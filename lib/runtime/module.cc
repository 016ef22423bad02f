#include "ptxgen/runtime/module.h"

#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {
namespace {

// Hardware limits of a launch shape (the same on every sm_90 device).
constexpr uint32_t kMaxGridX = 0x7fffffff;
constexpr uint32_t kMaxGridYZ = 65535;
constexpr uint32_t kMaxBlockThreads = 1024;
constexpr uint32_t kMaxBlockZ = 64;

std::string DimText(const Dim3& dim) {
  return absl::StrCat(dim.x, "x", dim.y, "x", dim.z);
}

uint64_t Volume(const Dim3& dim) { return uint64_t{dim.x} * dim.y * dim.z; }

absl::Status IllegalLaunch(absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("launch: ", rule));
}

absl::Status ValidateCluster(const Dim3& grid, const Dim3& cluster) {
  if (cluster.x < 1 || cluster.y < 1 || cluster.z < 1) {
    return IllegalLaunch(
        absl::StrCat("cluster ", DimText(cluster),
                     " must be at least 1 in every dimension"));
  }
  if (grid.x % cluster.x != 0 || grid.y % cluster.y != 0 ||
      grid.z % cluster.z != 0) {
    return IllegalLaunch(absl::StrCat("grid ", DimText(grid),
                                      " is not a whole number of clusters ",
                                      DimText(cluster)));
  }
  if (Volume(cluster) > kMaxPortableClusterSize) {
    return IllegalLaunch(absl::StrCat(
        "cluster ", DimText(cluster), " has ", Volume(cluster),
        " blocks; the portable maximum is ", kMaxPortableClusterSize));
  }
  return absl::OkStatus();
}

// The log the driver wrote into `buffer` (NUL-terminated) as a titled
// section, or nothing when it wrote none.
std::string LogSection(absl::string_view title, const std::string& buffer) {
  absl::string_view log =
      absl::StripAsciiWhitespace(absl::string_view(buffer.c_str()));
  if (log.empty()) return "";
  return absl::StrCat("\n", title, ":\n", log);
}

// The architecture that PTX's .target directive names, as the virtual
// architecture whose rules apply: the driver JIT-compiles it, so
// ".target sm_80" is compute_80.
absl::StatusOr<std::string> PtxTarget(absl::string_view ptx) {
  constexpr absl::string_view kDirective = ".target";
  const size_t directive = ptx.find(kDirective);
  if (directive == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "PTX has no .target directive (expected e.g. '.target sm_90a')");
  }
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(
      ptx.substr(directive + kDirective.size()));
  size_t length = 0;
  while (length < rest.size() &&
         (absl::ascii_isalnum(rest[length]) || rest[length] == '_')) {
    ++length;
  }
  absl::string_view target = rest.substr(0, length);
  if (absl::ConsumePrefix(&target, "sm_")) {
    return absl::StrCat("compute_", target);
  }
  return std::string(target);
}

absl::Status CheckArchOnCurrentDevice(absl::string_view arch) {
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<int> major =
      GetDeviceAttribute(*device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  if (!major.ok()) return major.status();
  absl::StatusOr<int> minor =
      GetDeviceAttribute(*device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  if (!minor.ok()) return minor.status();
  return CheckArchSupported(arch, *major, *minor);
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

absl::Status ValidateLaunchConfig(const LaunchConfig& config) {
  const Dim3& grid = config.grid;
  const Dim3& block = config.block;
  if (grid.x < 1 || grid.x > kMaxGridX || grid.y < 1 || grid.y > kMaxGridYZ ||
      grid.z < 1 || grid.z > kMaxGridYZ) {
    return IllegalLaunch(absl::StrCat(
        "grid ", DimText(grid),
        " must be within 1..2147483647 x 1..65535 x 1..65535 blocks"));
  }
  if (block.x < 1 || block.y < 1 || block.z < 1 || block.z > kMaxBlockZ ||
      Volume(block) > kMaxBlockThreads) {
    return IllegalLaunch(
        absl::StrCat("block ", DimText(block),
                     " must have 1..1024 threads in all, with z at most 64"));
  }
  if (config.shared_bytes < 0) {
    return IllegalLaunch(absl::StrCat("shared_bytes must not be negative (got ",
                                      config.shared_bytes, ")"));
  }
  return ValidateCluster(grid, config.cluster);
}

absl::StatusOr<int> Function::Attribute(CUfunction_attribute attribute) const {
  int value = 0;
  if (absl::Status status = driver_->Check(
          driver_->cuFuncGetAttribute(&value, attribute, function_),
          absl::StrCat("cuFuncGetAttribute(", name_, ", ",
                       static_cast<int>(attribute), ")"));
      !status.ok()) {
    return status;
  }
  return value;
}

absl::Status Function::SetMaxDynamicSharedMemory(int bytes) const {
  if (bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", name_, ": dynamic shared memory must not be negative (got ",
        bytes, ")"));
  }
  absl::StatusOr<int> static_bytes =
      Attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  if (!static_bytes.ok()) return static_bytes.status();
  absl::StatusOr<CUdevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<int> optin = GetDeviceAttribute(
      *device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (!optin.ok()) return optin.status();
  if (int64_t{bytes} + *static_bytes > *optin) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", name_, ": ", bytes, " dynamic + ", *static_bytes,
        " static shared bytes exceed the device's opt-in maximum of ", *optin,
        " bytes per block"));
  }
  return driver_->Check(
      driver_->cuFuncSetAttribute(
          function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
      absl::StrCat("cuFuncSetAttribute(", name_,
                   ", MAX_DYNAMIC_SHARED_SIZE_BYTES = ", bytes, ")"));
}

// The driver answers an oversized request with a bare CUDA_ERROR_INVALID_VALUE:
// this names the limit and what to do about it.
absl::Status Function::CheckDynamicShared(int bytes) const {
  if (bytes == 0) return absl::OkStatus();
  absl::StatusOr<int> limit =
      Attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  if (!limit.ok()) return limit.status();
  if (bytes <= *limit) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "kernel ", name_, ": the launch asks for ", bytes,
      " bytes of dynamic shared memory but the kernel's limit is ", *limit,
      "; call SetMaxDynamicSharedMemory(", bytes,
      ") first (the limit starts at ", kDefaultSharedBytesLimit / 1024,
      " KB less static shared memory)"));
}

absl::Status Function::Launch(const LaunchConfig& config, void** args) const {
  if (absl::Status valid = ValidateLaunchConfig(config); !valid.ok()) {
    return Prefixed(absl::StrCat("kernel ", name_, ": "), valid);
  }
  absl::Status launched = Volume(config.cluster) > 1
                              ? LaunchCluster(config, args)
                              : LaunchPlain(config, args);
  if (launched.ok()) return launched;
  // Diagnosed after the fact, so that a launch costs one driver call.
  const absl::Status shared = CheckDynamicShared(config.shared_bytes);
  return shared.ok() ? launched : shared;
}

absl::Status Function::LaunchPlain(const LaunchConfig& config,
                                   void** args) const {
  const Dim3& grid = config.grid;
  const Dim3& block = config.block;
  return driver_->Check(
      driver_->cuLaunchKernel(function_, grid.x, grid.y, grid.z, block.x,
                              block.y, block.z, config.shared_bytes,
                              config.stream, args, nullptr),
      absl::StrCat("cuLaunchKernel(", name_, ", grid ", DimText(grid),
                   ", block ", DimText(block), ")"));
}

namespace {

// The driver's form of a launch; `cluster` must outlive it.
CUlaunchConfig DriverLaunchConfig(const LaunchConfig& config,
                                  CUlaunchAttribute& cluster) {
  cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.clusterDim.x = config.cluster.x;
  cluster.value.clusterDim.y = config.cluster.y;
  cluster.value.clusterDim.z = config.cluster.z;
  CUlaunchConfig launch = {};
  launch.gridDimX = config.grid.x;
  launch.gridDimY = config.grid.y;
  launch.gridDimZ = config.grid.z;
  launch.blockDimX = config.block.x;
  launch.blockDimY = config.block.y;
  launch.blockDimZ = config.block.z;
  launch.sharedMemBytes = config.shared_bytes;
  launch.hStream = config.stream;
  launch.attrs = &cluster;
  launch.numAttrs = 1;
  return launch;
}

}  // namespace

absl::Status Function::LaunchCluster(const LaunchConfig& config,
                                     void** args) const {
  CUlaunchAttribute cluster;
  const CUlaunchConfig launch = DriverLaunchConfig(config, cluster);
  return driver_->Check(
      driver_->cuLaunchKernelEx(&launch, function_, args, nullptr),
      absl::StrCat("cuLaunchKernelEx(", name_, ", grid ", DimText(config.grid),
                   ", block ", DimText(config.block), ", cluster ",
                   DimText(config.cluster), ")"));
}

absl::StatusOr<int> Function::MaxActiveClusters(
    const LaunchConfig& config) const {
  if (absl::Status valid = ValidateLaunchConfig(config); !valid.ok()) {
    return Prefixed(absl::StrCat("kernel ", name_, ": "), valid);
  }
  CUlaunchAttribute cluster;
  const CUlaunchConfig launch = DriverLaunchConfig(config, cluster);
  int clusters = 0;
  if (absl::Status status = driver_->Check(
          driver_->cuOccupancyMaxActiveClusters(&clusters, function_, &launch),
          absl::StrCat("cuOccupancyMaxActiveClusters(", name_, ")"));
      !status.ok()) {
    return status;
  }
  return clusters;
}

void Module::Unload::operator()(CUmod_st* module) const {
  // A destructor cannot report; an unload fails only for a context that is
  // already gone, which took the module with it.
  driver->cuModuleUnload(module);
}

absl::StatusOr<Module> Module::LoadCubin(
    const compile::CompiledModule& compiled) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  const std::string what = absl::StrCat("module ", compiled.name);
  if (compiled.cubin.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has no CUBIN (compiled for ", compiled.options.arch, ")"));
  }
  if (absl::Status arch = CheckArchOnCurrentDevice(compiled.options.arch);
      !arch.ok()) {
    return Prefixed(absl::StrCat(what, ": "), arch);
  }
  return LoadImage(**driver, compiled.cubin, what);
}

absl::StatusOr<Module> Module::LoadPtx(absl::string_view ptx) {
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<std::string> target = PtxTarget(ptx);
  if (!target.ok()) return target.status();
  if (absl::Status arch = CheckArchOnCurrentDevice(*target); !arch.ok()) {
    return Prefixed("PTX module: ", arch);
  }
  // The driver reads PTX up to its NUL; the std::string supplies one.
  return LoadImage(**driver, std::string(ptx), "PTX module");
}

absl::StatusOr<Module> Module::LoadImage(const Driver& driver,
                                         const std::string& image,
                                         absl::string_view what) {
  // Room for a screenful of ptxas errors; the driver truncates the rest.
  std::string error_log(16 * 1024, '\0');
  std::string info_log(16 * 1024, '\0');
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(error_log.size()),
                    info_log.data(), reinterpret_cast<void*>(info_log.size())};
  CUmodule module = nullptr;
  const CUresult result = driver.cuModuleLoadDataEx(
      &module, image.data(), std::size(options), options, values);
  if (result == CUDA_SUCCESS) return Module(&driver, module);
  absl::Status status =
      driver.Check(result, absl::StrCat("cuModuleLoadDataEx(", what, ")"));
  return absl::Status(
      status.code(),
      absl::StrCat(status.message(), LogSection("JIT error log", error_log),
                   LogSection("JIT info log", info_log)));
}

absl::StatusOr<LoadedFunction> LoadKernelFunction(
    const compile::CompiledModule& compiled, absl::string_view name,
    int shared_bytes) {
  absl::StatusOr<Module> module = Module::LoadCubin(compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<Function> function = module->GetFunction(name);
  if (!function.ok()) return function.status();
  if (absl::Status shared = function->SetMaxDynamicSharedMemory(shared_bytes);
      !shared.ok()) {
    return shared;
  }
  return LoadedFunction{*std::move(module), *std::move(function)};
}

absl::StatusOr<Function> Module::GetFunction(absl::string_view name) const {
  const Driver* driver = module_.get_deleter().driver;
  std::string kernel(name);
  CUfunction function = nullptr;
  absl::Status status = driver->Check(
      driver->cuModuleGetFunction(&function, module_.get(), kernel.c_str()),
      absl::StrCat("cuModuleGetFunction(\"", name, "\")"));
  if (absl::IsNotFound(status)) {
    return absl::NotFoundError(absl::StrCat(
        status.message(),
        ": no such kernel in the module (C++ kernel names are mangled; "
        "declare kernels extern \"C\" to look them up by their plain name)"));
  }
  if (!status.ok()) return status;
  return Function(driver, function, std::move(kernel));
}

}  // namespace ptxgen::runtime
