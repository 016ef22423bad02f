#ifndef PTXGEN_PTX_MBARRIER_H_
#define PTXGEN_PTX_MBARRIER_H_

// mbarrier: 64-bit shared-memory barriers that count thread arrivals and
// TMA transaction bytes. A phase completes when its arrivals and its
// expected bytes are all in; the phase bit then flips.
// Every statement takes the barrier's 32-bit shared address ("mbarrier").
// None can be illegal: they have no parameters to get wrong.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// An mbarrier object's size, which is also its alignment.
inline constexpr int kMbarrierBytes = 8;

// mbarrier.init: sets the expected arrival count ("count", b32) of each
// phase. Follow it with FenceMbarrierInit() before TMA or peer CTAs use it.
Statement MbarrierInit();

// Whose barrier an arrive targets.
enum class MbarrierScope {
  kCta,      // this CTA's barrier
  kCluster,  // a peer CTA's barrier, at an address from MapaSharedCluster()
  // A peer CTA's barrier, relaxed: the arrival orders none of this thread's
  // memory accesses. Enough to say "finished reading" (a consumer releasing
  // a stage), and cheaper than a cluster-scope release.
  kClusterRelaxed,
};

// mbarrier.arrive: one arrival, releasing this thread's prior writes. The
// returned state is discarded (`_`): waiters use the phase parity instead.
Statement MbarrierArrive(MbarrierScope scope);

// mbarrier.arrive.expect_tx: one arrival that also adds "tx_bytes" (b32)
// to the transaction count the current phase waits for (the bytes of the
// TMA loads that signal this barrier).
Statement MbarrierArriveExpectTx();

// Whose writes a completed wait makes visible to the waiting thread.
enum class MbarrierWaitScope {
  kCta,      // this CTA's (and TMA's): the default acquire
  kCluster,  // also peer CTAs' that arrived with release at cluster scope
};

// A complete wait: loops on mbarrier.try_wait.parity until the phase with
// parity "phase" (b32, 0 or 1) has completed. Its labels live in its own
// { } scope, so several copies may sit in one function.
Statement MbarrierTryWaitParity(
    MbarrierWaitScope scope = MbarrierWaitScope::kCta);

// mbarrier.inval: required before the barrier's memory is used for
// anything else.
Statement MbarrierInval();

// fence.mbarrier_init.release.cluster: makes prior mbarrier.init visible to
// the async proxy and to the other CTAs of the cluster.
Statement FenceMbarrierInit();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_MBARRIER_H_
