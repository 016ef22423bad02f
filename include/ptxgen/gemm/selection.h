#ifndef PTXGEN_GEMM_SELECTION_H_
#define PTXGEN_GEMM_SELECTION_H_

// Choosing a GEMM configuration for a problem without timing anything, and
// the candidate sets the autotuner times.

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/gemm/problem.h"
#include "ptxgen/gemm/target.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gemm {

// Whether `config` can run `problem` (beyond the config's own validity):
// the TMA-store epilogue needs rows of C on 16-byte boundaries.
absl::Status CheckConfigFitsProblem(const gen::GemmConfig& config,
                                    const GemmProblem& problem);

// Everything that decides whether `config` can run `problem` on a device
// where `resident_clusters` of its clusters fit at once: ValidateProblem,
// gen::ValidateGemmConfig, CheckConfigFitsProblem and gen::CheckGemmLaunch
// (the kernel's 32-bit counts, CUDA's grid limits). Returns the launch
// grid. Gemm::Prepare runs it, and so does whatever shows a kernel without
// running it: both refuse the same requests.
absl::StatusOr<gen::GemmGrid> PlanGemmLaunch(const GemmProblem& problem,
                                             const gen::GemmConfig& config,
                                             int resident_clusters);

// The heuristic's pick from the shape (a problem ValidateProblem accepts)
// for the target (a target runtime::ValidateKernelTarget accepts): its SM count
// shapes the waves, its shared memory bounds the ring (GemmTarget::H200() gets
// the picks measured there; a target with less gets shallower rings, and
// smaller tiles where not even two stages fit).
gen::GemmConfig HeuristicConfig(const GemmProblem& problem,
                                const GemmTarget& target);

// The ping-pong configuration for `problem` (ptxgen gemm --schedule=pingpong):
// 128x128 tiles (64x256 where the TMA store computes epilogue ops), the
// TMA store where D takes it, the deepest ring the target's shared memory
// holds (smaller tiles where not even two stages of those fit).
gen::GemmConfig PingPongConfig(const GemmProblem& problem,
                               const GemmTarget& target);

// Whether `config` is picked for `form` although ptxas spills in it: a
// grouped fp8 kernel's 128x256 tiles staged for the TMA store spill 52-112
// bytes beside the group walk's state, and still ran 1.2-1.3x faster than
// the 128x192 and direct-store kernels that do not spill (H200,
// bench/RESULTS.md). The compile sweeps allow exactly these spills.
bool PickedDespiteSpills(const gen::GemmForm& form,
                         const gen::GemmConfig& config);

// The warp-specialized configurations worth timing for `problem`, each
// with the deepest ring the target's shared memory holds, leaving out those
// the target cannot run; at least one (the heuristic's pick).
std::vector<gen::GemmConfig> CandidateConfigs(const GemmProblem& problem,
                                              const GemmTarget& target);

// The seed's autotuning space: v1 with block_m x block_n in {64x128,
// 128x128, 128x256, 256x128, 256x256} and block_k in {16, 32, 64}, all 15,
// whether they fit or not.
std::vector<gen::GemmConfig> V1SeedSpace();

// V1SeedSpace less the configurations that cannot fit (or, for fp8, cannot
// hold the promotion's accumulators).
std::vector<gen::GemmConfig> V1CandidateConfigs(ptx::ScalarType element);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_SELECTION_H_
