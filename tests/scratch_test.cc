#include <iostream>
#include "gtest/gtest.h"
#include "ptxgen/ptx/wgmma.h"
using namespace ptxgen::ptx;
TEST(S, P) {
  WgmmaMma m; m.n = 32; m.transpose_b = true;
  auto st = WgmmaMmaAsync(m); ASSERT_TRUE(st.ok()) << st.status();
  auto a = RenderInlineAsm(*st, {{"d", {"acc"}}, {"a", {"desc_a"}}, {"b", {"desc_b"}}, {"scale_d", {"scale_d"}}});
  ASSERT_TRUE(a.ok()) << a.status(); std::cout << *a << "\n";
  auto p = RenderPtx(*st, {{"d", {"%f"}}, {"a", {"%rd1"}}, {"b", {"%rd2"}}, {"scale_d", {"%p1"}}});
  ASSERT_TRUE(p.ok()) << p.status(); std::cout << *p << "\n";
  std::cout << *RenderInlineAsm(WgmmaFence(), {}) << "\n" << *RenderInlineAsm(*WgmmaWaitGroup(1), {}) << "\n";
  std::cout << *RenderInlineAsm(*WgmmaAccumulatorPin(ScalarType::kF32, 16), {{"d", {"acc"}}}) << "\n";
  m.a_type = m.b_type = ScalarType::kS8; m.d_type = ScalarType::kS32; m.n = 40; std::cout << ValidateWgmma(m) << "\n";
}
