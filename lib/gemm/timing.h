#ifndef PTXGEN_LIB_GEMM_TIMING_H_
#define PTXGEN_LIB_GEMM_TIMING_H_

// Timing GEMMs on the device: random inputs, operands rotated past L2, and
// CUDA-event medians. The autotuner's (so part of the library); the
// benchmarks and tests use it too.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::gemm {

// Fills `count` elements of `element` at `address` from `seed` with a
// kernel ptxgen generates (compiled once, loaded once per context), as
// gen::RandomFillSource describes: the floats (f16, bf16, e4m3, e5m2,
// f32, tf32) uniform in [-scale, scale), s8 integers in [-scale, scale],
// u8 in [0, scale]. Refused (InvalidArgument): s32, a negative count, and
// a scale that is negative, not finite, or past what the type holds:
// 65504 for f16, bf16's largest finite value, 127 for s8, 255 for u8
// (e4m3 and e5m2 saturate, so any finite scale).
absl::Status FillRandom(CUdeviceptr address, int64_t count,
                        ptx::ScalarType element, uint32_t seed, float scale,
                        CUstream stream);

// FillRandom with DefaultFillScale(element).
absl::Status FillRandom(CUdeviceptr address, int64_t count,
                        ptx::ScalarType element, uint32_t seed,
                        CUstream stream);

// The scale FillRandom uses when given none: 1 for the floats, [-1, 1);
// 8 for s8 and u8, [-8, 8] and [0, 8]: with products of at most 64 an s32
// sum cannot overflow below k = 2^25, so integer GEMMs match cuBLAS and a
// float64 host reference exactly.
float DefaultFillScale(ptx::ScalarType element);

// A GEMM on device addresses of A, B and C: a prepared Gemm's Run or
// CublasGemm, bound to a problem and a stream.
using GemmCall =
    std::function<absl::Status(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c)>;

// Copies of A and B for timing, enough that one pass over them exceeds an
// L2 of `l2_bytes` four times (at most 16 copies), so that no timed call
// finds its inputs left in L2 by the call before; l2_bytes = 0 gives one.
// Each buffer holds its operand as the problem stores it (StoredSpans).
// Copy i is filled by FillRandom with seeds seed + 2i and seed + 2i + 1;
// `c` is one buffer, the output (D). The problem's C input (when it reads
// C) and bias are one buffer each, beside it.
struct RotatingGemmOperands {
  std::vector<runtime::DeviceBuffer> a, b;
  runtime::DeviceBuffer c;
  std::optional<runtime::DeviceBuffer> c_input, bias;
  // A scaled problem's per-tensor scales and the amax of D, 16 bytes apart
  // (cuBLASLt's fp8 kernels want them 16-byte aligned): 0.5 for A, 2.0 for
  // B, a product of 1 that keeps D's range while a scale left out would
  // show; 1.0 for an fp8 D; the amax after them, written by each run.
  std::optional<runtime::DeviceBuffer> scalars;
  // A block-scaled problem's scales (StoredSpans' counts), all 1: its D is
  // then the product the per-tensor scales (0.5 x 2) give, which a peer
  // scaling per tensor computes too.
  std::optional<runtime::DeviceBuffer> block_scales_a, block_scales_b;
  CUdeviceptr ScaleA() const { return Scalar(0); }
  CUdeviceptr ScaleB() const { return Scalar(1); }
  CUdeviceptr ScaleD() const { return Scalar(2); }
  CUdeviceptr AmaxD() const { return Scalar(3); }

  // `call` on copy `i` modulo the number of copies, into `c`.
  absl::Status RunOnCopy(size_t i, const GemmCall& call) const;
  // Copy `i` as a Gemm runs on it: D at `c`, C, the bias and the scales
  // where the problem has them.
  GemmOperands OperandsOfCopy(size_t i) const;

 private:
  CUdeviceptr Scalar(int index) const {
    return scalars ? scalars->address() + 16 * index : 0;
  }
};
absl::StatusOr<RotatingGemmOperands> RandomRotatingGemmOperands(
    const GemmProblem& problem, int64_t l2_bytes, uint32_t seed,
    CUstream stream);

// Median milliseconds per call of `run` over `repeats` timed batches of
// `calls_per_batch`, after `warmups` untimed calls, with CUDA events.
absl::StatusOr<double> MedianMilliseconds(
    const std::function<absl::Status()>& run, CUstream stream, int warmups,
    int repeats, int calls_per_batch);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_TIMING_H_
