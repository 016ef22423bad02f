// Without a driver, every runtime entry point fails with FailedPrecondition
// naming libcuda.so.1, and generation and compilation keep working.

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/tensor_map.h"

namespace ptxgen::runtime {
namespace {

constexpr char kMissingDriver[] = "/nonexistent/libcuda.so.1";

// The driver's path is read once, at first load: set it before any test
// runs, so this binary sees no driver even on a GPU machine.
const bool kDriverHidden = setenv(kDriverLibraryEnv, kMissingDriver, 1) == 0;

void ExpectNoDriver(const absl::Status& status, absl::string_view entry_point) {
  EXPECT_TRUE(absl::IsFailedPrecondition(status))
      << entry_point << ": " << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "no CUDA driver found"))
      << entry_point << ": " << status;
  EXPECT_TRUE(absl::StrContains(status.message(), kMissingDriver))
      << entry_point << ": " << status;
}

TEST(DriverAbsent, GetExplainsWhatIsMissingAndWhatStillWorks) {
  ASSERT_TRUE(kDriverHidden);
  const absl::StatusOr<const Driver*> driver = Driver::Get();
  ExpectNoDriver(driver.status(), "Driver::Get");
  EXPECT_TRUE(absl::StrContains(driver.status().message(),
                                "Generating and compiling kernels works "
                                "without a driver"))
      << driver.status();
}

TEST(DriverAbsent, EveryEntryPointFailsWithFailedPrecondition) {
  compile::CompiledModule compiled;
  compiled.name = "k";
  compiled.cubin = "not really a cubin";
  TensorMapSpec legal_map;
  legal_map.global_address = 0x10000;
  legal_map.dims = {64};
  legal_map.box = {64};
  const std::pair<const char*, std::function<absl::Status()>> entry_points[] = {
      {"DeviceCount", [] { return DeviceCount().status(); }},
      {"GetDevice", [] { return GetDevice(0).status(); }},
      {"GetDeviceAttribute",
       [] {
         return GetDeviceAttribute(0, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
             .status();
       }},
      {"GetDeviceProperties", [] { return GetDeviceProperties(0).status(); }},
      {"CheckDeviceRuns", [] { return CheckDeviceRuns(0, "sm_90a"); }},
      {"PrimaryContext::Retain",
       [] { return PrimaryContext::Retain(0).status(); }},
      {"RetainedPrimaryContext",
       [] { return RetainedPrimaryContext(0).status(); }},
      {"ScopedCurrentContext::Push",
       [] {
         return ScopedCurrentContext::Push(reinterpret_cast<CUcontext>(0x1000))
             .status();
       }},
      {"ContextId", [] { return ContextId(nullptr).status(); }},
      {"CurrentDevice", [] { return CurrentDevice().status(); }},
      {"CurrentDeviceOrdinal", [] { return CurrentDeviceOrdinal().status(); }},
      {"CurrentDeviceProperties",
       [] { return CurrentDeviceProperties().status(); }},
      {"SynchronizeCurrentContext", [] { return SynchronizeCurrentContext(); }},
      {"Module::LoadCubin",
       [&] { return Module::LoadCubin(compiled).status(); }},
      {"Module::LoadPtx",
       [] {
         return Module::LoadPtx(".version 8.0\n.target sm_90a\n").status();
       }},
      {"EncodeTensorMap", [&] { return EncodeTensorMap(legal_map).status(); }},
      {"DeviceBuffer::Allocate",
       [] { return DeviceBuffer::Allocate(256).status(); }},
      {"Stream::Create", [] { return Stream::Create().status(); }},
      {"Event::Create", [] { return Event::Create().status(); }},
  };
  for (const auto& [name, call] : entry_points) ExpectNoDriver(call(), name);
}

TEST(DriverAbsent, CheckCuStillNamesTheCallAndTheCode) {
  const absl::Status status = CheckCu(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_EQ(status.message(),
            "cuMemAlloc: CUresult 2 (no CUDA driver loaded to name it)");
}

TEST(DriverAbsent, ValidationNeedsNoDriver) {
  TensorMapSpec spec;
  spec.global_address = 0x10008;
  spec.dims = {64};
  spec.box = {64};
  EXPECT_EQ(EncodeTensorMap(spec).status().message(),
            "tensor map: global_address 0x10008 must be 16-byte aligned");
  EXPECT_TRUE(CheckArchSupported("sm_90a", 9, 0).ok());
  EXPECT_TRUE(ValidateLaunchConfig(LaunchConfig()).ok());
  const absl::StatusOr<ScopedCurrentContext> null_context =
      ScopedCurrentContext::Push(nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(null_context.status()))
      << null_context.status();
  EXPECT_EQ(null_context.status().message(),
            "ScopedCurrentContext::Push: the context is null");
}

TEST(DriverAbsent, CompilationNeedsNoDriver) {
  const absl::StatusOr<compile::CompiledModule> compiled = compile::CompileCuda(
      "driverless", "extern \"C\" __global__ void noop() {}", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(compiled->cubin.empty());
}

}  // namespace
}  // namespace ptxgen::runtime
