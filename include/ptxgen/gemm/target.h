#ifndef PTXGEN_GEMM_TARGET_H_
#define PTXGEN_GEMM_TARGET_H_

// The device a GEMM is chosen and planned for: the runtime's kernel target
// (runtime/target.h), which every kernel family plans for.

#include "ptxgen/runtime/target.h"

namespace ptxgen::gemm {

// The numbers a GEMM is chosen and planned by: every family's target.
using GemmTarget = runtime::KernelTarget;

// The family's name in what its target, its loaded kernels and its
// launches say ("GEMM target: ...").
inline constexpr char kGemmFamily[] = "GEMM";

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_TARGET_H_
