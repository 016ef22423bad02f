// `ptxgen gemm`: a GEMM kernel generated for a problem, shown in any
// compiled view, and with --run executed on the GPU beside cuBLAS.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gemm/verification.h"
#include "ptxgen/runtime/device.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

// The SM count the heuristic assumes when no GPU can be asked: an H100 or
// H200 SXM.
constexpr int kAssumedSmCount = 132;

absl::StatusOr<gemm::GemmProblem> Problem(const cli::ParsedFlags& flags) {
  absl::StatusOr<ptx::ScalarType> element = cli::ScalarTypeValue(flags, "dtype");
  if (!element.ok()) return element.status();
  gemm::GemmProblem problem{flags.Integer("m"), flags.Integer("n"),
                            flags.Integer("k"), *element};
  if (absl::Status valid = gemm::ValidateProblem(problem); !valid.ok()) {
    return valid;
  }
  return problem;
}

absl::StatusOr<gen::GemmConfig> ConfigWithBlock(const cli::ParsedFlags& flags,
                                                gen::GemmConfig config) {
  absl::StatusOr<gen::GemmConfig> tiled = gen::WithTile(config, flags.Text("block"));
  if (!tiled.ok()) {
    return cli::UsageError(absl::StrCat("--block=", flags.Text("block"), ": ",
                                        tiled.status().message(),
                                        " (write MxNxK, e.g. 128x128x64)"));
  }
  return *tiled;
}

// The device's SM count, or the assumed one (said once on stderr) without
// a GPU.
int SmCount() {
  static const int count = [] {
    absl::StatusOr<runtime::DeviceProperties> device = runtime::GetDeviceProperties(0);
    if (device.ok()) return device->sm_count;
    std::fprintf(stderr, "ptxgen: no GPU (%s); planning as for %d SMs\n",
                 std::string(device.status().message()).c_str(), kAssumedSmCount);
    return kAssumedSmCount;
  }();
  return count;
}

// The clusters of `config` a persistent grid would hold: one CTA per SM,
// as Gemm::Prepare finds them without clusters. The divisor is guarded:
// PlanGemmLaunch, which refuses a cluster_m other than 1 or 2, runs after.
int ResidentClusters(const gen::GemmConfig& config) {
  return std::max(1, SmCount() / std::max(1, config.cluster_m));
}

