#ifndef PTXGEN_LIB_TESTING_CUBLASLT_LIBRARY_H_
#define PTXGEN_LIB_TESTING_CUBLASLT_LIBRARY_H_

// cuBLASLt loaded at run time: the reference for the GEMM problems with
// epilogues, batches and either operand major (cublaslt_reference.h).
// Internal to //lib/testing; a target of its own so that tests can load a
// stand-in library.

#include "absl/status/statusor.h"
#include "cublasLt.h"

namespace ptxgen::gemm {

// The cuBLASLt entry points ptxgen uses, and a handle.
struct CublasLtLibrary {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) matrix_layout_set_attribute =
      nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute =
      nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  cublasLtHandle_t handle = nullptr;
};

// The library ptxgen loads: cuBLASLt of CUDA 13.
inline constexpr char kCublasLtLibrary[] = "libcublasLt.so.13";

// Loads `name` (a file name for the loader's search, or a path) with dlopen,
// resolves the entry points and creates a handle. FailedPrecondition naming
// `name` when it cannot be loaded, lacks an entry point (the first missing
// one is named) or cannot create a handle. Nothing is left allocated on any
// path; a library that was loaded stays loaded for the process (as with
// cuBLAS, unloading it would leak what its initializers allocate), and so
// does the handle of a successful load. Call it once per library: ptxgen
// keeps the result (and cuBLASLt 13 itself leaks 192 bytes in each
// cublasLtCreate that fails, as it does without a GPU).
absl::StatusOr<CublasLtLibrary> LoadCublasLt(const char* name);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_TESTING_CUBLASLT_LIBRARY_H_
