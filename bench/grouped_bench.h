#ifndef PTXGEN_BENCH_GROUPED_BENCH_H_
#define PTXGEN_BENCH_GROUPED_BENCH_H_

// gemm_bench --grouped: grouped GEMMs of mixture-of-experts layers
// (Mixtral, DeepSeek-V3, Qwen3-MoE) beside ptxgen's own dense GEMM of the
// same total rows and beside other configurations of the same problem,
// and masked decode steps beside the device-to-device copy of the expert
// weights they stream, in the same process.

#include <cstdio>
#include <vector>

#include "absl/status/status.h"
#include "ptxgen/gemm/problem.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gemm {

struct GroupedBenchFlags {
  ptx::ScalarType element = ptx::ScalarType::kBF16;
  GemmScaling scaling = GemmScaling::kNone;  // fp8: tensor or block
  int repeats = 11;
  bool csv = false;
  // Timed beside the heuristic's pick on every row that takes them.
  std::vector<gen::GemmConfig> alternatives;
};

// Runs the suite on device 0 (current context set up by the caller),
// printing one table to `out` and notes to `notes`.
absl::Status RunGroupedSuite(const GroupedBenchFlags& flags, FILE* out,
                             FILE* notes);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_BENCH_GROUPED_BENCH_H_
