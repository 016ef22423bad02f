// wgmma: the legal-shape table, the validation rules and the text of each form.
#include "ptxgen/ptx/wgmma.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

WgmmaMma Mma(int n, ScalarType a, ScalarType b, ScalarType d) {
  WgmmaMma mma;
  mma.n = n;
  mma.a_type = a;
  mma.b_type = b;
  mma.d_type = d;
  return mma;
}

constexpr ScalarType kF16 = ScalarType::kF16;
constexpr ScalarType kBF16 = ScalarType::kBF16;
constexpr ScalarType kTF32 = ScalarType::kTF32;
constexpr ScalarType kE4M3 = ScalarType::kE4M3;
constexpr ScalarType kE5M2 = ScalarType::kE5M2;
constexpr ScalarType kS8 = ScalarType::kS8;
constexpr ScalarType kU8 = ScalarType::kU8;
constexpr ScalarType kF32 = ScalarType::kF32;
constexpr ScalarType kS32 = ScalarType::kS32;

TEST(WgmmaShapeTest, InstructionKFollowsTheInputType) {
  EXPECT_EQ(*WgmmaK(kF16), 16);
  EXPECT_EQ(*WgmmaK(kBF16), 16);
  EXPECT_EQ(*WgmmaK(kTF32), 8);
  EXPECT_EQ(*WgmmaK(kE4M3), 32);
  EXPECT_EQ(*WgmmaK(kU8), 32);
  EXPECT_FALSE(WgmmaK(kF32).ok());
}

TEST(WgmmaShapeTest, FloatInputsTakeEveryMultipleOfEightUpTo256) {
  for (ScalarType type : {kF16, kBF16, kTF32, kE4M3, kE5M2}) {
    const std::vector<int> legal = LegalWgmmaN(type);
    ASSERT_EQ(legal.size(), 32u);
    EXPECT_EQ(legal.front(), 8);
    EXPECT_EQ(legal.back(), 256);
  }
}

TEST(WgmmaShapeTest, IntegerInputsSkipOddMultiplesOfEightAbove32) {
  EXPECT_EQ(LegalWgmmaN(kS8),
            (std::vector<int>{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160,
                              176, 192, 208, 224, 240, 256}));
  EXPECT_TRUE(IsLegalWgmmaN(kU8, 24));
  EXPECT_FALSE(IsLegalWgmmaN(kU8, 40));
  EXPECT_FALSE(IsLegalWgmmaN(kF16, 260));
}

TEST(WgmmaShapeTest, AccumulatorRegistersPerThread) {
  EXPECT_EQ(WgmmaAccumulatorRegisters(kF32, 256), 128);
  EXPECT_EQ(WgmmaAccumulatorRegisters(kS32, 8), 4);
  EXPECT_EQ(WgmmaAccumulatorRegisters(kF16, 128), 32);
}

struct IllegalCase {
  WgmmaMma mma;
  std::string message;
};

