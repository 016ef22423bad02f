// What Prepare, PrepareAsync and GemmOptions::device decide before any
// device is touched: the problem's rules first, then the ordinal's sign,
// then the driver; PrepareAsync's future holds what Prepare returns. The
// driver is hidden from this binary, so it proves the same on a GPU
// machine.
#include <cstdlib>
#include <future>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

// Read at the driver's first load and by the default kernel cache at its
// first use: set before any test runs.
const bool kNoDriverNoDiskCache =
    setenv(runtime::kDriverLibraryEnv, "/nonexistent/libcuda.so.1", 1) == 0 &&
    setenv("PTXGEN_CACHE_DISABLE", "1", 1) == 0;

GemmOptions OnDevice(int ordinal) {
  GemmOptions options;
  options.device = ordinal;
  return options;
}

// Prepare's status and PrepareAsync's, which must be the same.
struct BothStatuses {
  absl::Status direct, background;
};
BothStatuses PrepareBothWays(const GemmProblem& problem,
                             const GemmOptions& options) {
  std::future<absl::StatusOr<Gemm>> background =
      Gemm::PrepareAsync(problem, options);
  const absl::Status direct = Gemm::Prepare(problem, options).status();
  return {direct, background.get().status()};
}

TEST(GemmDevices, PrepareAsyncRefusesAnInvalidProblemAsPrepareDoes) {
  ASSERT_TRUE(kNoDriverNoDiskCache);
  const BothStatuses refused = PrepareBothWays({8, 8, 0, ScalarType::kF16}, {});
  EXPECT_EQ(refused.direct.message(), "GEMM: k=0 is outside 1..2147483647");
  EXPECT_EQ(refused.background, refused.direct);
}

TEST(GemmDevices, PrepareAsyncReportsTheMissingDriverAsPrepareDoes) {
  const BothStatuses refused =
      PrepareBothWays({256, 256, 256, ScalarType::kF16}, {});
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.direct)) << refused.direct;
  EXPECT_TRUE(
      absl::StrContains(refused.direct.message(), "no CUDA driver found"))
      << refused.direct;
  EXPECT_EQ(refused.background, refused.direct);
}

TEST(GemmDevices, ANegativeDeviceOrdinalIsRefusedByTheOptionsName) {
  const BothStatuses refused =
      PrepareBothWays({256, 256, 256, ScalarType::kF16}, OnDevice(-1));
  EXPECT_TRUE(absl::IsInvalidArgument(refused.direct)) << refused.direct;
  EXPECT_EQ(refused.direct.message(),
            "GEMM: GemmOptions::device=-1 is not a device ordinal (0 or more)");
  EXPECT_EQ(refused.background, refused.direct);
}

TEST(GemmDevices, TheProblemsRulesComeBeforeTheDevice) {
  const BothStatuses refused =
      PrepareBothWays({0, 8, 8, ScalarType::kF16}, OnDevice(-1));
  EXPECT_EQ(refused.direct.message(), "GEMM: m=0 is outside 1..2147483647");
  EXPECT_EQ(refused.background, refused.direct);
}

// Past the sign, whether an ordinal names a device is the driver's to say.
TEST(GemmDevices, AnOrdinalBeyondTheDevicesNeedsTheDriverToTell) {
  const BothStatuses refused =
      PrepareBothWays({256, 256, 256, ScalarType::kF16}, OnDevice(7));
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.direct)) << refused.direct;
  EXPECT_TRUE(
      absl::StrContains(refused.direct.message(), "no CUDA driver found"))
      << refused.direct;
  EXPECT_EQ(refused.background, refused.direct);
}

}  // namespace
}  // namespace ptxgen::gemm
