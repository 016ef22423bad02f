// The CI tier's compile sweep: every configuration the heuristic picks, for
// every input type, layout and epilogue, and every golden kernel, compiles
// for sm_90a without spills or ptxas diagnostics.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gen/golden_cases.h"
#include "tests/gen/kernel_sweep.h"
#include "tests/gen/sweep_cases.h"
#include "tests/support/text.h"

namespace ptxgen::sweep {
namespace {

TEST(GemmCompileTest, HeuristicPicksAndGoldenKernelsCompileCleanly) {
  KernelSweep sweep;
  AddHeuristicPicks(sweep);
  const size_t picks = sweep.cases();
  absl::StatusOr<std::vector<golden::GoldenCase>> goldens =
      golden::ParseGoldenConfigs(
          testing_support::ReadFile(golden::kConfigsFile));
  ASSERT_TRUE(goldens.ok()) << goldens.status();
  for (const golden::GoldenCase& golden : *goldens) {
    sweep.Add(golden.config, golden.form);
  }
  EXPECT_GE(picks, 100u);
  EXPECT_GE(goldens->size(), 20u);
  ASSERT_TRUE(sweep.Generate().ok());
  for (const std::string& problem : sweep.CompileProblems()) {
    ADD_FAILURE() << problem;
  }
  std::printf("compiled %zu distinct GEMM kernels for %zu cases\n",
              sweep.kernels(), sweep.cases());
}

}  // namespace
}  // namespace ptxgen::sweep
