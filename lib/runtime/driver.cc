#include "ptxgen/runtime/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>
#include <vector>

#include "absl/memory/memory.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptxgen/base/environment.h"
#include "ptxgen/base/printable.h"

namespace ptxgen::runtime {
namespace {

// A pinned version whose typedef differs from <cuda.h>'s declaration would
// call the driver with the wrong arguments; refuse to compile instead.
#define PTXGEN_CHECK_ENTRY_ABI(name, version)                             \
  static_assert(std::is_same_v<PFN_##name##_v##version, decltype(&name)>, \
                #name                                                     \
                ": the pinned version is not the one <cuda.h> declares");
PTXGEN_CUDA_DRIVER_ENTRY_POINTS(PTXGEN_CHECK_ENTRY_ABI)
#undef PTXGEN_CHECK_ENTRY_ABI

// Stringizes after macro expansion: cuMemAlloc becomes "cuMemAlloc_v2", the
// name the library exports for the ABI <cuda.h> declares.
#define PTXGEN_STRINGIZE(name) #name

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

std::string DlError() {
  const char* error = dlerror();
  // The loader quotes the path it was given, which comes from the
  // environment: one line, whatever it holds.
  return error != nullptr ? base::PrintableValue(error)
                          : "unknown dlopen error";
}

// $PTXGEN_LIBCUDA, else kDriverLibrary. Like the cache's folder variables,
// the variable takes only an absolute path: a relative one would load
// whatever library lies in the current folder.
absl::StatusOr<std::string> LibraryPathFromEnvironment() {
  const absl::string_view path = base::EnvironmentVariable(kDriverLibraryEnv);
  if (path.empty()) return std::string(kDriverLibrary);
  if (absl::StartsWith(path, "/")) return std::string(path);
  return absl::FailedPreconditionError(absl::StrCat(
      kDriverLibraryEnv, "='", base::PrintableValue(path),
      "' is not an absolute path: refused, as it would load a library from "
      "the current folder (give the driver's absolute path, or unset it for ",
      kDriverLibrary, ")"));
}

absl::StatusOr<std::unique_ptr<Driver>> LoadFromEnvironment() {
  absl::StatusOr<std::string> path = LibraryPathFromEnvironment();
  if (!path.ok()) return path.status();
  return Driver::Load(*path);
}

}  // namespace

absl::StatusOr<const Driver*> Driver::Get() {
  static const auto* const loaded =
      new absl::StatusOr<std::unique_ptr<Driver>>(LoadFromEnvironment());
  if (!loaded->ok()) return loaded->status();
  const std::unique_ptr<Driver>& driver = **loaded;
  return driver.get();
}

absl::StatusOr<std::unique_ptr<Driver>> Driver::Load(
    const std::string& library_path) {
  void* library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA driver found: cannot load ",
        base::PrintableValue(library_path), " (", DlError(),
        "). Generating and compiling kernels works without a driver; running "
        "them needs the NVIDIA driver's ",
        kDriverLibrary, " (or its path in $", kDriverLibraryEnv, ")"));
  }
  auto driver = absl::WrapUnique(new Driver(library_path));
  if (absl::Status resolved = driver->Resolve(library); !resolved.ok()) {
    dlclose(library);  // Not a driver: nothing of it was started.
    return resolved;
  }
  if (absl::Status init = driver->Check(driver->cuInit(0), "cuInit(0)");
      !init.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CUDA driver ", base::PrintableValue(library_path),
                     " loaded but did not initialize: ", init.message()));
  }
  if (absl::Status version = driver->Check(
          driver->cuDriverGetVersion(&driver->version_), "cuDriverGetVersion");
      !version.ok()) {
    return version;
  }
  return driver;
}

absl::Status Driver::Resolve(void* library) {
  // cuGetProcAddress (drivers for CUDA 12.0 and newer) hands out the pinned
  // ABI version; a library without it is asked by exported name.
  const auto get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      dlsym(library, "cuGetProcAddress_v2"));
  CUresult refusal = CUDA_SUCCESS;  // what cuGetProcAddress last answered
  auto lookup = [&](const char* name, const char* exported_name,
                    int version) -> void* {
    if (get_proc_address == nullptr) return dlsym(library, exported_name);
    void* entry = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const CUresult result = get_proc_address(
        name, &entry, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
    if (result != CUDA_SUCCESS) refusal = result;
    return result == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS
               ? entry
               : nullptr;
  };
  std::vector<absl::string_view> missing;
#define PTXGEN_RESOLVE_ENTRY(name, version)            \
  name = reinterpret_cast<PFN_##name##_v##version>(    \
      lookup(#name, PTXGEN_STRINGIZE(name), version)); \
  if (name == nullptr) missing.push_back(#name);
  PTXGEN_CUDA_DRIVER_ENTRY_POINTS(PTXGEN_RESOLVE_ENTRY)
#undef PTXGEN_RESOLVE_ENTRY
  if (missing.empty()) return absl::OkStatus();
  if (refusal == CUDA_ERROR_STUB_LIBRARY) {
    return absl::FailedPreconditionError(absl::StrCat(
        library_path_,
        " is the CUDA toolkit's stub libcuda "
        "(CUDA_ERROR_STUB_LIBRARY): it lets programs link but runs nothing; "
        "running kernels needs the NVIDIA driver's libcuda.so.1"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(library_path_, " is not a usable CUDA driver: it lacks ",
                   absl::StrJoin(missing, ", "),
                   " (ptxgen needs a driver for CUDA 12.0 or newer)"));
}

absl::Status Driver::Check(CUresult result, absl::string_view what) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &description);
  return absl::Status(
      CodeFor(result),
      absl::StrCat(
          what, ": ",
          name != nullptr ? name
                          : absl::StrCat("CUresult ", static_cast<int>(result)),
          " (", description != nullptr ? description : "undescribed", ")"));
}

absl::Status CheckCu(CUresult result, absl::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (driver.ok()) return (*driver)->Check(result, what);
  return absl::Status(
      CodeFor(result),
      absl::StrCat(what, ": CUresult ", static_cast<int>(result),
                   " (no CUDA driver loaded to name it)"));
}

}  // namespace ptxgen::runtime
