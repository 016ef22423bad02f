#ifndef PTXGEN_GEMM_AUTOTUNE_H_
#define PTXGEN_GEMM_AUTOTUNE_H_

// Timing candidate configurations on the device and remembering the
// fastest, in memory and in the cache folder, keyed by problem, device and
// ptxgen version.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gemm {

// One candidate's timing, or why it could not run.
struct TuningMeasurement {
  gen::GemmConfig config;
  absl::Status status;      // why the candidate could not run, if it could not
  double milliseconds = 0;  // median per call
};

// The autotuner's choice and the measurements it was made from.
struct TuningReport {
  gen::GemmConfig best;
  std::vector<TuningMeasurement> measurements;  // empty when from a record
  bool from_record = false;
  std::string record_path;  // empty when records are kept in memory only
};

// Whether to reuse a recorded choice, and how long to time.
struct AutotuneOptions {
  bool use_records = true;  // reuse a remembered choice; false: time again
  int repeats = 7;  // rounds over all candidates, one timed batch each (median)
};

// Compiles the candidates concurrently, times each on the current device
// and records the fastest. Calls rotate through copies of random operands
// that outgrow L2 (RandomRotatingGemmOperands), so that the times are those
// of inputs read from DRAM. Candidates that fail to build or run are
// reported and skipped; none running is an error.
absl::StatusOr<TuningReport> Autotune(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache, const AutotuneOptions& options = {});

// The report as a table: a line per candidate, fastest first (those that
// did not run last, with why), the choice marked; or the record it came
// from. Autotune logs it at info level, or with PTXGEN_PRINT_AUTOTUNING=1
// whatever the log level (base::LogRequested); it logs its progress,
// candidates compiled and rounds timed, N of M, at info level.
std::string TuningTable(const GemmProblem& problem, const TuningReport& report);

// Autotune(...).best.
absl::StatusOr<gen::GemmConfig> AutotunedConfig(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_AUTOTUNE_H_
