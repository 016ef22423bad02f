#ifndef PTXGEN_PTX_CONVERT_H_
#define PTXGEN_PTX_CONVERT_H_

// cvt: rounding f32 accumulators (and test data) to the 16- and 8-bit
// output types of a kernel, and widening 16-bit epilogue inputs to f32.
// Generated kernels include no headers (no cuda_fp16.h), so conversions are
// instructions like any other.

#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// Whether cvt rounds f32 to `to` here: f16, bf16, e4m3, e5m2 and s8.
bool CvtRoundsTo(ScalarType to);

// One f32 rounded: slots "result" (b16, write), "value" (f32).
// f16, bf16: cvt.rn.{f16,bf16}.f32.
// e4m3, e5m2: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 with a zero partner
// (PTX has no single-value form): the value in bits 0-7, zero in 8-15, so
// the b16 read as a byte is the element. satfinite (which PTX requires
// there) clamps to the largest finite value; NaN stays NaN.
// s8: cvt.rni.sat.s8.f32, to the nearest integer (ties to even) clamped to
// -128..127 (NaN to 0); the element is the b16's low byte.
absl::StatusOr<Statement> CvtRoundFromF32(ScalarType to);

// Two f32 rounded into one register: slots "packed" (write), "high" and
// "low" (f32). "low" lands in the low half: the element at the lower
// address when the register is stored.
// f16, bf16: cvt.rn.{f16x2,bf16x2}.f32, "packed" b32.
// e4m3, e5m2: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32, "packed" b16.
// s8: each value by cvt.rni.sat.s8.f32, its byte packed into a b16.
absl::StatusOr<Statement> CvtPackFromF32x2(ScalarType to);

// cvt.f32.{f16,bf16}, exact: slots "result" (f32, write), "value" (b16):
// 16-bit inputs of an epilogue (C, a bias) read as f32.
absl::StatusOr<Statement> CvtWidenToF32(ScalarType from);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_CONVERT_H_
