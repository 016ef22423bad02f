#ifndef PTXGEN_GEMM_PLAN_H_
#define PTXGEN_GEMM_PLAN_H_

// A GEMM planned for a named device, with no driver loaded: the
// configuration chosen, the kernel generated and compiled, the launch grid
// as it would be on that device.
//
//   absl::StatusOr<GemmPlan> plan = PlanGemm(problem, GemmTarget::H200());
//   plan->generated.source;  plan->compiled->ptx;  plan->grid;
//
// Gemm::Prepare runs the same plan for the current device, then loads the
// kernel; `ptxgen gemm` prints views of it.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::gemm {

// The one architecture the GEMM kernels are generated for: wgmma,
// setmaxnreg and TMA multicast exist on no other.
inline constexpr char kGemmArch[] = "sm_90a";

// What every GEMM kernel compiles with: kGemmArch and "--minimal" (the
// kernels need none of the runtime's declarations, which it leaves out of
// NVRTC's built-in header), then the caller's further NVRTC flags
// (GemmOptions::nvrtc_flags).
// Planning and the autotuner's parallel compiles both take it, so that the
// cache entries the autotuner fills are the ones Prepare then looks up.
compile::CompileOptions GemmCompileOptions(
    const std::vector<std::string>& nvrtc_flags);

// NVRTC flags as a command line gives them, "-lineinfo -Xptxas=-O2"
// (split at spaces), refused as GemmCompileOptions would compose them
// (compile::ValidateCompileOptions) with "--nvrtc-flags: " and the rule.
absl::StatusOr<std::vector<std::string>> ParseNvrtcFlags(
    absl::string_view text);

// The SM counts a target may have: past any GPU made (a full GH100 has
// 144), and far inside the int arithmetic of grids and the heuristic.
inline constexpr int kMaxGemmTargetSms = 1024;

// The least shared memory a target may give a block: the 48 KiB every CUDA
// GPU gives without opting in.
inline constexpr int kMinGemmTargetSharedBytes = 48 * 1024;

// What planning needs to know of a device.
struct GemmTarget {
  std::string arch = kGemmArch;  // NVRTC's --gpu-architecture
  int sm_count = 0;
  // The most dynamic shared memory a block may opt in to
  // (runtime::DeviceProperties::max_shared_bytes_per_block_optin).
  int max_shared_bytes_per_block_optin = 0;

  // An H100 SXM or an H200: 132 SMs, 227 KiB of shared memory per block.
  static GemmTarget H200();
};

// Refuses, naming the rule: arch other than kGemmArch, sm_count outside
// 1..kMaxGemmTargetSms, less shared memory per block than
// kMinGemmTargetSharedBytes.
absl::Status ValidateGemmTarget(const GemmTarget& target);

// The target of a device (e.g. runtime::CurrentDeviceProperties()); refuses
// one that cannot run kGemmArch code, in runtime::CheckArchSupported's words.
absl::StatusOr<GemmTarget> GemmTargetOf(
    const runtime::DeviceProperties& device);

// The clusters of `config` the target holds at once (what GemmPlan's
// resident_clusters says); a target with fewer SMs than a cluster has CTAs
// is refused.
absl::StatusOr<int> TargetResidentClusters(const gen::GemmConfig& config,
                                           const GemmTarget& target);

// Everything planned for one problem on one target.
struct GemmPlan {
  GemmProblem problem;  // Resolved(): packed dimensions and output filled in
  GemmTarget target;
  gen::GemmConfig config;
  // The clusters (CTAs, without clusters) of the kernel the target holds at
  // once, which a persistent grid fills: one CTA per SM. With 2-CTA
  // clusters this is the most there can be (sm_count / 2); how many the
  // GPCs really hold only the driver knows, and Gemm::Prepare re-plans the
  // grid with its answer.
  int resident_clusters = 0;
  gen::GemmGrid grid;  // as PlanGemmLaunch (selection.h) accepted it
  gen::GeneratedGemm generated;
  // Compiled for target.arch through the kernel cache; `source` says
  // whether this lookup compiled it or found it.
  std::shared_ptr<const compile::CompiledModule> compiled;
};

// Validates the target and the problem; takes options.config, else the
// heuristic's pick for the target's SM count (HeuristicConfig, which
// assumes Hopper's 227 KiB of shared memory: a target with less may refuse
// it, and then needs options.config); generates the kernel, refuses it
// when its shared memory exceeds the target's, plans the launch
// (PlanGemmLaunch: what Prepare would refuse, this refuses) and compiles
// it through options.cache (nullptr: compile::KernelCache::Default()).
// Selection::kAutotune without options.config is refused: timing needs the
// device (Gemm::Prepare autotunes, then plans the winner).
absl::StatusOr<GemmPlan> PlanGemm(const GemmProblem& problem,
                                  const GemmTarget& target,
                                  const GemmOptions& options = {});

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_PLAN_H_
