#ifndef PTXGEN_PTX_GLOBAL_FLAG_H_
#define PTXGEN_PTX_GLOBAL_FLAG_H_

// Flags in global memory that hand data from one CTA to another in the same
// grid (stream-K partial sums): the writer publishes with a release store
// after its data, the reader spins on an acquire load before reading it.
// GPU scope: the CTAs may run on any SM. Addresses are 64-bit generic
// addresses of global memory ("address", b64).

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// st.release.gpu.global.b32 [address], value: orders this thread's earlier
// writes (and, through a preceding barrier, its CTA's) before the flag.
Statement StoreReleaseGpu();

// ld.acquire.gpu.global.b32 value, [address]: later reads see what was
// published before the release store that wrote the value read.
Statement LoadAcquireGpu();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_GLOBAL_FLAG_H_
