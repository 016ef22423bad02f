#ifndef PTXGEN_TESTS_GEN_SWEEP_CASES_H_
#define PTXGEN_TESTS_GEN_SWEEP_CASES_H_

// Which GEMM kernels the two compile sweeps compile (README, "Testing"):
// the CI tier's (//tests/gen:gemm_compile_test) and the exhaustive tier's
// (//tests/gen:candidate_sweep, recorded in kSweepRecordFile).

#include <string>

#include "absl/strings/string_view.h"
#include "tests/gen/kernel_sweep.h"

namespace ptxgen::sweep {

// The exhaustive tier's record: the digest of what it compiled and how
// that went, checked by //tests/gen:sweep_record_test; relative to the
// workspace root (and to a test's runfiles root).
inline constexpr char kSweepRecordFile[] = "tests/gen/candidate_sweep.record";
inline constexpr char kSweepCommand[] = "bash tools/exhaustive_sweep.sh";

// What the heuristic picks, for every input type, both majors and every
// epilogue, on shapes that take each kind of tile (and Hilbert-ordered
// variants of the plain f16/bf16 picks).
void AddHeuristicPicks(KernelSweep& sweep);

// Every configuration a caller can get from the library: the heuristic's
// picks, the autotuner's candidates for every input type and for the
// heaviest epilogues, and each type's v1 space.
void AddEveryCandidate(KernelSweep& sweep);

// The record of a sweep whose every kernel compiled cleanly: a comment
// naming the command, then "digest <hex>", the counts and NVRTC's version,
// a line each.
std::string SweepRecord(const KernelSweep& sweep);

// The digest a record holds; "" when it holds none.
std::string RecordedDigest(absl::string_view record);

}  // namespace ptxgen::sweep

#endif  // PTXGEN_TESTS_GEN_SWEEP_CASES_H_
