// The exhaustive tier (README, "Testing") compiles every candidate GEMM
// kernel whenever the kernels it would compile change: a change of the
// generator, the templates, the selection, NVRTC's arguments or NVRTC.
// Its record must name the digest of the candidates the library offers now,
// so that CI never silently skips a sweep the code needs.
#include "gtest/gtest.h"
#include "tests/gen/kernel_sweep.h"
#include "tests/gen/sweep_cases.h"
#include "tests/support/text.h"

namespace ptxgen::sweep {
namespace {

TEST(SweepRecordTest, NamesTheCandidateKernelsOfferedNow) {
  KernelSweep sweep;
  AddEveryCandidate(sweep);
  ASSERT_TRUE(sweep.Generate().ok());
  EXPECT_EQ(RecordedDigest(testing_support::ReadFile(kSweepRecordFile)),
            sweep.Digest())
      << "the candidate kernels (" << sweep.kernels() << " distinct of "
      << sweep.cases() << " cases) are not those " << kSweepRecordFile
      << " records: run `" << kSweepCommand
      << "` (every candidate compiled, about 10 minutes on 2 cores) and "
         "commit the record";
}

}  // namespace
}  // namespace ptxgen::sweep
