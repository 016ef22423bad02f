#include "lib/testing/cublaslt_library.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/testing/loaded_library.h"

namespace ptxgen::gemm {
namespace {

constexpr absl::string_view kWhat = "cuBLASLt";

absl::Status Unavailable(absl::string_view why) {
  return ReferenceUnavailable(kWhat, why);
}

}  // namespace

absl::StatusOr<CublasLtLibrary> LoadCublasLt(const char* name) {
  absl::StatusOr<void*> opened = OpenForever(kWhat, name);
  if (!opened.ok()) return opened.status();
  void* const library = *opened;
  CublasLtLibrary lt;
  for (const absl::Status& resolved : {
           Resolve(kWhat, library, name, "cublasLtCreate", lt.create),
           Resolve(kWhat, library, name, "cublasLtDestroy", lt.destroy),
           Resolve(kWhat, library, name, "cublasLtMatmulDescCreate",
                   lt.matmul_desc_create),
           Resolve(kWhat, library, name, "cublasLtMatmulDescDestroy",
                   lt.matmul_desc_destroy),
           Resolve(kWhat, library, name, "cublasLtMatmulDescSetAttribute",
                   lt.matmul_desc_set_attribute),
           Resolve(kWhat, library, name, "cublasLtMatrixLayoutCreate",
                   lt.matrix_layout_create),
           Resolve(kWhat, library, name, "cublasLtMatrixLayoutDestroy",
                   lt.matrix_layout_destroy),
           Resolve(kWhat, library, name, "cublasLtMatrixLayoutSetAttribute",
                   lt.matrix_layout_set_attribute),
           Resolve(kWhat, library, name, "cublasLtMatmulPreferenceCreate",
                   lt.preference_create),
           Resolve(kWhat, library, name, "cublasLtMatmulPreferenceDestroy",
                   lt.preference_destroy),
           Resolve(kWhat, library, name, "cublasLtMatmulPreferenceSetAttribute",
                   lt.preference_set_attribute),
           Resolve(kWhat, library, name, "cublasLtMatmulAlgoGetHeuristic",
                   lt.algo_get_heuristic),
           Resolve(kWhat, library, name, "cublasLtMatmul", lt.matmul),
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
