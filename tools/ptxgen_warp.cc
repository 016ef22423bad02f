// `ptxgen warp`: the instructions of warp-specialized, clustered kernels
// besides wgmma, TMA and mbarrier.
#include <vector>

#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/global_flag.h"
#include "ptxgen/ptx/named_barrier.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

using cli::ParsedFlags;

absl::StatusOr<ptx::Statement> SetMaxNReg(const ParsedFlags& flags) {
  if (flags.Has("inc") == flags.Has("dec")) {
    return cli::UsageError(
        "--op=setmaxnreg needs exactly one of --inc and --dec");
  }
  if (absl::Status count =
          cli::RequireFlag(flags, "count", "with --op=setmaxnreg");
      !count.ok()) {
    return count;
  }
  return ptx::SetMaxNReg(flags.Has("inc") ? ptx::RegisterAdjustment::kIncrease
                                          : ptx::RegisterAdjustment::kDecrease,
                         flags.Integer("count"));
}

std::vector<cli::Operation> WarpOperations() {
  return {
      {"elect",
       "elect.sync: exactly one lane of the warp gets elected=1",
       {},
       cli::Fixed(ptx::ElectSync)},
      {"setmaxnreg",
       absl::StrCat("setmaxnreg: the warpgroup gives registers back (--dec) "
                    "or claims them (--inc); --count is a multiple of 8 in ",
                    ptx::kMinMaxNReg, "..", ptx::kMaxMaxNReg),
       {"inc", "dec", "count"},
       SetMaxNReg},
      {"cluster-arrive",
       "barrier.cluster.arrive (release; --relaxed publishes no writes)",
       {"relaxed"},
       [](const ParsedFlags& flags) -> absl::StatusOr<ptx::Statement> {
         return ptx::BarrierClusterArrive(
             flags.Has("relaxed") ? ptx::ClusterArriveOrdering::kRelaxed
                                  : ptx::ClusterArriveOrdering::kRelease);
       }},
      {"cluster-wait",
       "barrier.cluster.wait (acquire)",
       {},
       cli::Fixed(ptx::BarrierClusterWait)},
      {"stmatrix",
       "stmatrix.sync.aligned.m8n8: the warp stores 8x8 b16 matrices to "
       "shared memory",
       {"matrices", "trans"},
       [](const ParsedFlags& flags) {
         return ptx::StMatrixSharedB16(
             {flags.Integer("matrices"), flags.Has("trans")});
       }},
      {"cluster-rank",
       "this CTA's rank in its cluster (%cluster_ctarank)",
       {},
       cli::Fixed(ptx::ClusterCtaRank)},
      {"mapa",
       "mapa.shared::cluster: a shared address in the CTA of rank cta_rank",
       {},
       cli::Fixed(ptx::MapaSharedCluster)},
      {"ld-cluster",
       "ld.shared::cluster.v4.f32: four floats at a shared::cluster address "
       "(from mapa), in a peer CTA or this one",
       {},
       cli::Fixed(ptx::LoadSharedClusterF32x4)},
      {"bar-sync",
       "bar.sync on a named barrier (id 0..15, threads a multiple of 32)",
       {},
       cli::Fixed(ptx::NamedBarrierSync)},
      {"flag-release",
       "st.release.gpu.global.b32: raises a flag in global memory after this "
       "thread's (and, after a barrier, its CTA's) writes",
       {},
       cli::Fixed(ptx::StoreReleaseGpu)},
      {"flag-acquire",
       "ld.acquire.gpu.global.b32: reads a flag; later reads see what was "
       "written before it was raised",
       {},
       cli::Fixed(ptx::LoadAcquireGpu)},
  };
}

}  // namespace

cli::Subcommand WarpSubcommand() {
  const std::vector<cli::Operation> operations = WarpOperations();
  cli::Subcommand command;
  command.name = "warp";
  command.summary =
      "warp specialization: elect, setmaxnreg, cluster "
      "barriers, stmatrix, cluster rank, mapa, named barriers, global flags";
  command.description =
      "Prints one of the statements a warp-specialized, clustered kernel is\n"
      "built from besides wgmma, TMA and mbarrier. Operands: elected (elect),\n"
      "address and values (stmatrix), rank (cluster-rank), mapped, address\n"
      "and cta_rank (mapa), id and threads (bar-sync), address and value\n"
      "(flag-release, flag-acquire); shared addresses are 32-bit, global\n"
      "ones 64-bit.";
  command.flags = {
      cli::OperationFlag(operations),
      cli::SwitchFlag("inc", "setmaxnreg.inc: claim registers."),
      cli::SwitchFlag("dec", "setmaxnreg.dec: give registers back."),
      cli::IntegerFlag(
          "count", "N",
          absl::StrCat("The per-thread register count (multiples "
                       "of 8 in ",
                       ptx::kMinMaxNReg, "..", ptx::kMaxMaxNReg, ")."),
          ""),
      cli::SwitchFlag("relaxed", "A relaxed cluster arrive."),
      cli::IntegerFlag("matrices", "1|2|4",
                       "8x8 matrices per stmatrix instruction.", "4"),
      cli::SwitchFlag("trans", "stmatrix stores the matrices transposed."),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen warp --op=elect",
      "ptxgen warp --op=setmaxnreg --inc --count=232",
      "ptxgen warp --op=setmaxnreg --dec --count=40 --emit=resources",
      "ptxgen warp --op=stmatrix --matrices=4 --trans",
      "ptxgen warp --op=mapa --emit=ptx-lines",
  };
  command.run = [operations](const ParsedFlags& flags) {
    return cli::RunOperation("warp", operations, flags);
  };
  return command;
}

}  // namespace ptxgen::tools
