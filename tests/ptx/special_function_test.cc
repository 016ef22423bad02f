// The special-function unit's tanh: one instruction, no memory.
#include "ptxgen/ptx/special_function.h"

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

TEST(SpecialFunctionTest, TanhIsOneApproximateInstruction) {
  EXPECT_FALSE(TanhApproxF32().touches_memory());
  EXPECT_EQ(
      *RenderPtx(TanhApproxF32(), {{"result", {"%f1"}}, {"value", {"%f2"}}}),
      "tanh.approx.f32 %f1, %f2;");
}

}  // namespace
}  // namespace ptxgen::ptx
