// Inspect a GEMM kernel without a GPU: plan D = gelu(A·B + bias) with B
// stored [k, n] and an f32 output for an H200, then print what ptxgen chose
// and generated — the configuration, the numbers it planned, the kernel's
// parameters, its resources — and write the CUDA source and PTX to files.
//
//   bazel run //samples/inspect_gemm -- [--out=DIR]
//
// Nothing here loads the CUDA driver: gemm::PlanGemm generates and compiles
// for a named target (gemm/plan.h).
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gen/gemm.h"

namespace {

using ptxgen::gemm::GemmPlan;
using ptxgen::gemm::GemmProblem;
using ptxgen::gemm::GemmTarget;

// The problem a transformer's feed-forward layer asks for.
GemmProblem FusedProblem() {
  GemmProblem problem{4096, 4096, 4096, ptxgen::ptx::ScalarType::kBF16};
  problem.b_major = ptxgen::ptx::MajorOrder::kMN;  // B stored [k, n]
  problem.output = ptxgen::ptx::ScalarType::kF32;
  problem.bias = ptxgen::gemm::BiasAlong::kN;
  problem.activation = ptxgen::gemm::Activation::kGelu;
  return problem;
}

void PrintPlan(const GemmPlan& plan) {
  const ptxgen::gen::GeneratedGemm& generated = plan.generated;
  std::printf("form          %s\n",
              ptxgen::gen::FormName(generated.form).c_str());
  std::printf("config        %s\n",
              ptxgen::gen::ConfigName(plan.config).c_str());
  std::printf("kernel        %s\n", generated.kernel_name.c_str());
  std::printf(
      "grid          %lld x %lld x %lld, cluster %d; %d threads, %d bytes of "
      "dynamic shared memory\n",
      static_cast<long long>(plan.grid.x), static_cast<long long>(plan.grid.y),
      static_cast<long long>(plan.grid.z), plan.grid.cluster_x,
      generated.threads_per_block, generated.shared_bytes);
  std::printf("\nplanned numbers (the kernel's namespace plan):\n");
  for (const ptxgen::gen::PlannedConstant& constant : generated.plan) {
    std::printf("  %-8s %-28s %s\n", constant.type.c_str(),
                constant.name.c_str(), constant.value.c_str());
  }
  std::printf("\nparameters:\n");
  for (const ptxgen::gen::GemmKernelParameterSpec& spec :
       ptxgen::gen::GemmKernelParameters()) {
    std::printf("  %-44s %s\n", spec.declaration, spec.meaning);
  }
  std::printf("\nresources (ptxas):\n");
  for (const ptxgen::compile::KernelResources& r : plan.compiled->resources) {
    std::printf(
        "  %d registers, %d bytes spilled (stores), %d (loads), %d bytes of "
        "stack\n",
        r.registers, r.spill_store_bytes, r.spill_load_bytes,
        r.stack_frame_bytes);
  }
  std::printf("  %zu bytes of CUDA source, %zu of PTX, %zu of CUBIN\n",
              generated.source.size(), plan.compiled->ptx.size(),
              plan.compiled->cubin.size());
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  if (!file.flush()) return absl::InternalError("cannot write " + path);
  std::printf("wrote %s\n", path.c_str());
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = ".";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--out=")) {
      out = arg.substr(6);
    } else {
      std::fprintf(stderr,
                   "inspect_gemm: unknown flag '%s' (takes --out=DIR)\n",
                   arg.c_str());
      return 2;
    }
  }
  absl::StatusOr<GemmPlan> plan =
      ptxgen::gemm::PlanGemm(FusedProblem(), GemmTarget::H200());
  if (!plan.ok()) {
    std::fprintf(stderr, "inspect_gemm: %s\n",
                 std::string(plan.status().message()).c_str());
    return 1;
  }
  PrintPlan(*plan);
  const std::string base = out + "/" + plan->generated.kernel_name;
  for (const auto& [path, text] : {std::pair<std::string, const std::string&>{
                                       base + ".cu", plan->generated.source},
                                   {base + ".ptx", plan->compiled->ptx}}) {
    if (absl::Status written = WriteFile(path, text); !written.ok()) {
      std::fprintf(stderr, "inspect_gemm: %s\n",
                   std::string(written.message()).c_str());
      return 1;
    }
  }
  return 0;
}
