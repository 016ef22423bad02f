#ifndef PTXGEN_PTX_NAMED_BARRIER_H_
#define PTXGEN_PTX_NAMED_BARRIER_H_

// bar.sync on a named barrier: synchronizes a subset of a block's warps
// (one warpgroup, say) where __syncthreads would stall the others.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// bar.sync id, threads: slots "id" (b32, 0..15; 0 is __syncthreads') and
// "threads" (b32, a multiple of 32).
Statement NamedBarrierSync();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_NAMED_BARRIER_H_
