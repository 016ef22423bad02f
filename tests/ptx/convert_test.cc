// cvt's text: rounding f32 to 16- and 8-bit floats and to s8, packing
// pairs, widening.
#include "ptxgen/ptx/convert.h"

#include <string>

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

std::string Ptx(const absl::StatusOr<Statement>& statement,
                const OperandNames& names) {
  if (!statement.ok()) return std::string(statement.status().message());
  absl::StatusOr<std::string> text = RenderPtx(*statement, names);
  return text.ok() ? *text : std::string(text.status().message());
}

TEST(ConvertTest, RoundsToTheOutputTypesOnly) {
  for (ScalarType type :
       {ScalarType::kF16, ScalarType::kBF16, ScalarType::kE4M3,
        ScalarType::kE5M2, ScalarType::kS8}) {
    EXPECT_TRUE(CvtRoundsTo(type)) << PtxName(type);
  }
  for (ScalarType type : {ScalarType::kTF32, ScalarType::kU8, ScalarType::kF32,
                          ScalarType::kS32}) {
    EXPECT_FALSE(CvtRoundsTo(type)) << PtxName(type);
    EXPECT_EQ(CvtRoundFromF32(type).status().message(),
              "cvt: rounds f32 to f16, bf16, e4m3, e5m2 or s8 only, not " +
                  std::string(PtxName(type)));
    EXPECT_FALSE(CvtPackFromF32x2(type).ok());
  }
}

TEST(ConvertTest, SixteenBitRoundingAndPacking) {
  EXPECT_EQ(Ptx(CvtRoundFromF32(ScalarType::kBF16),
                {{"result", {"%rs0"}}, {"value", {"%f0"}}}),
            "cvt.rn.bf16.f32 %rs0, %f0;");
  EXPECT_EQ(Ptx(CvtPackFromF32x2(ScalarType::kF16),
                {{"packed", {"%r0"}}, {"high", {"%f1"}}, {"low", {"%f0"}}}),
            "cvt.rn.f16x2.f32 %r0, %f1, %f0;");
  EXPECT_EQ(CvtPackFromF32x2(ScalarType::kF16)->FindSlot("packed")->type,
            RegType::kB32);
}

// One 8-bit value is the pair form with +0 in the high byte.
TEST(ConvertTest, Fp8RoundsOneValueAsTheLowByteOfAPair) {
  absl::StatusOr<Statement> e4m3 = CvtRoundFromF32(ScalarType::kE4M3);
  ASSERT_TRUE(e4m3.ok()) << e4m3.status();
  EXPECT_EQ(e4m3->FindSlot("result")->type, RegType::kB16);
  EXPECT_EQ(Ptx(e4m3, {{"result", {"%rs0"}}, {"value", {"%f0"}}}),
            "cvt.rn.satfinite.e4m3x2.f32 %rs0, 0f00000000, %f0;");
  EXPECT_EQ(Ptx(CvtRoundFromF32(ScalarType::kE5M2),
                {{"result", {"%rs0"}}, {"value", {"%f0"}}}),
            "cvt.rn.satfinite.e5m2x2.f32 %rs0, 0f00000000, %f0;");
  EXPECT_EQ(*RenderInlineAsm(*e4m3, {{"result", {"r"}}, {"value", {"v"}}}),
            "asm volatile(\n"
            "    \"cvt.rn.satfinite.e4m3x2.f32 %0, 0f00000000, %1;\\n\"\n"
            "    : \"=h\"(r)\n"
            "    : \"f\"(v));");
}

TEST(ConvertTest, Fp8PairsPackIntoB16) {
  for (ScalarType type : {ScalarType::kE4M3, ScalarType::kE5M2}) {
    absl::StatusOr<Statement> pack = CvtPackFromF32x2(type);
    ASSERT_TRUE(pack.ok()) << pack.status();
    EXPECT_EQ(pack->FindSlot("packed")->type, RegType::kB16);
    EXPECT_EQ(
        Ptx(pack, {{"packed", {"%rs0"}}, {"high", {"%f1"}}, {"low", {"%f0"}}}),
        "cvt.rn.satfinite." + std::string(PtxName(type)) +
            "x2.f32 %rs0, %f1, %f0;");
  }
}

// s8 rounds to the nearest integer with saturation; a pair is two such
// values, each one's low byte in its half of a b16.
TEST(ConvertTest, S8RoundsWithSaturationAndPacksBytes) {
  absl::StatusOr<Statement> round = CvtRoundFromF32(ScalarType::kS8);
  ASSERT_TRUE(round.ok()) << round.status();
  EXPECT_EQ(round->FindSlot("result")->type, RegType::kB16);
  EXPECT_EQ(Ptx(round, {{"result", {"%rs0"}}, {"value", {"%f0"}}}),
            "cvt.rni.sat.s8.f32 %rs0, %f0;");
  absl::StatusOr<Statement> pack = CvtPackFromF32x2(ScalarType::kS8);
  ASSERT_TRUE(pack.ok()) << pack.status();
  EXPECT_EQ(pack->FindSlot("packed")->type, RegType::kB16);
  EXPECT_EQ(
      Ptx(pack, {{"packed", {"%rs0"}}, {"high", {"%f1"}}, {"low", {"%f0"}}}),
      "{\n"
      ".reg .b16 lo;\n"
      ".reg .b16 hi;\n"
      "cvt.rni.sat.s8.f32 lo, %f0;\n"
      "cvt.rni.sat.s8.f32 hi, %f1;\n"
      "and.b16 lo, lo, 0x00FF;\n"
      "shl.b16 hi, hi, 8;\n"
      "or.b16 %rs0, lo, hi;\n"
      "}");
}

TEST(ConvertTest, WidensSixteenBitFloatsOnly) {
  EXPECT_EQ(Ptx(CvtWidenToF32(ScalarType::kF16),
                {{"result", {"%f0"}}, {"value", {"%rs0"}}}),
            "cvt.f32.f16 %f0, %rs0;");
  EXPECT_EQ(CvtWidenToF32(ScalarType::kE4M3).status().message(),
            "cvt: widens f16 or bf16 to f32 only, not e4m3");
}

}  // namespace
}  // namespace ptxgen::ptx
