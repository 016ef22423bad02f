#ifndef PTXGEN_LIB_GEMM_GEMM_PREPARATION_H_
#define PTXGEN_LIB_GEMM_GEMM_PREPARATION_H_

// The preparation of a Gemm whose configuration is chosen (gemm.cc): what
// the autotuner (autotune.cc) prepares each candidate with, and what
// Gemm::Prepare (prepare.cc) calls once it has chosen. Neither calls back:
// gemm.cc knows nothing of autotuning.

#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/options.h"
#include "ptxgen/gemm/problem.h"
#include "ptxgen/gemm/target.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/launch_checks.h"

namespace ptxgen::gemm {

// The Gemm in the runtime's launch checks' messages
// (ptxgen/runtime/launch_checks.h).
inline constexpr runtime::LaunchOwner kGemmLaunchOwner = {
    kGemmFamily, "Gemm", "a Gemm", "GemmOptions"};

// The cache `options` names, else the process-wide one.
compile::KernelCache& CacheOf(const GemmOptions& options);

// The current device, and what GEMM planning knows of it.
struct CurrentGemmDevice {
  runtime::DeviceProperties properties;
  GemmTarget target;
};
absl::StatusOr<CurrentGemmDevice> CurrentDevice();

// A friend of Gemm, which builds it.
class GemmPreparation {
 public:
  // Plans `problem` for the current device (PlanGemm: options.config, else
  // the heuristic's pick; Selection::kAutotune without a config is refused
  // as PlanGemm refuses it), loads the kernel into `context`, current, and
  // re-plans the grid where the driver holds fewer clusters at once than
  // the plan assumed; allocates the workspace the options ask for.
  static absl::StatusOr<Gemm> PrepareChosen(const GemmProblem& problem,
                                            const GemmOptions& options,
                                            CUcontext context);
};

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_GEMM_PREPARATION_H_
