#include "ptxgen/ptx/tma.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {
namespace {

absl::Status Illegal(const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat("tma: ", rule));
}

const char* CacheHintSuffix(bool l2_cache_hint) {
  return l2_cache_hint ? ".L2::cache_hint" : "";
}

// The "[tensor_map, {coords...}]" argument shared by every tensor form.
Argument TensorOperand(Statement& statement, int rank) {
  const SlotId tensor_map =
      statement.AddSlot("tensor_map", RegType::kB64, Access::kRead);
  const SlotId coords =
      statement.AddSlot("coords", RegType::kB32, Access::kRead, rank);
  return TensorAddress(Reg(tensor_map), Regs(coords, rank));
}

// Appends ", cache_policy" when the form carries the hint; the policy is the
// last operand of every form.
void AddCachePolicy(Statement& statement, bool l2_cache_hint,
                    std::vector<Argument>& arguments) {
  if (!l2_cache_hint) return;
  const SlotId policy =
      statement.AddSlot("cache_policy", RegType::kB64, Access::kRead);
  arguments.push_back(Plain(Reg(policy)));
}

}  // namespace

absl::Status ValidateTensorRank(int rank) {
  if (rank < kMinTensorRank || rank > kMaxTensorRank) {
    return Illegal(absl::StrCat("a ", rank,
                                "-D tensor copy is not legal (rank must be ",
                                kMinTensorRank, "..", kMaxTensorRank, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Statement> CpAsyncBulkTensorLoad(const TensorLoad& load) {
  if (absl::Status rank = ValidateTensorRank(load.rank); !rank.ok()) {
    return rank;
  }
  const std::string opcode =
      absl::StrCat("cp.async.bulk.tensor.", load.rank,
                   "d.shared::cluster.global.mbarrier::complete_tx::bytes",
                   load.multicast ? ".multicast::cluster" : "",
                   CacheHintSuffix(load.l2_cache_hint));

  Statement statement(opcode);
  statement.set_touches_memory(true);
  const SlotId dst = statement.AddSlot("dst", RegType::kB32, Access::kRead);
  std::vector<Argument> arguments = {Address(Reg(dst)),
                                     TensorOperand(statement, load.rank)};
  const SlotId mbarrier =
      statement.AddSlot("mbarrier", RegType::kB32, Access::kRead);
  arguments.push_back(Address(Reg(mbarrier)));
  if (load.multicast) {
    const SlotId mask =
        statement.AddSlot("cta_mask", RegType::kB16, Access::kRead);
    arguments.push_back(Plain(Reg(mask)));
  }
  AddCachePolicy(statement, load.l2_cache_hint, arguments);
  statement.Emit(opcode, std::move(arguments));
  return statement;
}

absl::StatusOr<Statement> CpAsyncBulkTensorStore(const TensorStore& store) {
  if (absl::Status rank = ValidateTensorRank(store.rank); !rank.ok()) {
    return rank;
  }
  const std::string opcode = absl::StrCat("cp.async.bulk.tensor.", store.rank,
                                          "d.global.shared::cta.bulk_group",
                                          CacheHintSuffix(store.l2_cache_hint));

  Statement statement(opcode);
  statement.set_touches_memory(true);
  std::vector<Argument> arguments = {TensorOperand(statement, store.rank)};
  const SlotId src = statement.AddSlot("src", RegType::kB32, Access::kRead);
  arguments.push_back(Address(Reg(src)));
  AddCachePolicy(statement, store.l2_cache_hint, arguments);
  statement.Emit(opcode, std::move(arguments));
  return statement;
}

Statement CpAsyncBulkCommitGroup() {
  Statement statement("cp.async.bulk.commit_group");
  statement.set_touches_memory(true);
  statement.Emit("cp.async.bulk.commit_group", {});
  return statement;
}

absl::StatusOr<Statement> CpAsyncBulkWaitGroup(int pending_groups,
                                               bool read_only) {
  if (pending_groups < 0 || pending_groups > kMaxBulkPendingGroups) {
    return Illegal(absl::StrCat("bulk wait_group takes 0..",
                                kMaxBulkPendingGroups, " pending groups, not ",
                                pending_groups));
  }
  const std::string opcode =
      absl::StrCat("cp.async.bulk.wait_group", read_only ? ".read" : "");
  Statement statement(opcode);
  statement.set_touches_memory(true);
  statement.Emit(opcode, {Plain(Imm(pending_groups))});
  return statement;
}

absl::StatusOr<Statement> CpAsyncBulkPrefetchTensor(
    const TensorPrefetch& prefetch) {
  if (absl::Status rank = ValidateTensorRank(prefetch.rank); !rank.ok()) {
    return rank;
  }
  const std::string opcode =
      absl::StrCat("cp.async.bulk.prefetch.tensor.", prefetch.rank,
                   "d.L2.global.tile", CacheHintSuffix(prefetch.l2_cache_hint));

  Statement statement(opcode);
  statement.set_touches_memory(true);  // Reads the tensor map.
  std::vector<Argument> arguments = {TensorOperand(statement, prefetch.rank)};
  AddCachePolicy(statement, prefetch.l2_cache_hint, arguments);
  statement.Emit(opcode, std::move(arguments));
  return statement;
}

Statement PrefetchTensorMap() {
  Statement statement("prefetch.tensormap");
  const SlotId tensor_map =
      statement.AddSlot("tensor_map", RegType::kB64, Access::kRead);
  statement.Emit("prefetch.tensormap", {Address(Reg(tensor_map))});
  return statement;
}

Statement FenceProxyAsyncSharedCta() {
  Statement statement("fence.proxy.async.shared::cta");
  statement.set_touches_memory(true);
  statement.Emit("fence.proxy.async.shared::cta", {});
  return statement;
}

}  // namespace ptxgen::ptx
