#ifndef PTXGEN_PTX_NAMED_BARRIER_H_
#define PTXGEN_PTX_NAMED_BARRIER_H_

// bar.sync on a named barrier: synchronizes a subset of a block's warps
// (one warpgroup, say) where __syncthreads would stall the others.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// bar.sync id, threads: slots "id" (b32, 0..15; 0 is __syncthreads') and
// "threads" (b32, a multiple of 32).
Statement NamedBarrierSync();

// bar.arrive id, threads: counts the calling warps' arrival at the named
// barrier without waiting for it, so that warps that bar.sync on it (with
// the same thread count, the arrivals included) go on once all came.
// Slots as NamedBarrierSync's.
Statement NamedBarrierArrive();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_NAMED_BARRIER_H_
