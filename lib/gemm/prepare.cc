// Layer: the user-facing entry of the GEMM, the top of lib/gemm. Prepare
// and PrepareAsync take the context (options.device, the caller's, or
// device 0's primary context) and the configuration (given, the
// heuristic's, or the autotuner's, autotune.cc), then prepare it through
// gemm.cc (lib/gemm/gemm_preparation.h). Nothing below calls back here.
#include <future>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lib/gemm/gemm_preparation.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/launch_checks.h"
#include "ptxgen/runtime/target.h"

namespace ptxgen::gemm {
namespace {

// Prepare as the thread that asked for it would have: in its context,
// pushed here. Without one to take over (none current, or no driver),
// Prepare decides as for a direct call: options.device's primary context,
// else device 0's, or the driver's failure after the problem's rules.
absl::StatusOr<Gemm> PrepareInCallersContext(
    const absl::StatusOr<CUcontext>& caller, const GemmProblem& problem,
    const GemmOptions& options) {
  if (!caller.ok() || *caller == nullptr)
    return Gemm::Prepare(problem, options);
  absl::StatusOr<runtime::ScopedCurrentContext> scope =
      runtime::ScopedCurrentContext::Push(*caller);
  if (!scope.ok()) return scope.status();
  return Gemm::Prepare(problem, options);
}

// Flags CompileCuda would refuse, and what the options may not ask for
// together, refused before anything is selected or compiled.
absl::Status ValidateOptions(const GemmOptions& options) {
  if (absl::Status valid = compile::ValidateCompileOptions(
          runtime::KernelCompileOptions(options.nvrtc_flags));
      !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM nvrtc_flags: ", valid.message()));
  }
  if (options.workspace != WorkspaceOwner::kGemm &&
      options.workspace != WorkspaceOwner::kCaller) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: GemmOptions::workspace=", static_cast<int>(options.workspace),
        " is not a WorkspaceOwner (kGemm=0, kCaller=1)"));
  }
  if (options.selection == Selection::kAutotune &&
      !options.config.has_value() && !options.nvrtc_flags.empty()) {
    return absl::InvalidArgumentError(
        "GEMM: nvrtc_flags with Selection::kAutotune: the autotuner times "
        "kernels compiled without flags, so its pick would not be timed as "
        "compiled; autotune first, then prepare its config with the flags");
  }
  return absl::OkStatus();
}

// Prepare's work once `context` is current: Selection::kAutotune without a
// config times the candidates for the current device first.
absl::StatusOr<Gemm> PrepareInCurrentContext(const GemmProblem& problem,
                                             const GemmOptions& options,
                                             CUcontext context) {
  if (options.config.has_value() || options.selection != Selection::kAutotune) {
    return GemmPreparation::PrepareChosen(problem, options, context);
  }
  absl::StatusOr<CurrentGemmDevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<gen::GemmConfig> tuned = AutotunedConfig(
      problem, CandidateConfigs(problem, device->target), CacheOf(options));
  if (!tuned.ok()) return tuned.status();
  GemmOptions planned = options;
  planned.config = *tuned;
  return GemmPreparation::PrepareChosen(problem, planned, context);
}

}  // namespace

absl::StatusOr<Gemm> Gemm::Prepare(const GemmProblem& problem,
                                   const GemmOptions& options) {
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) return valid;
  if (!options.device.has_value()) {
    absl::StatusOr<CUcontext> context = runtime::CurrentOrPrimaryContext();
    if (!context.ok()) return context.status();
    return PrepareInCurrentContext(problem, options, *context);
  }
  absl::StatusOr<const runtime::PrimaryContext*> primary =
      runtime::PrimaryContextOfDevice(kGemmLaunchOwner, *options.device);
  if (!primary.ok()) return primary.status();
  // Current for this call only: the caller's context stays the caller's.
  absl::StatusOr<runtime::ScopedCurrentContext> scope =
      runtime::ScopedCurrentContext::Push((*primary)->get());
  if (!scope.ok()) return scope.status();
  return PrepareInCurrentContext(problem, options, (*primary)->get());
}

std::future<absl::StatusOr<Gemm>> Gemm::PrepareAsync(
    const GemmProblem& problem, const GemmOptions& options) {
  const absl::StatusOr<CUcontext> caller = runtime::CurrentContext();
  try {
    return std::async(std::launch::async, [problem, options, caller] {
      return PrepareInCallersContext(caller, problem, options);
    });
  } catch (const std::system_error& error) {
    std::promise<absl::StatusOr<Gemm>> refused;
    refused.set_value(absl::ResourceExhaustedError(absl::StrCat(
        "Gemm::PrepareAsync: cannot start a thread (", error.what(), ")")));
    return refused.get_future();
  }
}

}  // namespace ptxgen::gemm
