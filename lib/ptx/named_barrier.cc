#include "ptxgen/ptx/named_barrier.h"

namespace ptxgen::ptx {
namespace {

// bar.sync and bar.arrive take the same operands: the barrier and the
// threads it counts.
Statement NamedBarrier(const char* opcode) {
  Statement statement(opcode);
  statement.set_touches_memory(true);
  const SlotId id = statement.AddSlot("id", RegType::kB32, Access::kRead);
  const SlotId threads =
      statement.AddSlot("threads", RegType::kB32, Access::kRead);
  statement.Emit(opcode, {Plain(Reg(id)), Plain(Reg(threads))});
  return statement;
}

}  // namespace

Statement NamedBarrierSync() { return NamedBarrier("bar.sync"); }

Statement NamedBarrierArrive() { return NamedBarrier("bar.arrive"); }

}  // namespace ptxgen::ptx
