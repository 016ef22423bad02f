#include "lib/gemm/cublas_library.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::gemm {
namespace {

absl::Status Unavailable(absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("cuBLAS reference unavailable: ", why));
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

absl::StatusOr<CublasLibrary> LoadCublas(const char* name) {
  // Never closed, not even when refused: cuBLAS does not free what its
  // static initializers allocate (2 x 72 KiB), so unloading it leaks that.
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return Unavailable(
        absl::StrCat("cannot load ", name, " (", dlerror(), ")"));
  }
  CublasLibrary cublas;
  for (const absl::Status& resolved :
       {Resolve(library, name, "cublasCreate_v2", cublas.create),
        Resolve(library, name, "cublasSetStream_v2", cublas.set_stream),
        Resolve(library, name, "cublasGemmEx", cublas.gemm_ex)}) {
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
