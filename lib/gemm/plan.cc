// Layer: the plan, above selection.cc and problem.cc (which it calls) and
// below gemm.cc, autotune.cc and prepare.cc (which call it): a problem
// planned for a named target, its kernel generated and compiled through the
// kernel cache, or found there by its identity.
#include "ptxgen/gemm/plan.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/target.h"

namespace ptxgen::gemm {
namespace {

absl::StatusOr<gen::GemmConfig> ChosenConfig(const GemmProblem& problem,
                                             const GemmTarget& target,
                                             const GemmOptions& options) {
  if (options.config.has_value()) return *options.config;
  if (options.selection == Selection::kAutotune) {
    return absl::FailedPreconditionError(
        "GEMM: autotuning (Selection::kAutotune) times the candidates on the "
        "device, and a plan has none: give options.config or "
        "Selection::kHeuristic, or autotune through Gemm::Prepare");
  }
  return HeuristicConfig(problem, target);
}

absl::Status CheckFitsTarget(const gen::GeneratedGemm& generated,
                             const GemmTarget& target) {
  if (generated.shared_bytes <= target.max_shared_bytes_per_block_optin) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("GEMM config '", gen::ConfigName(generated.config),
                   "' needs ", generated.shared_bytes,
                   " bytes of shared memory per block; the target "
                   "gives at most ",
                   target.max_shared_bytes_per_block_optin,
                   " (max_shared_bytes_per_block_optin)"));
}

// Flags that make ptxas serialize the kernel's wgmma or ignore its
// setmaxnreg cost the kernel what it was generated for (bench/RESULTS.md,
// "Cold start", measures each): no GEMM is handed out so compiled.
absl::Status RefuseKernelsTheFlagsCripple(
    const compile::CompiledModule& module,
    const std::vector<std::string>& nvrtc_flags) {
  if (nvrtc_flags.empty()) return absl::OkStatus();
  using Kind = compile::CompilerDiagnostic::Kind;
  for (const compile::CompilerDiagnostic& diagnostic : module.diagnostics) {
    if (diagnostic.kind != Kind::kWgmmaSerialized &&
        diagnostic.kind != Kind::kSetmaxnregIgnored) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM nvrtc_flags '", absl::StrJoin(nvrtc_flags, " "), "': ptxas ",
        diagnostic.kind == Kind::kWgmmaSerialized
            ? "serialized the kernel's wgmma"
            : "ignored the kernel's setmaxnreg",
        " (", diagnostic.code,
        "), which made such kernels 1.3x to 530x slower on the H200; leave "
        "out the flag that asks for it (--Ofast-compile, -G and -Xptxas=-O0 "
        "do)"));
  }
  return absl::OkStatus();
}

}  // namespace

// One CTA per SM: the warp-specialized kernels are built to own an SM
// (their consumers take nearly all of its registers through setmaxnreg,
// their ring most of its shared memory), so without clusters the SM count
// is the answer, on a device too (Prepare takes it). A 2-CTA cluster needs
// both CTAs in one GPC, whose sizes only the driver knows: sm_count / 2 is
// the most there can be.
absl::StatusOr<int> TargetResidentClusters(const gen::GemmConfig& config,
                                           const GemmTarget& target) {
  const int clusters = target.sm_count / gen::ClusterCtas(config);
  if (clusters >= 1) return clusters;
  return absl::InvalidArgumentError(absl::StrCat(
      "GEMM config '", gen::ConfigName(config), "' launches clusters of ",
      gen::ClusterCtas(config), " CTAs, one per SM; the target has ",
      target.sm_count, " SM"));
}

std::string GemmKernelIdentity(const gen::GemmForm& form,
                               const gen::GemmConfig& config,
                               const compile::CompileOptions& options) {
  // Length-prefixed fields: flags "-DA=1 -DB=2" and "-DA=1", "-DB=2" differ.
  std::string identity;
  auto field = [&identity](absl::string_view text) {
    absl::StrAppend(&identity, text.size(), ":", text, ";");
  };
  field(gen::FormName(form));
  field(gen::ConfigName(config));
  field(options.arch);
  for (const std::string& flag : options.flags) field(flag);
  return identity;
}

absl::StatusOr<std::vector<std::string>> ParseNvrtcFlags(
    absl::string_view text) {
  std::vector<std::string> flags = absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (absl::Status valid =
          compile::ValidateCompileOptions(runtime::KernelCompileOptions(flags));
      !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--nvrtc-flags: ", valid.message()));
  }
  return flags;
}

absl::StatusOr<GemmPlan> PlanGemm(const GemmProblem& problem,
                                  const GemmTarget& target,
                                  const GemmOptions& options) {
  if (absl::Status valid = runtime::ValidateKernelTarget(target, kGemmFamily);
      !valid.ok())
    return valid;
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  GemmPlan plan;
  plan.problem = Resolved(problem);
  plan.target = target;
  absl::StatusOr<gen::GemmConfig> config =
      ChosenConfig(problem, target, options);
  if (!config.ok()) return config.status();
  plan.config = *config;
  const gen::GemmForm form = FormOf(problem);
  const compile::CompileOptions compile_options =
      runtime::KernelCompileOptions(options.nvrtc_flags);
  plan.kernel_identity = GemmKernelIdentity(form, plan.config, compile_options);
  compile::KernelCache& cache = options.cache != nullptr
                                    ? *options.cache
                                    : compile::KernelCache::Default();
  // A kernel this cache compiled under its identity comes back with the
  // text it was generated as: nothing is generated or hashed again.
  std::optional<compile::IdentifiedModule> known =
      cache.FindIdentified(plan.kernel_identity);
  std::shared_ptr<const gen::GeneratedGemm> generated;
  if (known) {
    generated =
        std::static_pointer_cast<const gen::GeneratedGemm>(known->description);
  } else {
    // Generating refuses an invalid config, before anything is planned for
    // it.
    absl::StatusOr<gen::GeneratedGemm> fresh =
        gen::GenerateGemm(plan.config, form);
    if (!fresh.ok()) return fresh.status();
    generated = std::make_shared<const gen::GeneratedGemm>(*std::move(fresh));
  }
  plan.generated = *generated;
  if (absl::Status fits = CheckFitsTarget(plan.generated, target); !fits.ok()) {
    return fits;
  }
  absl::StatusOr<int> resident = TargetResidentClusters(plan.config, target);
  if (!resident.ok()) return resident.status();
  plan.resident_clusters = *resident;
  absl::StatusOr<gen::GemmGrid> grid =
      PlanGemmLaunch(problem, plan.config, plan.resident_clusters);
  if (!grid.ok()) return grid.status();
  plan.grid = *grid;
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      known.has_value() ? known->module
                        : cache.GetOrCompile(generated->kernel_name,
                                             generated->source, compile_options,
                                             plan.kernel_identity, generated);
  if (!compiled.ok()) return compiled.status();
  if (absl::Status usable =
          RefuseKernelsTheFlagsCripple(**compiled, options.nvrtc_flags);
      !usable.ok()) {
    return usable;
  }
  plan.compiled = *std::move(compiled);
  return plan;
}

}  // namespace ptxgen::gemm
