// Maxima across a warp and into global memory: the amax of D.
#include "ptxgen/ptx/reduction.h"

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

TEST(ReductionTest, WarpMaximumTakesTheFullWarp) {
  EXPECT_FALSE(ReduxSyncMaxU32().touches_memory());
  EXPECT_EQ(
      *RenderPtx(ReduxSyncMaxU32(), {{"result", {"%r1"}}, {"value", {"%r2"}}}),
      "redux.sync.max.u32 %r1, %r2, 0xffffffff;");
}

TEST(ReductionTest, GlobalMaximumIsRelaxedAtGpuScope) {
  EXPECT_TRUE(RedGlobalMaxU32().touches_memory());
  EXPECT_EQ(*RenderInlineAsm(RedGlobalMaxU32(),
                             {{"address", {"amax"}}, {"value", {"bits"}}}),
            "asm volatile(\n"
            "    \"red.relaxed.gpu.global.max.u32 [%0], %1;\\n\"\n"
            "    :\n"
            "    : \"l\"(amax), \"r\"(bits)\n"
            "    : \"memory\");");
}

}  // namespace
}  // namespace ptxgen::ptx
