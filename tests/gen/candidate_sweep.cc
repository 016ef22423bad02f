// The exhaustive tier (bash tools/exhaustive_sweep.sh): compiles every
// candidate GEMM configuration (each distinct kernel once) and, when every
// one compiles without spills or ptxas diagnostics, writes the record that
// //tests/gen:sweep_record_test checks into the workspace. Run by `bazel
// run`, which names the workspace in BUILD_WORKSPACE_DIRECTORY.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/gen/kernel_sweep.h"
#include "tests/gen/sweep_cases.h"

int main() {
  using ptxgen::sweep::KernelSweep;
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::fprintf(stderr, "candidate_sweep: run it with `bazel run`\n");
    return 2;
  }
  KernelSweep sweep;
  ptxgen::sweep::AddEveryCandidate(sweep);
  if (absl::Status generated = sweep.Generate(); !generated.ok()) {
    std::fprintf(stderr, "candidate_sweep: %s\n", generated.ToString().c_str());
    return 1;
  }
  std::printf("candidate_sweep: %zu cases, %zu distinct kernels\n",
              sweep.cases(), sweep.kernels());
  std::fflush(stdout);  // before the minutes of compiling
  const std::vector<std::string> problems = sweep.CompileProblems();
  for (const std::string& problem : problems) {
    std::printf("candidate_sweep: %s\n", problem.c_str());
  }
  if (!problems.empty()) {
    std::printf("candidate_sweep: %zu kernels not clean; record not written\n",
                problems.size());
    return 1;
  }
  const std::string path =
      std::string(workspace) + "/" + ptxgen::sweep::kSweepRecordFile;
  std::ofstream record(path, std::ios::trunc);
  record << ptxgen::sweep::SweepRecord(sweep);
  if (!record.flush()) {
    std::fprintf(stderr, "candidate_sweep: cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("candidate_sweep: every kernel clean; wrote %s\n", path.c_str());
  return 0;
}
