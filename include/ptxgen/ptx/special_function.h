#ifndef PTXGEN_PTX_SPECIAL_FUNCTION_H_
#define PTXGEN_PTX_SPECIAL_FUNCTION_H_

// The SM's special-function unit: one instruction where the math library's
// accurate functions take a few dozen, for epilogues whose output type
// rounds away the difference and for attention's softmax, whose
// probabilities are rounded to 16 bits before they are used.

#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// tanh.approx.f32 result, value: slots "result" (f32, write) and "value"
// (f32). PTX documents a maximum relative error of about 2^-11 (the
// rounding step of f16; bf16's is 2^-8).
Statement TanhApproxF32();

// ex2.approx.ftz.f32 result, value: 2^value, slots as TanhApproxF32's.
// Subnormal results flush to zero (a probability below 2^-126 of a row's
// largest weighs nothing in its sum); 2^-inf is 0. PTX documents a maximum
// relative error of 2^-22.
Statement Ex2ApproxFtzF32();

// lg2.approx.ftz.f32 result, value: log2(value), slots as TanhApproxF32's;
// log2(0) is -inf. PTX documents a maximum absolute error of 2^-22 near 1.
Statement Lg2ApproxFtzF32();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_SPECIAL_FUNCTION_H_
