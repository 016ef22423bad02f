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
  return absl::InvalidArgumentError(absl::StrCat(
      "cvt: rounds f32 to f16, bf16, e4m3 or e5m2 only, not ", PtxName(to)));
}

// The pair form's opcode: PTX converts f32 to 8-bit floats in pairs only,
// and only with .satfinite.
std::string PairOpcode(ScalarType to) {
  return absl::StrCat(IsFp8(to) ? "cvt.rn.satfinite." : "cvt.rn.", PtxName(to),
                      "x2.f32");
}

}  // namespace

bool CvtRoundsTo(ScalarType to) { return IsSixteenBitFloat(to) || IsFp8(to); }

absl::StatusOr<Statement> CvtRoundFromF32(ScalarType to) {
  if (absl::Status status = CheckRoundsTo(to); !status.ok()) return status;
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
