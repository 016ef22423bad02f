#ifndef PTXGEN_PTX_SPECIAL_FUNCTION_H_
#define PTXGEN_PTX_SPECIAL_FUNCTION_H_

// The SM's special-function unit: one instruction where the math library's
// accurate tanhf takes a few dozen, for epilogues whose output type rounds
// away the difference.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// tanh.approx.f32 result, value: slots "result" (f32, write) and "value"
// (f32). PTX documents a maximum relative error of about 2^-11 (the
// rounding step of f16; bf16's is 2^-8).
Statement TanhApproxF32();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_SPECIAL_FUNCTION_H_
