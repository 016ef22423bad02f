// The special-function unit's tanh, 2^x and log2: one instruction each,
// no memory.
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

TEST(SpecialFunctionTest, Exp2AndLog2AreOneApproximateInstructionEach) {
  EXPECT_FALSE(Ex2ApproxFtzF32().touches_memory());
  EXPECT_FALSE(Lg2ApproxFtzF32().touches_memory());
  EXPECT_EQ(
      *RenderPtx(Ex2ApproxFtzF32(), {{"result", {"%f1"}}, {"value", {"%f2"}}}),
      "ex2.approx.ftz.f32 %f1, %f2;");
  EXPECT_EQ(
      *RenderPtx(Lg2ApproxFtzF32(), {{"result", {"%f3"}}, {"value", {"%f4"}}}),
      "lg2.approx.ftz.f32 %f3, %f4;");
}

}  // namespace
}  // namespace ptxgen::ptx
