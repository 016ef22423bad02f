#include "lib/gemm/cublaslt_library.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::gemm {
namespace {

absl::Status Unavailable(absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("cuBLASLt reference unavailable: ", why));
}

// Sets `function` to `symbol` of `library` (named `name`).
template <typename Function>
absl::Status Resolve(void* library, const char* name, const char* symbol,
                     Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (function != nullptr) return absl::OkStatus();
  return Unavailable(absl::StrCat(name, " lacks ", symbol));
}

}  // namespace

absl::StatusOr<CublasLtLibrary> LoadCublasLt(const char* name) {
  // Never closed, not even when refused: like cuBLAS, cuBLASLt does not free
  // what its static initializers allocate, so unloading it leaks that.
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return Unavailable(
        absl::StrCat("cannot load ", name, " (", dlerror(), ")"));
  }
  CublasLtLibrary lt;
  for (const absl::Status& resolved : {
           Resolve(library, name, "cublasLtCreate", lt.create),
           Resolve(library, name, "cublasLtDestroy", lt.destroy),
           Resolve(library, name, "cublasLtMatmulDescCreate",
                   lt.matmul_desc_create),
           Resolve(library, name, "cublasLtMatmulDescDestroy",
                   lt.matmul_desc_destroy),
           Resolve(library, name, "cublasLtMatmulDescSetAttribute",
                   lt.matmul_desc_set_attribute),
           Resolve(library, name, "cublasLtMatrixLayoutCreate",
                   lt.matrix_layout_create),
           Resolve(library, name, "cublasLtMatrixLayoutDestroy",
                   lt.matrix_layout_destroy),
           Resolve(library, name, "cublasLtMatrixLayoutSetAttribute",
                   lt.matrix_layout_set_attribute),
           Resolve(library, name, "cublasLtMatmulPreferenceCreate",
                   lt.preference_create),
           Resolve(library, name, "cublasLtMatmulPreferenceDestroy",
                   lt.preference_destroy),
           Resolve(library, name, "cublasLtMatmulPreferenceSetAttribute",
                   lt.preference_set_attribute),
           Resolve(library, name, "cublasLtMatmulAlgoGetHeuristic",
                   lt.algo_get_heuristic),
           Resolve(library, name, "cublasLtMatmul", lt.matmul),
       }) {
    if (!resolved.ok()) return resolved;
  }
  // A failed cublasLtCreate leaves no handle to destroy.
  if (const cublasStatus_t created = lt.create(&lt.handle);
      created != CUBLAS_STATUS_SUCCESS) {
    return Unavailable(
        absl::StrCat(name, " cannot create a handle (cublasLtCreate returned ",
                     static_cast<int>(created), ")"));
  }
  return lt;
}

}  // namespace ptxgen::gemm
