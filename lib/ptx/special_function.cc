#include "ptxgen/ptx/special_function.h"

namespace ptxgen::ptx {

Statement TanhApproxF32() {
  Statement statement("tanh.approx.f32");
  const SlotId result =
      statement.AddSlot("result", RegType::kF32, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kF32, Access::kRead);
  statement.Emit("tanh.approx.f32", {Plain(Reg(result)), Plain(Reg(value))});
  return statement;
}

}  // namespace ptxgen::ptx
