// A stand-in for libcublas with the entry points ptxgen resolves.
// cublasCreate_v2 returns CREATE_STATUS, set by the BUILD target: 0 succeeds
// with a dummy handle; 3 (CUBLAS_STATUS_ALLOC_FAILED) fails as real cuBLAS
// does without a usable GPU.
#include "cublas_v2.h"

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  static int dummy;
  if (CREATE_STATUS == CUBLAS_STATUS_SUCCESS) {
    *handle = reinterpret_cast<cublasHandle_t>(&dummy);
  }
  return static_cast<cublasStatus_t>(CREATE_STATUS);
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}

// Resolved, never called by the loader.
cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t,
                            cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*,
                            cudaDataType, int, const void*, void*, cudaDataType,
                            int, cublasComputeType_t, cublasGemmAlgo_t) {
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // extern "C"
