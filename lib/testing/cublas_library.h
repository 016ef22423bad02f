#ifndef PTXGEN_LIB_TESTING_CUBLAS_LIBRARY_H_
#define PTXGEN_LIB_TESTING_CUBLAS_LIBRARY_H_

// cuBLAS loaded at run time, the reference GEMMs are checked and timed
// against. Internal to //lib/testing; a target of its own so that tests can
// load a stand-in library.

#include "absl/status/statusor.h"
#include "cublas_v2.h"

namespace ptxgen::gemm {

// The cuBLAS entry points ptxgen uses, and a handle.
struct CublasLibrary {
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                    cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int,
                                    const void*, cudaDataType, int, const void*,
                                    void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  GemmEx gemm_ex = nullptr;
  cublasHandle_t handle = nullptr;
};

// The library ptxgen loads: cuBLAS of CUDA 13.
inline constexpr char kCublasLibrary[] = "libcublas.so.13";

// Loads `name` (a file name for the loader's search, or a path) with dlopen,
// resolves the entry points and creates a handle. FailedPrecondition naming
// `name` when it cannot be loaded, lacks an entry point or cannot create a
// handle. Nothing is left allocated on any path; a library that was loaded
// stays loaded for the process, as unloading cuBLAS leaks its own memory.
// Call it once per library: ptxgen keeps the result.
absl::StatusOr<CublasLibrary> LoadCublas(const char* name);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_TESTING_CUBLAS_LIBRARY_H_