TEST(WgmmaValidationTest, IllegalRequestsNameTheRule) {
  auto with = [](WgmmaMma mma, auto&& change) {
    change(mma);
    return mma;
  };
  const std::vector<IllegalCase> cases = {
      {Mma(120, kS8, kS8, kS32),
       "wgmma: N=120 is not legal for s8 inputs (legal N: 8, 16, 24, 32, then "
       "48..256 step 16)"},
      {Mma(12, kF16, kF16, kF32),
       "wgmma: N=12 is not legal for f16 inputs (legal N: 8..256 step 8)"},
      {Mma(64, kBF16, kBF16, kF16),
       "wgmma: bf16 inputs need an f32 accumulator, not f16"},
      {Mma(64, kTF32, kTF32, kF16),
       "wgmma: tf32 inputs need an f32 accumulator, not f16"},
      {Mma(64, kS8, kU8, kF32),
       "wgmma: s8 inputs need an s32 accumulator, not f32"},
      {Mma(64, kF16, kF16, kS32),
       "wgmma: f16 inputs need an f16 or f32 accumulator, not s32"},
      {Mma(64, kF16, kBF16, kF32),
       "wgmma: A and B must be the same type, except e4m3/e5m2 and s8/u8 which "
       "may mix within their family (got f16 x bf16)"},
      {Mma(64, kE4M3, kS8, kF32),
       "wgmma: A and B must be the same type, except e4m3/e5m2 and s8/u8 which "
       "may mix within their family (got e4m3 x s8)"},
      {Mma(64, kF32, kF32, kF32),
       "wgmma: inputs must be one of f16, bf16, tf32, e4m3, e5m2, s8, u8 (got "
       "f32 x f32)"},
      {with(Mma(64, kF16, kF16, kF32),
            [](WgmmaMma& m) { m.a_source = static_cast<WgmmaASource>(5); }),
       "wgmma: A source 5 is neither shared memory nor registers"},
      {with(Mma(64, kE4M3, kE4M3, kF32),
            [](WgmmaMma& m) { m.transpose_b = true; }),
       "wgmma: transpose exists for f16/bf16 inputs only, not e4m3"},
      {with(Mma(64, kTF32, kTF32, kF32),
            [](WgmmaMma& m) { m.transpose_a = true; }),
       "wgmma: transpose exists for f16/bf16 inputs only, not tf32"},
      {with(Mma(64, kS8, kS8, kS32), [](WgmmaMma& m) { m.scale_a = -1; }),
       "wgmma: scale-a/scale-b exist for floating-point inputs only, not s8"},
      {with(Mma(64, kF16, kF16, kF32), [](WgmmaMma& m) { m.scale_b = 2; }),
       "wgmma: scale-a/scale-b must be 1 or -1, not 2"},
      {with(Mma(64, kF16, kF16, kF32),
            [](WgmmaMma& m) {
              m.a_source = WgmmaASource::kRegisters;
              m.transpose_a = true;
            }),
       "wgmma: the register-A (RS) form has no transpose-A: A in registers is "
       "always K-major"},
      {with(Mma(64, kF16, kF16, kF32), [](WgmmaMma& m) { m.satfinite = true; }),
       "wgmma: .satfinite exists for s8/u8 inputs (s32 accumulator) only, not "
       "f16"},
  };
  for (const IllegalCase& c : cases) {
    EXPECT_EQ(ValidateWgmma(c.mma).message(), c.message);
    EXPECT_FALSE(WgmmaMmaAsync(c.mma).ok()) << c.message;
  }
}

TEST(WgmmaValidationTest, LegalCombinations) {
  for (const WgmmaMma& mma :
       {Mma(256, kF16, kF16, kF16), Mma(8, kBF16, kBF16, kF32),
        Mma(136, kTF32, kTF32, kF32), Mma(64, kE4M3, kE5M2, kF16),
        Mma(24, kU8, kS8, kS32), Mma(256, kS8, kS8, kS32)}) {
    EXPECT_TRUE(ValidateWgmma(mma).ok()) << ValidateWgmma(mma);
  }
}

TEST(WgmmaTextTest, F16SharedSharedInlineAsm) {
  WgmmaMma mma = Mma(16, kF16, kF16, kF32);
  mma.transpose_b = true;
  mma.scale_a = -1;
  absl::StatusOr<Statement> statement = WgmmaMmaAsync(mma);
  ASSERT_TRUE(statement.ok());
  EXPECT_EQ(
      *RenderInlineAsm(*statement, {{"d", {"acc"}},
                                    {"a", {"desc_a"}},
                                    {"b", {"desc_b"}},
                                    {"scale_d", {"accumulate"}}}),
      "asm volatile(\n"
      "    \"{\\n\"\n"
      "    \".reg .pred p_scale_d;\\n\"\n"
      "    \"setp.ne.b32 p_scale_d, %10, 0;\\n\"\n"
      "    \"wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, "
      "%2, %3, %4, \"\n"
      "    \"%5, %6, %7}, %8, %9, p_scale_d, %11, %12, %13, %14;\\n\"\n"
      "    \"}\\n\"\n"
      "    : \"+f\"(acc[0]), \"+f\"(acc[1]), \"+f\"(acc[2]), \"+f\"(acc[3]), "
      "\"+f\"(acc[4]),\n"
      "      \"+f\"(acc[5]), \"+f\"(acc[6]), \"+f\"(acc[7])\n"
      "    : \"l\"(desc_a), \"l\"(desc_b), \"r\"(accumulate), \"n\"(-1), "
      "\"n\"(1), \"n\"(0), \"n\"(1)\n"
      "    : \"memory\");");
}

