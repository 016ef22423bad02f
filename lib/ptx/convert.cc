#include "ptxgen/ptx/convert.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {
namespace {

bool IsSixteenBitFloat(ScalarType type) {
  return type == ScalarType::kF16 || type == ScalarType::kBF16;
}

absl::Status CheckRoundsTo(ScalarType to) {
  if (CvtRoundsTo(to)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cvt: rounds f32 to f16, bf16, e4m3, e5m2 or s8 only, not ",
                   PtxName(to)));
}

// s8: to the nearest integer (ties to even), saturated to -128..127.
constexpr char kRoundToS8[] = "cvt.rni.sat.s8.f32";

// The pair form's opcode: PTX converts f32 to 8-bit floats in pairs only,
// and only with .satfinite.
std::string PairOpcode(ScalarType to) {
  return absl::StrCat(IsFp8(to) ? "cvt.rn.satfinite." : "cvt.rn.", PtxName(to),
                      "x2.f32");
}

// PTX has no f32 pair form for s8: each value rounded on its own, its low
// byte kept (cvt may sign-extend into the b16), the high value's shifted up.
Statement PackS8x2() {
  Statement statement(absl::StrCat(kRoundToS8, " x2, packed"));
  const SlotId packed =
      statement.AddSlot("packed", RegType::kB16, Access::kWrite);
  const SlotId high = statement.AddSlot("high", RegType::kF32, Access::kRead);
  const SlotId low = statement.AddSlot("low", RegType::kF32, Access::kRead);
  statement.DeclareLocal("lo", RegType::kB16);
  statement.DeclareLocal("hi", RegType::kB16);
  statement.Emit(kRoundToS8, {Plain(Text("lo")), Plain(Reg(low))});
  statement.Emit(kRoundToS8, {Plain(Text("hi")), Plain(Reg(high))});
  statement.Emit("and.b16",
                 {Plain(Text("lo")), Plain(Text("lo")), Plain(Text("0x00FF"))});
  statement.Emit("shl.b16",
                 {Plain(Text("hi")), Plain(Text("hi")), Plain(Text("8"))});
  statement.Emit("or.b16",
                 {Plain(Reg(packed)), Plain(Text("lo")), Plain(Text("hi"))});
  return statement;
}

}  // namespace

bool CvtRoundsTo(ScalarType to) {
  return IsSixteenBitFloat(to) || IsFp8(to) || to == ScalarType::kS8;
}

absl::StatusOr<Statement> CvtRoundFromF32(ScalarType to) {
  if (absl::Status status = CheckRoundsTo(to); !status.ok()) return status;
  if (to == ScalarType::kS8) {
    Statement statement(kRoundToS8);
    const SlotId result =
        statement.AddSlot("result", RegType::kB16, Access::kWrite);
    const SlotId value =
        statement.AddSlot("value", RegType::kF32, Access::kRead);
    statement.Emit(kRoundToS8, {Plain(Reg(result)), Plain(Reg(value))});
    return statement;
  }
  const std::string opcode =
      IsFp8(to) ? PairOpcode(to) : absl::StrCat("cvt.rn.", PtxName(to), ".f32");
  Statement statement(IsFp8(to) ? absl::StrCat(opcode, ", one value") : opcode);
  const SlotId result =
      statement.AddSlot("result", RegType::kB16, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kF32, Access::kRead);
  if (IsFp8(to)) {
    // +0.0 rounds to byte 0x00 in both formats: the high byte stays zero.
    statement.Emit(opcode, {Plain(Reg(result)), Plain(Text("0f00000000")),
                            Plain(Reg(value))});
  } else {
    statement.Emit(opcode, {Plain(Reg(result)), Plain(Reg(value))});
  }
  return statement;
}

absl::StatusOr<Statement> CvtPackFromF32x2(ScalarType to) {
  if (absl::Status status = CheckRoundsTo(to); !status.ok()) return status;
  if (to == ScalarType::kS8) return PackS8x2();
  const std::string opcode = PairOpcode(to);
  Statement statement(opcode);
  const SlotId packed = statement.AddSlot(
      "packed", IsFp8(to) ? RegType::kB16 : RegType::kB32, Access::kWrite);
  const SlotId high = statement.AddSlot("high", RegType::kF32, Access::kRead);
  const SlotId low = statement.AddSlot("low", RegType::kF32, Access::kRead);
  statement.Emit(opcode,
                 {Plain(Reg(packed)), Plain(Reg(high)), Plain(Reg(low))});
  return statement;
}

absl::StatusOr<Statement> CvtWidenToF32(ScalarType from) {
  if (!IsSixteenBitFloat(from)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cvt: widens f16 or bf16 to f32 only, not ", PtxName(from)));
  }
  const std::string opcode = absl::StrCat("cvt.f32.", PtxName(from));
  Statement statement(opcode);
  const SlotId result =
      statement.AddSlot("result", RegType::kF32, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kB16, Access::kRead);
  statement.Emit(opcode, {Plain(Reg(result)), Plain(Reg(value))});
  return statement;
}

}  // namespace ptxgen::ptx
