#include "ptxgen/ptx/mbarrier.h"

#include <string>
#include <utility>

namespace ptxgen::ptx {
namespace {

// Every mbarrier statement reads or writes the barrier's shared memory.
Statement BarrierStatement(std::string description) {
  Statement statement(std::move(description));
  statement.set_touches_memory(true);
  return statement;
}

SlotId AddBarrier(Statement& statement) {
  return statement.AddSlot("mbarrier", RegType::kB32, Access::kRead);
}

}  // namespace

Statement MbarrierInit() {
  Statement statement = BarrierStatement("mbarrier.init");
  const SlotId mbarrier = AddBarrier(statement);
  const SlotId count = statement.AddSlot("count", RegType::kB32, Access::kRead);
  statement.Emit("mbarrier.init.shared::cta.b64",
                 {Address(Reg(mbarrier)), Plain(Reg(count))});
  return statement;
}

Statement MbarrierArrive(MbarrierScope scope) {
  // A remote arrive must say release at cluster scope, or the peer that
  // waits on it is not guaranteed to see this CTA's writes.
  const char* opcode =
      scope == MbarrierScope::kCluster
          ? "mbarrier.arrive.release.cluster.shared::cluster.b64"
      : scope == MbarrierScope::kClusterRelaxed
          ? "mbarrier.arrive.relaxed.cluster.shared::cluster.b64"
          : "mbarrier.arrive.shared::cta.b64";
  Statement statement = BarrierStatement(opcode);
  const SlotId mbarrier = AddBarrier(statement);
  statement.Emit(opcode, {Plain(Text("_")), Address(Reg(mbarrier))});
  return statement;
}

Statement MbarrierArriveExpectTx() {
  Statement statement = BarrierStatement("mbarrier.arrive.expect_tx");
  const SlotId mbarrier = AddBarrier(statement);
  const SlotId bytes =
      statement.AddSlot("tx_bytes", RegType::kB32, Access::kRead);
  statement.Emit("mbarrier.arrive.expect_tx.shared::cta.b64",
                 {Plain(Text("_")), Address(Reg(mbarrier)), Plain(Reg(bytes))});
  return statement;
}

Statement MbarrierTryWaitParity(MbarrierWaitScope scope) {
  Statement statement = BarrierStatement("mbarrier.try_wait.parity loop");
  const SlotId mbarrier = AddBarrier(statement);
  const SlotId phase = statement.AddSlot("phase", RegType::kB32, Access::kRead);
  // try_wait may give up after a hardware time limit, hence the loop.
  statement.DeclareLocal("ready", RegType::kPred);
  statement.EmitLabel("WAIT");
  statement.Emit(
      scope == MbarrierWaitScope::kCluster
          ? "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64"
          : "mbarrier.try_wait.parity.shared::cta.b64",
      {Plain(Text("ready")), Address(Reg(mbarrier)), Plain(Reg(phase))});
  statement.EmitGuarded(Text("ready"), "bra", {Plain(Text("DONE"))});
  statement.Emit("bra", {Plain(Text("WAIT"))});
  statement.EmitLabel("DONE");
  return statement;
}

Statement MbarrierInval() {
  Statement statement = BarrierStatement("mbarrier.inval");
  const SlotId mbarrier = AddBarrier(statement);
  statement.Emit("mbarrier.inval.shared::cta.b64", {Address(Reg(mbarrier))});
  return statement;
}

Statement FenceMbarrierInit() {
  Statement statement = BarrierStatement("fence.mbarrier_init");
  statement.Emit("fence.mbarrier_init.release.cluster", {});
  return statement;
}

}  // namespace ptxgen::ptx
