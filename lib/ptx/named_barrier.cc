#include "ptxgen/ptx/named_barrier.h"

namespace ptxgen::ptx {

Statement NamedBarrierSync() {
  Statement statement("bar.sync");
  statement.set_touches_memory(true);
  const SlotId id = statement.AddSlot("id", RegType::kB32, Access::kRead);
  const SlotId threads =
      statement.AddSlot("threads", RegType::kB32, Access::kRead);
  statement.Emit("bar.sync", {Plain(Reg(id)), Plain(Reg(threads))});
  return statement;
}

Statement NamedBarrierArrive() {
  Statement statement("bar.arrive");
  statement.set_touches_memory(true);
  const SlotId id = statement.AddSlot("id", RegType::kB32, Access::kRead);
  const SlotId threads =
      statement.AddSlot("threads", RegType::kB32, Access::kRead);
  statement.Emit("bar.arrive", {Plain(Reg(id)), Plain(Reg(threads))});
  return statement;
}

}  // namespace ptxgen::ptx
