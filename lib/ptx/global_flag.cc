#include "ptxgen/ptx/global_flag.h"

namespace ptxgen::ptx {

Statement StoreReleaseGpu() {
  Statement statement("st.release.gpu.global");
  statement.set_touches_memory(true);
  const SlotId address =
      statement.AddSlot("address", RegType::kB64, Access::kRead);
  const SlotId value = statement.AddSlot("value", RegType::kB32, Access::kRead);
  statement.Emit("st.release.gpu.global.b32",
                 {Address(Reg(address)), Plain(Reg(value))});
  return statement;
}

Statement LoadAcquireGpu() {
  Statement statement("ld.acquire.gpu.global");
  statement.set_touches_memory(true);
  const SlotId value =
      statement.AddSlot("value", RegType::kB32, Access::kWrite);
  const SlotId address =
      statement.AddSlot("address", RegType::kB64, Access::kRead);
  statement.Emit("ld.acquire.gpu.global.b32",
                 {Plain(Reg(value)), Address(Reg(address))});
  return statement;
}

}  // namespace ptxgen::ptx
