#include "ptxgen/ptx/reduction.h"

namespace ptxgen::ptx {

Statement ReduxSyncMaxU32() {
  Statement statement("redux.sync.max.u32");
  const SlotId result =
      statement.AddSlot("result", RegType::kB32, Access::kWrite);
  const SlotId value = statement.AddSlot("value", RegType::kB32, Access::kRead);
  // The member mask is syntax here: the full warp always takes part.
  statement.Emit("redux.sync.max.u32", {Plain(Reg(result)), Plain(Reg(value)),
                                        Plain(Text("0xffffffff"))});
  return statement;
}

Statement RedGlobalMaxU32() {
  Statement statement("red.relaxed.gpu.global.max.u32");
  statement.set_touches_memory(true);
  const SlotId address =
      statement.AddSlot("address", RegType::kB64, Access::kRead);
  const SlotId value = statement.AddSlot("value", RegType::kB32, Access::kRead);
  statement.Emit("red.relaxed.gpu.global.max.u32",
                 {Address(Reg(address)), Plain(Reg(value))});
  return statement;
}

}  // namespace ptxgen::ptx
