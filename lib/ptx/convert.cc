#include "ptxgen/ptx/convert.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {
namespace {

absl::Status CheckSixteenBitFloat(ScalarType to) {
  if (CvtRoundsTo(to)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("cvt: rounds f32 to f16 or bf16 only, not ", PtxName(to)));
}

}  // namespace

bool CvtRoundsTo(ScalarType to) {
  return to == ScalarType::kF16 || to == ScalarType::kBF16;
}

absl::StatusOr<Statement> CvtRoundFromF32(ScalarType to) {
  if (absl::Status status = CheckSixteenBitFloat(to); !status.ok())
    return status;
  const std::string opcode = absl::StrCat("cvt.rn.", PtxName(to), ".f32");
  Statement statement(opcode);
  const SlotId result =
      statement.AddSlot("result", RegType::kB16, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kF32, Access::kRead);
  statement.Emit(opcode, {Plain(Reg(result)), Plain(Reg(value))});
  return statement;
}

absl::StatusOr<Statement> CvtPackFromF32x2(ScalarType to) {
  if (absl::Status status = CheckSixteenBitFloat(to); !status.ok())
    return status;
  const std::string opcode = absl::StrCat("cvt.rn.", PtxName(to), "x2.f32");
  Statement statement(opcode);
  const SlotId packed =
      statement.AddSlot("packed", RegType::kB32, Access::kWrite);
  const SlotId high = statement.AddSlot("high", RegType::kF32, Access::kRead);
  const SlotId low = statement.AddSlot("low", RegType::kF32, Access::kRead);
  statement.Emit(opcode,
                 {Plain(Reg(packed)), Plain(Reg(high)), Plain(Reg(low))});
  return statement;
}

absl::StatusOr<Statement> CvtWidenToF32(ScalarType from) {
  if (!CvtRoundsTo(from)) {
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
