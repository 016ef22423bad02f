// The kernel target every family plans for (runtime/target.h): a device's
// numbers, the rules a target keeps, each refusal naming the family whose
// kernels asked, and the options every kernel compiles with.

#include "ptxgen/runtime/target.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {
namespace {

DeviceProperties H200Properties() {
  DeviceProperties device;
  device.name = "NVIDIA H200";
  device.cc_major = 9;
  device.sm_count = 132;
  device.max_shared_bytes_per_block_optin = 232448;
  return device;
}

TEST(KernelTargetTest, TheH200IsAnSm90aDeviceWith132SmsAnd227KiBPerBlock) {
  const KernelTarget h200 = KernelTarget::H200();
  EXPECT_EQ(h200.arch, "sm_90a");
  EXPECT_EQ(h200.sm_count, 132);
  EXPECT_EQ(h200.max_shared_bytes_per_block_optin, 227 * 1024);
  EXPECT_TRUE(ValidateKernelTarget(h200, "GEMM").ok());
}

TEST(KernelTargetTest, ADevicesTargetIsItsSmsAndSharedMemory) {
  const absl::StatusOr<KernelTarget> h200 =
      KernelTargetOf(H200Properties(), "GEMM");
  ASSERT_TRUE(h200.ok()) << h200.status();
  EXPECT_EQ(h200->arch, KernelTarget::H200().arch);
  EXPECT_EQ(h200->sm_count, KernelTarget::H200().sm_count);
  EXPECT_EQ(h200->max_shared_bytes_per_block_optin,
            KernelTarget::H200().max_shared_bytes_per_block_optin);
}

TEST(KernelTargetTest, RefusalsNameTheFamilyWhoseKernelsAsked) {
  DeviceProperties a100 = H200Properties();
  a100.name = "NVIDIA A100";
  a100.cc_major = 8;
  a100.sm_count = 108;
  for (const std::string family : {"GEMM", "attention"}) {
    const absl::StatusOr<KernelTarget> refused = KernelTargetOf(a100, family);
    ASSERT_FALSE(refused.ok()) << family;
    EXPECT_TRUE(absl::StrContains(
        refused.status().message(),
        family + " target: device 0 (NVIDIA A100): sm_90a code runs only on "
                 "compute capability 9.0"))
        << refused.status();
  }
  KernelTarget ampere = KernelTarget::H200();
  ampere.arch = "sm_80";
  EXPECT_TRUE(absl::StrContains(
      ValidateKernelTarget(ampere, "attention").message(),
      "attention target: arch 'sm_80' is not one the attention kernels are "
      "generated for: only sm_90a has wgmma"));
}

TEST(KernelTargetTest, RefusesSmCountsAndSharedMemoryOutsideItsRanges) {
  for (const int sm_count : {0, -1, kMaxTargetSms + 1}) {
    KernelTarget target = KernelTarget::H200();
    target.sm_count = sm_count;
    EXPECT_TRUE(
        absl::StrContains(ValidateKernelTarget(target, "GEMM").message(),
                          "GEMM target: sm_count=" + std::to_string(sm_count) +
                              " is outside 1..1024"));
  }
  KernelTarget tiny = KernelTarget::H200();
  tiny.max_shared_bytes_per_block_optin = kMinTargetSharedBytes - 1;
  EXPECT_TRUE(absl::StrContains(ValidateKernelTarget(tiny, "GEMM").message(),
                                "max_shared_bytes_per_block_optin=49151 is "
                                "below the 49152 bytes"));
  tiny.max_shared_bytes_per_block_optin = kMinTargetSharedBytes;
  EXPECT_TRUE(ValidateKernelTarget(tiny, "GEMM").ok());
}

TEST(KernelTargetTest, EveryKernelCompilesForSm90aMinimalThenTheCallersFlags) {
  const compile::CompileOptions plain = KernelCompileOptions({});
  EXPECT_EQ(plain.arch, "sm_90a");
  EXPECT_EQ(plain.flags, std::vector<std::string>{"--minimal"});
  const compile::CompileOptions lined = KernelCompileOptions({"-lineinfo"});
  EXPECT_EQ(lined.flags, (std::vector<std::string>{"--minimal", "-lineinfo"}));
}

}  // namespace
}  // namespace ptxgen::runtime
