#include "lib/testing/cublas_library.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/testing/loaded_library.h"

namespace ptxgen::gemm {
namespace {

constexpr absl::string_view kWhat = "cuBLAS";

absl::Status Unavailable(absl::string_view why) {
  return ReferenceUnavailable(kWhat, why);
}

}  // namespace

absl::StatusOr<CublasLibrary> LoadCublas(const char* name) {
  absl::StatusOr<void*> opened = OpenForever(kWhat, name);
  if (!opened.ok()) return opened.status();
  void* const library = *opened;
  CublasLibrary cublas;
  for (const absl::Status& resolved :
       {Resolve(kWhat, library, name, "cublasCreate_v2", cublas.create),
        Resolve(kWhat, library, name, "cublasSetStream_v2", cublas.set_stream),
        Resolve(kWhat, library, name, "cublasGemmEx", cublas.gemm_ex)}) {
    if (!resolved.ok()) return resolved;
  }
  if (const cublasStatus_t created = cublas.create(&cublas.handle);
      created != CUBLAS_STATUS_SUCCESS) {
    return Unavailable(
        absl::StrCat(name, " cannot create a handle (cublasCreate_v2 returned ",
                     static_cast<int>(created), ")"));
  }
  return cublas;
}

}  // namespace ptxgen::gemm
