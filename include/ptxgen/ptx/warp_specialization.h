#ifndef PTXGEN_PTX_WARP_SPECIALIZATION_H_
#define PTXGEN_PTX_WARP_SPECIALIZATION_H_

// The instructions a warp-specialized, clustered Hopper kernel is built from
// besides wgmma, TMA and mbarrier: electing one producer lane, moving
// registers between producer and consumer warpgroups, cluster-wide
// barriers, addressing a peer CTA's shared memory, and the stmatrix
// epilogue.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// elect.sync over the full warp: "elected" (predicate, written) is true in
// exactly one lane. Every lane of the warp must execute it.
Statement ElectSync();

// setmaxnreg: a warpgroup gives registers back (producers) or claims them
// (consumers). Every warp of the warpgroup must execute it.
enum class RegisterAdjustment { kIncrease, kDecrease };

// Legal per-thread counts: multiples of 8 in 24..256.
inline constexpr int kMinMaxNReg = 24;
inline constexpr int kMaxMaxNReg = 256;
absl::Status ValidateMaxNReg(int count);

// setmaxnreg.inc or .dec to `count` registers per thread.
absl::StatusOr<Statement> SetMaxNReg(RegisterAdjustment adjustment, int count);

// The memory ordering of barrier.cluster.arrive. Release (the default
// semantics, written out) publishes this thread's writes to the cluster;
// relaxed does not, and suits a barrier whose only purpose is ordering
// already-fenced work such as fence.mbarrier_init.
enum class ClusterArriveOrdering { kRelease, kRelaxed };

// barrier.cluster.arrive / wait (.aligned: every thread of a warp executes
// the same one). The wait always acquires; ptxas accepts no other ordering.
Statement BarrierClusterArrive(ClusterArriveOrdering ordering);
Statement BarrierClusterWait();

// stmatrix: 8x8 b16 matrices from registers to shared memory.
struct StMatrix {
  int matrices = 4;  // 8x8 b16 matrices per instruction: 1, 2 or 4
  bool transpose = false;
};

// stmatrix.sync.aligned.m8n8: the warp stores 8x8 b16 matrices to shared
// memory. Slots: "address" (b32 shared address of this lane's row),
// "values" (b32 x matrices, two b16 each).
absl::StatusOr<Statement> StMatrixSharedB16(const StMatrix& stmatrix);

// This CTA's rank in its cluster. Slot "rank" (b32, written).
Statement ClusterCtaRank();

// mapa: the shared::cluster address of "address" (b32, a shared::cta
// address in this CTA) in the CTA of rank "cta_rank" (b32). Slot "mapped"
// (b32, written).
Statement MapaSharedCluster();

// ld.shared::cluster.v4.f32: four floats from "address" (b32, a
// shared::cluster address from MapaSharedCluster(), 16-byte aligned), in a
// peer CTA's shared memory or this one's. Slot "values" (f32 x 4, written).
Statement LoadSharedClusterF32x4();

// ld.shared.v4.b32: 16 bytes from "address" (b32, a shared::cta address,
// 16-byte aligned), such as a staged row of a tile that threads copy on to
// global memory. Slot "values" (b32 x 4, written).
Statement LoadSharedB32x4();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_WARP_SPECIALIZATION_H_
