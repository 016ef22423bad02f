#ifndef PTXGEN_RUNTIME_DRIVER_H_
#define PTXGEN_RUNTIME_DRIVER_H_

// The CUDA Driver API, loaded with dlopen on first use so that generation and
// compilation keep working on machines without a driver. <cuda.h> supplies
// types only: ptxgen never links libcuda.

#include <cuda.h>
#include <cudaTypedefs.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::runtime {

// Get() loads this library unless the environment variable names another
// by its absolute path (read once, at first load; tests point it at a
// missing file). A relative path is refused: it would load a library from
// the current folder.
inline constexpr char kDriverLibrary[] = "libcuda.so.1";
inline constexpr char kDriverLibraryEnv[] = "PTXGEN_LIBCUDA";

// The entry points ptxgen uses (cuCtxCreate and cuCtxDestroy only its
// tests: the library itself never creates a context), each pinned to the
// CUDA version whose ABI <cuda.h> declares under that name (cuMemAlloc is
// cuMemAlloc_v2, 3020).
// Pinning matters: asking cuGetProcAddress for CUDA_VERSION would hand back
// cuCtxGetDevice's 13.0 form, which takes an extra argument. driver.cc
// static_asserts that each pinned type matches the declaration.
#define PTXGEN_CUDA_DRIVER_ENTRY_POINTS(X) \
  X(cuGetErrorName, 6000)                  \
  X(cuGetErrorString, 6000)                \
  X(cuInit, 2000)                          \
  X(cuDriverGetVersion, 2020)              \
  X(cuDeviceGet, 2000)                     \
  X(cuDeviceGetCount, 2000)                \
  X(cuDeviceGetName, 2000)                 \
  X(cuDeviceGetAttribute, 2000)            \
  X(cuDeviceTotalMem, 3020)                \
  X(cuDevicePrimaryCtxRetain, 7000)        \
  X(cuDevicePrimaryCtxRelease, 11000)      \
  X(cuCtxSetCurrent, 4000)                 \
  X(cuCtxGetCurrent, 4000)                 \
  X(cuCtxPushCurrent, 4000)                \
  X(cuCtxPopCurrent, 4000)                 \
  X(cuCtxGetDevice, 2000)                  \
  X(cuCtxGetId, 12000)                     \
  X(cuCtxCreate, 12050)                    \
  X(cuCtxDestroy, 4000)                    \
  X(cuCtxSynchronize, 2000)                \
  X(cuPointerGetAttributes, 7000)          \
  X(cuModuleLoadDataEx, 2010)              \
  X(cuModuleUnload, 2000)                  \
  X(cuModuleGetFunction, 2000)             \
  X(cuFuncGetAttribute, 2020)              \
  X(cuFuncSetAttribute, 9000)              \
  X(cuLaunchKernel, 4000)                  \
  X(cuLaunchKernelEx, 11060)               \
  X(cuOccupancyMaxActiveClusters, 11070)   \
  X(cuMemAlloc, 3020)                      \
  X(cuMemFree, 3020)                       \
  X(cuMemcpyHtoD, 3020)                    \
  X(cuMemcpyDtoH, 3020)                    \
  X(cuMemcpyDtoDAsync, 3020)               \
  X(cuMemsetD8, 3020)                      \
  X(cuMemsetD32, 3020)                     \
  X(cuMemsetD16Async, 3020)                \
  X(cuMemsetD32Async, 3020)                \
  X(cuStreamCreate, 2000)                  \
  X(cuStreamDestroy, 4000)                 \
  X(cuStreamSynchronize, 2000)             \
  X(cuStreamGetCtx, 9020)                  \
  X(cuStreamBeginCapture, 10010)           \
  X(cuStreamGetCaptureInfo, 12030)         \
  X(cuStreamEndCapture, 10000)             \
  X(cuGraphInstantiateWithFlags, 11040)    \
  X(cuGraphLaunch, 10000)                  \
  X(cuGraphExecDestroy, 10000)             \
  X(cuGraphDestroy, 10000)                 \
  X(cuEventCreate, 2000)                   \
  X(cuEventDestroy, 4000)                  \
  X(cuEventRecord, 2000)                   \
  X(cuEventSynchronize, 2000)              \
  X(cuEventElapsedTime, 12080)             \
  X(cuTensorMapEncodeTiled, 12000)

// A loaded driver: its entry points, resolved and initialized (cuInit done).
// Call them by their <cuda.h> names: driver->cuMemAlloc(&ptr, bytes).
class Driver {
 public:
  // The process's driver, loaded once (thread-safe) from $PTXGEN_LIBCUDA or
  // libcuda.so.1 and kept for the life of the process: objects destroyed
  // during exit may still release resources through it. Without a usable
  // driver, FailedPrecondition naming the library, every time.
  static absl::StatusOr<const Driver*> Get();

  // Loads `library_path` afresh, bypassing Get()'s instance; for tests and
  // tools that choose the library. The library is never unloaded (unloading
  // a driver under its own threads is unsafe; dlopen counts references).
  static absl::StatusOr<std::unique_ptr<Driver>> Load(
      const std::string& library_path);

  const std::string& library_path() const { return library_path_; }
  // cuDriverGetVersion: 1000 * major + 10 * minor (13000 is CUDA 13.0).
  int version() const { return version_; }

  // OK for CUDA_SUCCESS; otherwise a status whose message is
  // "<what>: CUDA_ERROR_NAME (the driver's description)".
  absl::Status Check(CUresult result, absl::string_view what) const;

#define PTXGEN_DECLARE_ENTRY(name, version) \
  PFN_##name##_v##version name = nullptr;
  PTXGEN_CUDA_DRIVER_ENTRY_POINTS(PTXGEN_DECLARE_ENTRY)
#undef PTXGEN_DECLARE_ENTRY

 private:
  explicit Driver(std::string library_path)
      : library_path_(std::move(library_path)) {}
  absl::Status Resolve(void* library);

  std::string library_path_;
  int version_ = 0;
};

// Driver::Check through Get(), for callers that call entry points
// themselves. Without a driver the message carries the numeric CUresult.
absl::Status CheckCu(CUresult result, absl::string_view what);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_DRIVER_H_
