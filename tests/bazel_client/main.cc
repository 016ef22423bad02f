// A Bazel client of @ptxgen//:ptxgen (tools/bazel_client_check.sh builds
// and runs it): plans an 8192^3 f16 GEMM for an H200 without a GPU and
// prints what it generated.
#include <cstdio>

#include "absl/status/statusor.h"
#include "ptxgen/gemm/plan.h"

int main() {
  ptxgen::gemm::GemmProblem problem{8192, 8192, 8192,
                                    ptxgen::ptx::ScalarType::kF16};
  absl::StatusOr<ptxgen::gemm::GemmPlan> plan =
      ptxgen::gemm::PlanGemm(problem, ptxgen::gemm::GemmTarget::H200());
  if (!plan.ok()) {
    std::fprintf(stderr, "PlanGemm: %s\n", plan.status().ToString().c_str());
    return 1;
  }
  std::printf("kernel %s: %zu bytes of PTX\n",
              plan->generated.kernel_name.c_str(), plan->compiled->ptx.size());
  return plan->compiled->ptx.empty() ? 1 : 0;
}
