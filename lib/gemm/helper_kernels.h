#ifndef PTXGEN_LIB_GEMM_HELPER_KERNELS_H_
#define PTXGEN_LIB_GEMM_HELPER_KERNELS_H_

// Small generated kernels the GEMM layer launches beside the GEMMs (random
// fill, split-K reduce), compiled through the kernel cache and loaded once
// per context.

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "ptxgen/runtime/module.h"

namespace ptxgen::gemm {

// The function `name` of the module built from `source()`, loaded into the
// current context on first use.
absl::StatusOr<runtime::Function> HelperKernel(
    const std::string& name,
    const std::function<absl::StatusOr<std::string>()>& source);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_HELPER_KERNELS_H_