// Flags that another flag given with them would silently override.
absl::Status RefuseConflictingFlags(const cli::ParsedFlags& flags) {
  const struct {
    const char* flag;
    const char* other;
    const char* why;
  } conflicts[] = {
      {"config", "schedule", "--config names the whole configuration"},
      {"config", "block", "--config names the whole configuration"},
      {"config", "autotune", "--config names the whole configuration"},
      {"autotune", "block", "--autotune chooses the tile"},
      {"run", "emit", "--run prints the check and the times, not a view"},
  };
  for (const auto& conflict : conflicts) {
    if (flags.Has(conflict.flag) && flags.Has(conflict.other)) {
      return cli::UsageError(absl::StrCat(conflict.why, ": drop --",
                                          conflict.other, " or --", conflict.flag));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<gen::GemmConfig> ChooseConfig(const cli::ParsedFlags& flags,
                                             const gemm::GemmProblem& problem) {
  if (flags.Has("config")) return gen::ParseConfigName(flags.Text("config"));
  const bool v1 = flags.Text("schedule") == "v1";
  if (flags.Has("autotune")) {
    return gemm::AutotunedConfig(
        problem,
        v1 ? gemm::V1CandidateConfigs(problem.element)
           : gemm::CandidateConfigs(problem),
        compile::KernelCache::Default());
  }
  gen::GemmConfig config = v1 ? gen::GemmConfig{}
                              : gemm::HeuristicConfig(problem, SmCount());
  return flags.Has("block") ? ConfigWithBlock(flags, config) : config;
}

// Random inputs, one run checked against cuBLAS, then timings of both.
absl::StatusOr<std::string> RunOnGpu(const gemm::GemmProblem& problem,
                                     const gen::GemmConfig& config) {
  gemm::GemmOptions options;
  options.config = config;
  absl::StatusOr<gemm::Gemm> gemm = gemm::Gemm::Prepare(problem, options);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<gemm::CublasComparison> compared = gemm::CompareWithCublas(*gemm);
  if (!compared.ok()) return compared.status();
  const double ours = compared->milliseconds, theirs = compared->cublas_milliseconds;
  const std::string report = absl::StrFormat(
      "config: %s\nkernel: %s\nrelative error vs cuBLAS: %.2e (bound %.0e)\n"
      "ptxgen: %.4f ms, %.0f TFLOP/s\ncuBLAS: %.4f ms, %.0f TFLOP/s\n"
      "ratio (cuBLAS time / ptxgen time): %.3f\n",
      gen::ConfigName(config), gemm->generated().kernel_name,
      compared->relative_error, compared->error_bound, ours,
      gemm::Tflops(problem, ours), theirs, gemm::Tflops(problem, theirs),
      theirs / ours);
  if (!compared->passed()) {
    return absl::InternalError(absl::StrCat("result check failed\n", report));
  }
  return report;
}

absl::StatusOr<std::string> RunGemm(const cli::ParsedFlags& flags) {
  if (absl::Status alone = RefuseConflictingFlags(flags); !alone.ok()) return alone;
  absl::StatusOr<gemm::GemmProblem> problem = Problem(flags);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<gen::GemmConfig> config = ChooseConfig(flags, *problem);
  if (!config.ok()) return config.status();
  if (flags.Has("run")) return RunOnGpu(*problem, *config);
  // What running would refuse, a view refuses too.
  if (absl::StatusOr<gen::GemmGrid> grid =
          gemm::PlanGemmLaunch(*problem, *config, ResidentClusters(*config));
      !grid.ok()) {
    return grid.status();
  }
  absl::StatusOr<gen::GeneratedGemm> generated =
      gen::GenerateGemm(*config, problem->element);
  if (!generated.ok()) return generated.status();
  std::fprintf(stderr, "ptxgen: %s\n", gen::ConfigName(*config).c_str());
  return cli::EmitCompiled(generated->kernel_name, generated->source, {},
                           flags.Text("emit"));
}

}  // namespace

cli::Subcommand GemmSubcommand() {
  cli::Subcommand command;
  command.name = "gemm";
  command.summary =
      "C = A * B^T for an m x n x k problem: the generated kernel in any "
      "compiled view, or run on the GPU beside cuBLAS";
  command.description =
      "Picks a configuration for the problem (the heuristic, --autotune, or\n"
      "the one named by --config / --schedule and --block), generates the\n"
      "kernel and prints the requested view of it; the chosen configuration\n"
      "goes to stderr. A, B and C are row-major: A [m,k], B [n,k], C [m,n].\n"
      "With --run (needs a GPU) it runs the kernel on random inputs, checks\n"
      "the result against cuBLAS and prints both times.";
  command.flags = {
      cli::Required(cli::IntegerFlag("m", "N", "Rows of A and C.", "")),
      cli::Required(cli::IntegerFlag("n", "N", "Rows of B, columns of C.", "")),
      cli::Required(cli::IntegerFlag("k", "N", "The shared dimension (a multiple of 8).", "")),
      cli::ScalarTypeFlag("dtype", "Input and output type.", "f16",
                          gen::IsGemmElement),
      cli::ChoiceFlag("schedule", "NAME",
                      {{"auto", "the heuristic's warp-specialized choice"},
                       {"v1", "the seed: one warpgroup, one stage"}},
                      "Which schedule family.", "auto"),
      cli::TextFlag("block", "MxNxK", "The tile, e.g. 128x128x64."),
      cli::TextFlag("config", "NAME",
                    "A full configuration name, e.g. \"ws 128x256x64 s3 c2 w1 m1 "
                    "tma g16 persistent\"; not with --schedule, --block or "
                    "--autotune."),
      cli::SwitchFlag("autotune",
                      "Time the schedule's candidates on the GPU and use the "
                      "fastest (remembered in the cache folder); not with --block."),
      cli::SwitchFlag("run", "Run on the GPU, check against cuBLAS, time both; not "
                             "with --emit."),
      cli::EmitFlag(cli::CompiledViews(), "cuda"),
  };
  command.examples = {
      "ptxgen gemm --m=8192 --n=8192 --k=8192 --emit=resources",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --schedule=v1 --block=128x128x64",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --emit=ptx",
      "ptxgen gemm --m=1000 --n=999 --k=136 --emit=json",
  };
  command.run = RunGemm;
  return command;
}

}  // namespace ptxgen::tools
