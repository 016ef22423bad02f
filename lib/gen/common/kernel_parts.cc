#include "lib/gen/common/kernel_parts.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/named_barrier.h"

namespace ptxgen::gen {
namespace {

// One arrival per consumer warp on the stage's empty barrier, in every CTA
// of the cluster (their producers multicast into this CTA's stage too).
// Relaxed: the consumers only read the stage, there is nothing to publish.
std::string ReleaseStage(KernelBuilder& builder, int cluster_ctas) {
  if (cluster_ctas == 1) {
    return absl::StrCat(
        "  if (lane == 0) ",
        builder.ops().Call("mbarrier_arrive",
                           ptx::MbarrierArrive(ptx::MbarrierScope::kCta),
                           {{"mbarrier", "empty_barrier"}}));
  }
  return absl::StrCat(
      "  if (lane < plan::kClusterM) {\n", "    unsigned peer_empty;\n    ",
      builder.ops().Call("mapa_shared_cluster", ptx::MapaSharedCluster(),
                         {{"mapped", "peer_empty"},
                          {"address", "empty_barrier"},
                          {"cta_rank", "(unsigned)lane"}}),
      "\n    ",
      builder.ops().Call(
          "mbarrier_arrive_cluster",
          ptx::MbarrierArrive(ptx::MbarrierScope::kClusterRelaxed),
          {{"mbarrier", "peer_empty"}}),
      "\n  }");
}

}  // namespace

int RoundUp(int value, int multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

int LaunchRegistersPerThread(int threads) {
  return kRegistersPerSm / threads / 8 * 8;
}

int ConsumerRegisterShare(int consumers, int producer_registers) {
  // setmaxnreg shares out what the launch gave the block, no more, not the
  // SM's whole file: asking past it hangs the warpgroup that asks.
  const int threads = kThreadsPerWarpgroup * (consumers + 1);
  const int pool = LaunchRegistersPerThread(threads) * threads;
  const int share = (pool - kThreadsPerWarpgroup * producer_registers) /
                    (kThreadsPerWarpgroup * consumers);
  return share / 8 * 8;
}

ptx::Swizzle SwizzleFor(int contiguous_bytes) {
  for (ptx::Swizzle swizzle :
       {ptx::Swizzle::k128B, ptx::Swizzle::k64B, ptx::Swizzle::k32B}) {
    if (contiguous_bytes % ptx::SwizzleBytes(swizzle) == 0) return swizzle;
  }
  return ptx::Swizzle::kNone;
}

std::string DescriptorFields(KernelBuilder& builder,
                             const ptx::SharedTile& tile) {
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  if (!layout.ok()) {
    builder.Check(layout.status());
    return "0ull";
  }
  absl::StatusOr<uint64_t> fields =
      ptx::EncodeMatrixDescriptor(layout->descriptor);
  if (!fields.ok()) {
    builder.Check(fields.status());
    return "0ull";
  }
  return absl::StrFormat("0x%016xull", *fields);
}

std::string MatrixDescriptorFunction() {
  return absl::StrCat(
      "// A wgmma matrix descriptor: a layout's constant fields with the "
      "shared\n"
      "// address of the operand it describes.\n"
      "__device__ __forceinline__ unsigned long long matrix_descriptor(\n"
      "    unsigned long long fields, unsigned address) {\n"
      "  return fields | ",
      ptx::DescriptorAddressFieldExpression("address"),
      ";\n"
      "}\n");
}

void DefineNamedBarrierSync(KernelBuilder& builder) {
  builder.ops().Define("named_barrier_sync", ptx::NamedBarrierSync());
}

std::string MmaTurnsPart(KernelBuilder& builder) {
  DefineNamedBarrierSync(builder);
  builder.ops().Define("named_barrier_arrive", ptx::NamedBarrierArrive());
  return builder.Fill("mma_turns.cu", {});
}

void DefineRingBarriers(KernelBuilder& builder) {
  builder.ops().Define("mbarrier_init", ptx::MbarrierInit());
  builder.ops().Define("fence_mbarrier_init", ptx::FenceMbarrierInit());
  builder.ops().Define("mbarrier_wait", ptx::MbarrierTryWaitParity());
  builder.ops().Define("mbarrier_arrive_expect_tx",
                       ptx::MbarrierArriveExpectTx());
}

std::string PipelinePart(KernelBuilder& builder, int cluster_ctas) {
  DefineRingBarriers(builder);
  return builder.Fill("pipeline.cu",
                      {{"RELEASE_STAGE", ReleaseStage(builder, cluster_ctas)}});
}

FragmentRows RowsOfFragment(KernelBuilder& builder,
                            const ptx::AccumulatorFragment& fragment,
                            absl::string_view user) {
  FragmentRows rows;
  std::vector<int> distinct;
  for (int i = 0; i < fragment.registers(); ++i) {
    absl::StatusOr<ptx::FragmentCoordinate> at = fragment.Coordinate(0, i);
    if (!at.ok()) {
      builder.Check(at.status());
      return rows;
    }
    auto found = std::find(distinct.begin(), distinct.end(), at->row);
    if (found == distinct.end()) found = distinct.insert(found, at->row);
    rows.row_of_register.push_back(static_cast<int>(found - distinct.begin()));
  }
  if (distinct.size() != 2 || distinct[0] != 0) {
    builder.Check(absl::InternalError(absl::StrCat(
        user,
        " expects each thread to hold two rows of a 64-row slice, the first "
        "at its register 0")));
    return rows;
  }
  rows.step = distinct[1];
  return rows;
}

std::string SetMaxRegisters(KernelBuilder& builder,
                            ptx::RegisterAdjustment adjustment, int count) {
  const bool increase = adjustment == ptx::RegisterAdjustment::kIncrease;
  return absl::StrCat(
      "    ",
      builder.ops().Call(
          absl::StrCat("setmaxnreg_", increase ? "inc_" : "dec_", count),
          ptx::SetMaxNReg(adjustment, count), {}));
}

}  // namespace ptxgen::gen
