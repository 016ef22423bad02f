// `ptxgen mbarrier`: the shared-memory barriers TMA and warp-specialized
// pipelines synchronize on.
#include <vector>

#include "ptxgen/ptx/mbarrier.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

ptx::Statement ArriveCta() {
  return ptx::MbarrierArrive(ptx::MbarrierScope::kCta);
}

ptx::Statement ArriveCluster() {
  return ptx::MbarrierArrive(ptx::MbarrierScope::kCluster);
}

ptx::Statement ArriveClusterRelaxed() {
  return ptx::MbarrierArrive(ptx::MbarrierScope::kClusterRelaxed);
}

ptx::Statement WaitCta() {
  return ptx::MbarrierTryWaitParity(ptx::MbarrierWaitScope::kCta);
}

ptx::Statement WaitCluster() {
  return ptx::MbarrierTryWaitParity(ptx::MbarrierWaitScope::kCluster);
}

std::vector<cli::Operation> MbarrierOperations() {
  return {
      {"init",
       "mbarrier.init: sets the arrival count of each phase",
       {},
       cli::Fixed(ptx::MbarrierInit)},
      {"arrive",
       "mbarrier.arrive on this CTA's barrier",
       {},
       cli::Fixed(ArriveCta)},
      {"arrive-cluster",
       "mbarrier.arrive.release.cluster on a peer CTA's barrier (an address "
       "from mapa)",
       {},
       cli::Fixed(ArriveCluster)},
      {"arrive-cluster-relaxed",
       "mbarrier.arrive.relaxed.cluster on a peer CTA's barrier: signals "
       "without ordering this thread's memory accesses",
       {},
       cli::Fixed(ArriveClusterRelaxed)},
      {"expect-tx",
       "mbarrier.arrive.expect_tx: one arrival that also expects tx_bytes "
       "of TMA data",
       {},
       cli::Fixed(ptx::MbarrierArriveExpectTx)},
      {"wait",
       "a loop on mbarrier.try_wait.parity until the phase completes",
       {},
       cli::Fixed(WaitCta)},
      {"wait-cluster",
       "the same loop acquiring at cluster scope: sees what peer CTAs "
       "released by arriving",
       {},
       cli::Fixed(WaitCluster)},
      {"inval",
       "mbarrier.inval: before the memory is reused",
       {},
       cli::Fixed(ptx::MbarrierInval)},
      {"fence-init",
       "fence.mbarrier_init.release.cluster: publishes mbarrier.init to TMA "
       "and the cluster",
       {},
       cli::Fixed(ptx::FenceMbarrierInit)},
  };
}

}  // namespace

cli::Subcommand MbarrierSubcommand() {
  const std::vector<cli::Operation> operations = MbarrierOperations();
  cli::Subcommand command;
  command.name = "mbarrier";
  command.summary =
      "mbarrier: init, arrive, expect-tx, parity wait, inval, init fence";
  command.description =
      "Prints one mbarrier statement. Operands: mbarrier (the barrier's\n"
      "32-bit shared address), count (init), tx_bytes (expect-tx), phase\n"
      "(wait: the parity, 0 or 1).";
  command.flags = {
      cli::OperationFlag(operations),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen mbarrier --op=init",
      "ptxgen mbarrier --op=expect-tx --emit=ptx-lines",
      "ptxgen mbarrier --op=wait",
  };
  command.run = [operations](const cli::ParsedFlags& flags) {
    return cli::RunOperation("mbarrier", operations, flags);
  };
  return command;
}

}  // namespace ptxgen::tools
