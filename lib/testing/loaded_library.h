#ifndef PTXGEN_LIB_TESTING_LOADED_LIBRARY_H_
#define PTXGEN_LIB_TESTING_LOADED_LIBRARY_H_

// Opening a reference library (cuBLAS, cuBLASLt) with dlopen and resolving
// its entry points, with refusals that name the library (private to
// lib/testing).

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ptxgen/base/printable.h"

namespace ptxgen::gemm {

// "<what> reference unavailable: <why>".
inline absl::Status ReferenceUnavailable(absl::string_view what,
                                         absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, " reference unavailable: ", why));
}

// The handle of library `name`. Never closed, not even when the caller
// refuses it: cuBLAS and cuBLASLt do not free what their static
// initializers allocate, so unloading them leaks that.
inline absl::StatusOr<void*> OpenForever(absl::string_view what,
                                         const char* name) {
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  return ReferenceUnavailable(
      what, absl::StrCat("cannot load ", name, " (",
                         base::PrintableValue(dlerror()), ")"));
}

// Sets `function` to `symbol` of `library` (named `name`).
template <typename Function>
absl::Status Resolve(absl::string_view what, void* library, const char* name,
                     const char* symbol, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (function != nullptr) return absl::OkStatus();
  return ReferenceUnavailable(what, absl::StrCat(name, " lacks ", symbol));
}

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_TESTING_LOADED_LIBRARY_H_