TEST(WgmmaTextTest, PtxOfEachFamily) {
  const OperandNames ss = {
      {"d", {"%d"}}, {"a", {"%rd1"}}, {"b", {"%rd2"}}, {"scale_d", {"%p1"}}};
  const OperandNames rs = {
      {"d", {"%d"}}, {"a", {"%a"}}, {"b", {"%rd2"}}, {"scale_d", {"%p1"}}};
  WgmmaMma bf16_rs = Mma(8, kBF16, kBF16, kF32);
  bf16_rs.a_source = WgmmaASource::kRegisters;
  bf16_rs.transpose_b = true;
  EXPECT_EQ(*RenderPtx(*WgmmaMmaAsync(bf16_rs), rs),
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, "
            "%d2, %d3}, {%a0, %a1, %a2, %a3}, %rd2, %p1, 1, 1, 1;");
  EXPECT_EQ(*RenderPtx(*WgmmaMmaAsync(Mma(8, kTF32, kTF32, kF32)), ss),
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%d0, %d1, "
            "%d2, %d3}, %rd1, %rd2, %p1, 1, 1;");
  EXPECT_EQ(*RenderPtx(*WgmmaMmaAsync(Mma(16, kE4M3, kE5M2, kF16)), ss),
            "wgmma.mma_async.sync.aligned.m64n16k32.f16.e4m3.e5m2 {%d0, %d1, "
            "%d2, %d3}, %rd1, %rd2, %p1, 1, 1;");
  WgmmaMma saturating = Mma(8, kS8, kU8, kS32);
  saturating.satfinite = true;
  EXPECT_EQ(*RenderPtx(*WgmmaMmaAsync(saturating), ss),
            "wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.s8.u8 {%d0, "
            "%d1, %d2, %d3}, %rd1, %rd2, %p1;");
}

TEST(WgmmaTextTest, FenceCommitWait) {
  EXPECT_EQ(*RenderInlineAsm(WgmmaFence(), {}),
            "asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");");
  EXPECT_EQ(*RenderPtx(WgmmaCommitGroup(), {}),
            "wgmma.commit_group.sync.aligned;");
  EXPECT_EQ(*RenderPtx(*WgmmaWaitGroup(7), {}),
            "wgmma.wait_group.sync.aligned 7;");
  EXPECT_EQ(WgmmaWaitGroup(8).status().message(),
            "wgmma: wait_group takes 0..7 pending groups, not 8");
  EXPECT_FALSE(WgmmaWaitGroup(-1).ok());
}

TEST(WgmmaTextTest, AccumulatorPinIsAnEmptyAsmOverTheAccumulators) {
  EXPECT_EQ(
      *RenderInlineAsm(*WgmmaAccumulatorPin(kF16, 16), {{"d", {"acc"}}}),
      "asm volatile(\n"
      "    \"\"\n"
      "    : \"+r\"(acc[0]), \"+r\"(acc[1]), \"+r\"(acc[2]), \"+r\"(acc[3])\n"
      "    :\n"
      "    : \"memory\");");
  EXPECT_EQ(*RenderPtx(*WgmmaAccumulatorPin(kF32, 64), {{"d", {"%f"}}}), "");
  EXPECT_FALSE(WgmmaAccumulatorPin(kBF16, 64).ok());
  EXPECT_FALSE(WgmmaAccumulatorPin(kF32, 12).ok());
}

TEST(WgmmaTextTest, RenderingIsDeterministic) {
  WgmmaMma mma = Mma(256, kF16, kF16, kF32);
  const OperandNames names = {
      {"d", {"acc"}}, {"a", {"a"}}, {"b", {"b"}}, {"scale_d", {"s"}}};
  EXPECT_EQ(*RenderInlineAsm(*WgmmaMmaAsync(mma), names),
            *RenderInlineAsm(*WgmmaMmaAsync(mma), names));
}

}  // namespace
}  // namespace ptxgen::ptx
