#ifndef PTXGEN_PTX_REDUCTION_H_
#define PTXGEN_PTX_REDUCTION_H_

// Maxima of unsigned 32-bit values across a warp and into global memory:
// the amax of D, whose f32 magnitudes (never negative) order as their bits
// do when read as unsigned integers.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// redux.sync.max.u32 result, value, 0xffffffff: every lane of the full
// warp gets the largest of the warp's values.
Statement ReduxSyncMaxU32();

// red.relaxed.gpu.global.max.u32 [address], value: raises the word at
// `address` (b64, global) to `value` where it is larger; GPU scope, for
// CTAs on any SM.
Statement RedGlobalMaxU32();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_REDUCTION_H_
