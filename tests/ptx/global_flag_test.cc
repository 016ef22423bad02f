// Global flags: the release store and acquire load that order stream-K
// partial sums between CTAs.
#include "ptxgen/ptx/global_flag.h"

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

TEST(GlobalFlagTest, BothOrderMemory) {
  EXPECT_TRUE(StoreReleaseGpu().touches_memory());
  EXPECT_TRUE(LoadAcquireGpu().touches_memory());
}

TEST(GlobalFlagTest, StoreReleasesAtGpuScope) {
  EXPECT_EQ(*RenderInlineAsm(StoreReleaseGpu(),
                             {{"address", {"flag"}}, {"value", {"1u"}}}),
            "asm volatile(\n"
            "    \"st.release.gpu.global.b32 [%0], %1;\\n\"\n"
            "    :\n"
            "    : \"l\"(flag), \"r\"(1u)\n"
            "    : \"memory\");");
}

TEST(GlobalFlagTest, LoadAcquiresAtGpuScope) {
  EXPECT_EQ(
      *RenderPtx(LoadAcquireGpu(), {{"value", {"%r1"}}, {"address", {"%rd2"}}}),
      "ld.acquire.gpu.global.b32 %r1, [%rd2];");
}

}  // namespace
}  // namespace ptxgen::ptx
