#include "ptxgen/ptx/special_function.h"

namespace ptxgen::ptx {

namespace {

// One special-function instruction of an f32 value into an f32 result.
Statement Unary(const char* opcode) {
  Statement statement(opcode);
  const SlotId result =
      statement.AddSlot("result", RegType::kF32, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kF32, Access::kRead);
  statement.Emit(opcode, {Plain(Reg(result)), Plain(Reg(value))});
  return statement;
}

}  // namespace

Statement TanhApproxF32() { return Unary("tanh.approx.f32"); }
Statement Ex2ApproxFtzF32() { return Unary("ex2.approx.ftz.f32"); }
Statement Lg2ApproxFtzF32() { return Unary("lg2.approx.ftz.f32"); }

}  // namespace ptxgen::ptx
