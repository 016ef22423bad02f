#include "ptxgen/ptx/warp_specialization.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {

Statement ElectSync() {
  Statement statement("elect.sync");
  const SlotId elected =
      statement.AddSlot("elected", RegType::kPred, Access::kWrite);
  // The elected lane's index is not needed: `_` discards it. The member
  // mask is syntax here: the full warp always takes part.
  statement.Emit("elect.sync",
                 {Pair(Text("_"), Reg(elected)), Plain(Text("0xffffffff"))});
  return statement;
}

absl::Status ValidateMaxNReg(int count) {
  if (count < kMinMaxNReg || count > kMaxMaxNReg || count % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "setmaxnreg: ", count, " registers is not legal (counts are ",
        "multiples of 8 in ", kMinMaxNReg, "..", kMaxMaxNReg, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Statement> SetMaxNReg(RegisterAdjustment adjustment, int count) {
  if (absl::Status valid = ValidateMaxNReg(count); !valid.ok()) return valid;
  if (adjustment != RegisterAdjustment::kIncrease &&
      adjustment != RegisterAdjustment::kDecrease) {
    return absl::InvalidArgumentError(
        absl::StrCat("setmaxnreg: adjustment ", static_cast<int>(adjustment),
                     " is neither an increase nor a decrease"));
  }
  const std::string opcode =
      absl::StrCat("setmaxnreg.",
                   adjustment == RegisterAdjustment::kIncrease ? "inc" : "dec",
                   ".sync.aligned.u32");
  Statement statement(opcode);
  statement.Emit(opcode, {Plain(Imm(count))});
  return statement;
}

Statement BarrierClusterArrive(ClusterArriveOrdering ordering) {
  const char* opcode = ordering == ClusterArriveOrdering::kRelaxed
                           ? "barrier.cluster.arrive.relaxed.aligned"
                           : "barrier.cluster.arrive.release.aligned";
  Statement statement(opcode);
  statement.set_touches_memory(true);
  statement.Emit(opcode, {});
  return statement;
}

Statement BarrierClusterWait() {
  Statement statement("barrier.cluster.wait");
  statement.set_touches_memory(true);
  statement.Emit("barrier.cluster.wait.acquire.aligned", {});
  return statement;
}

absl::StatusOr<Statement> StMatrixSharedB16(const StMatrix& stmatrix) {
  const int count = stmatrix.matrices;
  if (count != 1 && count != 2 && count != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("stmatrix: .x", count,
                     " is not legal (1, 2 or 4 matrices per instruction)"));
  }
  const std::string opcode =
      absl::StrCat("stmatrix.sync.aligned.m8n8.x", count,
                   stmatrix.transpose ? ".trans" : "", ".shared.b16");
  Statement statement(opcode);
  statement.set_touches_memory(true);
  const SlotId address =
      statement.AddSlot("address", RegType::kB32, Access::kRead);
  const SlotId values =
      statement.AddSlot("values", RegType::kB32, Access::kRead, count);
  statement.Emit(opcode, {Address(Reg(address)), Vector(Regs(values, count))});
  return statement;
}

Statement ClusterCtaRank() {
  Statement statement("%cluster_ctarank");
  const SlotId rank = statement.AddSlot("rank", RegType::kB32, Access::kWrite);
  statement.Emit("mov.u32",
                 {Plain(Reg(rank)), Plain(Text("%cluster_ctarank"))});
  return statement;
}

Statement MapaSharedCluster() {
  Statement statement("mapa.shared::cluster");
  const SlotId mapped =
      statement.AddSlot("mapped", RegType::kB32, Access::kWrite);
  const SlotId address =
      statement.AddSlot("address", RegType::kB32, Access::kRead);
  const SlotId cta_rank =
      statement.AddSlot("cta_rank", RegType::kB32, Access::kRead);
  statement.Emit(
      "mapa.shared::cluster.u32",
      {Plain(Reg(mapped)), Plain(Reg(address)), Plain(Reg(cta_rank))});
  return statement;
}

Statement LoadSharedClusterF32x4() {
  Statement statement("ld.shared::cluster.v4.f32");
  statement.set_touches_memory(true);
  const SlotId values =
      statement.AddSlot("values", RegType::kF32, Access::kWrite, 4);
  const SlotId address =
      statement.AddSlot("address", RegType::kB32, Access::kRead);
  statement.Emit("ld.shared::cluster.v4.f32",
                 {Vector(Regs(values, 4)), Address(Reg(address))});
  return statement;
}

Statement LoadSharedB32x4() {
  Statement statement("ld.shared.v4.b32");
  statement.set_touches_memory(true);
  const SlotId values =
      statement.AddSlot("values", RegType::kB32, Access::kWrite, 4);
  const SlotId address =
      statement.AddSlot("address", RegType::kB32, Access::kRead);
  statement.Emit("ld.shared.v4.b32",
                 {Vector(Regs(values, 4)), Address(Reg(address))});
  return statement;
}

}  // namespace ptxgen::ptx
