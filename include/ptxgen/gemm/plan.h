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
#include "ptxgen/gemm/options.h"
#include "ptxgen/gemm/problem.h"
#include "ptxgen/gemm/target.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::gemm {

// A GEMM kernel's identity within this process: what its source and its
// compile are made from (the form's name, the configuration's name, the
// compile's arch and flags), known before any text is generated. It keys
// the kernel cache's lookup by identity (compile::KernelCache::
// FindIdentified), so that a kernel planned before is found without its
// source being generated or hashed, and the loaded-kernel registry
// (LoadGemmKernel).
std::string GemmKernelIdentity(const gen::GemmForm& form,
                               const gen::GemmConfig& config,
                               const compile::CompileOptions& options);

// NVRTC flags as a command line gives them, "-lineinfo -Xptxas=-O2"
// (split at spaces), refused as runtime::KernelCompileOptions would compose
// them (compile::ValidateCompileOptions) with "--nvrtc-flags: " and the rule.
absl::StatusOr<std::vector<std::string>> ParseNvrtcFlags(
    absl::string_view text);

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
  // GemmKernelIdentity of the kernel: the name it was looked up by.
  std::string kernel_identity;
};

// Validates the target and the problem; takes options.config, else the
// heuristic's pick for the target (HeuristicConfig, which fits the target's
// SM count and shared memory); generates the kernel, refuses it when its
// shared memory exceeds the target's (a given config may), plans the launch
// (PlanGemmLaunch: what Prepare would refuse, this refuses) and compiles
// it through options.cache (nullptr: compile::KernelCache::Default()). A
// kernel that cache holds under its identity (GemmKernelIdentity) is
// neither generated nor hashed again: its generated text comes back with
// the module.
// Selection::kAutotune without options.config is refused: timing needs the
// device (Gemm::Prepare autotunes, then plans the winner).
absl::StatusOr<GemmPlan> PlanGemm(const GemmProblem& problem,
                                  const GemmTarget& target,
                                  const GemmOptions& options = {});

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_PLAN_H_
