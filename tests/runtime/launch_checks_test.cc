// The launch checks a kernel family shares (ptxgen/runtime/launch_checks.h)
// as far as they go without a driver: operands' addresses refused in the
// owner's words before the driver is asked, unused operands never checked,
// a device ordinal refused by its option's name.

#include "ptxgen/runtime/launch_checks.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {
namespace {

// The driver's path is read once, at first load: set it before any test
// runs, so this binary sees no driver even on a GPU machine and every
// check that passes the addresses stops at the driver.
const bool kDriverHidden =
    setenv(kDriverLibraryEnv, "/nonexistent/libcuda.so.1", 1) == 0;

constexpr LaunchOwner kGemm = {"GEMM", "Gemm", "a Gemm", "GemmOptions"};
constexpr LaunchOwner kAttention = {"ATTENTION", "Attention", "an Attention",
                                    "AttentionOptions"};

constexpr CUdeviceptr kAligned = 0x7f0000000000;

absl::Status Check(const LaunchOwner& owner,
                   absl::Span<const LaunchOperand> operands) {
  return CheckLaunchHere(owner, operands, /*stream=*/nullptr,
                         /*owner_context=*/nullptr, /*owner_device=*/0);
}

void ExpectNoDriver(const absl::Status& status) {
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "no CUDA driver found"))
      << status;
}

TEST(LaunchChecks, ANullUsedOperandIsRefusedInTheOwnersWords) {
  ASSERT_TRUE(kDriverHidden);
  const LaunchOperand gemm[] = {{"A", kAligned, true}, {"D", 0, true}};
  const absl::Status refused = Check(kGemm, gemm);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_EQ(refused.message(), "GEMM: D is a null pointer");

  const LaunchOperand attention[] = {{"Q", 0, true}};
  EXPECT_EQ(Check(kAttention, attention).message(),
            "ATTENTION: Q is a null pointer");
}

TEST(LaunchChecks, AMisalignedUsedOperandIsRefusedWithItsAlignment) {
  ASSERT_TRUE(kDriverHidden);
  const LaunchOperand matrix[] = {{"A", kAligned + 8, true}};
  const absl::Status refused = Check(kGemm, matrix);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_EQ(refused.message(),
            "GEMM: A must be 16-byte aligned (address 0x7f0000000008)");

  const LaunchOperand scale[] = {{"scale_a", kAligned + 2, true, 4}};
  EXPECT_EQ(Check(kGemm, scale).message(),
            "GEMM: scale_a must be 4-byte aligned (address 0x7f0000000002)");
  const LaunchOperand float_aligned[] = {{"scale_a", kAligned + 4, true, 4}};
  ExpectNoDriver(Check(kGemm, float_aligned));
}

TEST(LaunchChecks, OperandsAreCheckedInTheirOrder) {
  ASSERT_TRUE(kDriverHidden);
  const LaunchOperand operands[] = {{"K", kAligned + 8, true}, {"Q", 0, true}};
  EXPECT_EQ(Check(kAttention, operands).message(),
            "ATTENTION: K must be 16-byte aligned (address 0x7f0000000008)");
}

TEST(LaunchChecks, UnusedOperandsAreNotChecked) {
  ASSERT_TRUE(kDriverHidden);
  const LaunchOperand operands[] = {{"the bias", 0, false},
                                    {"C", kAligned + 1, false},
                                    {"A", kAligned, true},
                                    {"amax_d", 0, false, 4}};
  // Past the addresses, the next step needs the driver.
  ExpectNoDriver(Check(kGemm, operands));
  ExpectNoDriver(Check(kGemm, absl::Span<const LaunchOperand>()));
}

TEST(LaunchChecks, ANegativeOrdinalIsRefusedByTheOptionsName) {
  ASSERT_TRUE(kDriverHidden);
  const absl::Status gemm = PrimaryContextOfDevice(kGemm, -1).status();
  EXPECT_TRUE(absl::IsInvalidArgument(gemm)) << gemm;
  EXPECT_EQ(gemm.message(),
            "GEMM: GemmOptions::device=-1 is not a device ordinal (0 or more)");
  EXPECT_EQ(PrimaryContextOfDevice(kAttention, -3).status().message(),
            "ATTENTION: AttentionOptions::device=-3 is not a device ordinal "
            "(0 or more)");
}

TEST(LaunchChecks, ContextsNeedTheDriver) {
  ASSERT_TRUE(kDriverHidden);
  ExpectNoDriver(PrimaryContextOfDevice(kGemm, 0).status());
  ExpectNoDriver(CurrentOrPrimaryContext().status());
}

}  // namespace
}  // namespace ptxgen::runtime
