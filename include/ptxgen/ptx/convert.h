#ifndef PTXGEN_PTX_CONVERT_H_
#define PTXGEN_PTX_CONVERT_H_

// cvt: rounding f32 accumulators to the 16-bit output types of a kernel,
// and widening 16-bit epilogue inputs to f32.
// Generated kernels include no headers (no cuda_fp16.h), so conversions are
// instructions like any other.

#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// Whether cvt.rn rounds f32 to `to` here: f16 and bf16.
bool CvtRoundsTo(ScalarType to);

// cvt.rn.{f16,bf16}.f32: slots "result" (b16, write), "value" (f32).
absl::StatusOr<Statement> CvtRoundFromF32(ScalarType to);

// cvt.rn.{f16x2,bf16x2}.f32: slots "packed" (b32, write), "high" and "low"
// (f32). "low" lands in bits 0-15: the element at the lower address when the
// b32 is stored.
absl::StatusOr<Statement> CvtPackFromF32x2(ScalarType to);

// cvt.f32.{f16,bf16}, exact: slots "result" (f32, write), "value" (b16):
// 16-bit inputs of an epilogue (C, a bias) read as f32.
absl::StatusOr<Statement> CvtWidenToF32(ScalarType from);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_CONVERT_H_
