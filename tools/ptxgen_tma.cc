// `ptxgen tma`: TMA tensor copies and their bulk groups.
#include <vector>

#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/tma.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

using cli::ParsedFlags;

std::vector<cli::Operation> TmaOperations() {
  return {
      {"load",
       "cp.async.bulk.tensor global -> shared, completing on an mbarrier",
       {"rank", "multicast", "cache-hint"},
       [](const ParsedFlags& flags) {
         return ptx::CpAsyncBulkTensorLoad({flags.Integer("rank"),
                                            flags.Has("multicast"),
                                            flags.Has("cache-hint")});
       }},
      {"store",
       "cp.async.bulk.tensor shared -> global, in a bulk group",
       {"rank", "cache-hint"},
       [](const ParsedFlags& flags) {
         return ptx::CpAsyncBulkTensorStore(
             {flags.Integer("rank"), flags.Has("cache-hint")});
       }},
      {"prefetch",
       "cp.async.bulk.prefetch.tensor: warms L2 with a box",
       {"rank", "cache-hint"},
       [](const ParsedFlags& flags) {
         return ptx::CpAsyncBulkPrefetchTensor(
             {flags.Integer("rank"), flags.Has("cache-hint")});
       }},
      {"commit",
       "cp.async.bulk.commit_group: closes a bulk group of stores",
       {},
       cli::Fixed(ptx::CpAsyncBulkCommitGroup)},
      {"wait",
       "cp.async.bulk.wait_group: waits until at most --pending groups are "
       "pending",
       {"pending", "read"},
       [](const ParsedFlags& flags) {
         return ptx::CpAsyncBulkWaitGroup(flags.Integer("pending"),
                                          flags.Has("read"));
       }},
      {"fence",
       "fence.proxy.async.shared::cta: makes shared-memory writes visible to "
       "TMA and wgmma",
       {},
       cli::Fixed(ptx::FenceProxyAsyncSharedCta)},
      {"prefetch-map",
       "prefetch.tensormap: fetches a tensor map ahead of its first copy",
       {},
       cli::Fixed(ptx::PrefetchTensorMap)},
  };
}

}  // namespace

cli::Subcommand TmaSubcommand() {
  const std::vector<cli::Operation> operations = TmaOperations();
  cli::Subcommand command;
  command.name = "tma";
  command.summary =
      "TMA: tensor loads, stores and prefetches, bulk groups, "
      "the async-proxy fence";
  command.description =
      "Prints one TMA statement (tile mode). Operands: tensor_map (the\n"
      "generic address of a __grid_constant__ CUtensorMap), coords (one per\n"
      "dimension, innermost first), dst/src and mbarrier (32-bit shared\n"
      "addresses), cta_mask (multicast), cache_policy (cache hint).";
  command.flags = {
      cli::OperationFlag(operations),
      cli::IntegerFlag(
          "rank", "N",
          absl::StrCat("Dimensions of the tensor box (", ptx::kMinTensorRank,
                       "..", ptx::kMaxTensorRank, ")."),
          "2"),
      cli::SwitchFlag("multicast",
                      "Also writes the box into the cluster's CTAs named by "
                      "cta_mask."),
      cli::SwitchFlag("cache-hint",
                      "Takes an L2 eviction policy (cache_policy)."),
      cli::IntegerFlag("pending", "N",
                       "Bulk groups that may stay pending (0..63).", "0"),
      cli::SwitchFlag("read",
                      "Waits only until the groups have read shared memory."),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen tma --op=load --rank=2",
      "ptxgen tma --op=load --rank=3 --multicast --cache-hint",
      "ptxgen tma --op=store --rank=2 --emit=ptx-lines",
      "ptxgen tma --op=wait --pending=1 --read",
  };
  command.run = [operations](const ParsedFlags& flags) {
    return cli::RunOperation("tma", operations, flags);
  };
  return command;
}

}  // namespace ptxgen::tools
