#ifndef PTXGEN_LIB_GEMM_VERIFICATION_H_
#define PTXGEN_LIB_GEMM_VERIFICATION_H_

// Checking GEMMs: poisoned outputs, a cuBLAS reference loaded at run time,
// norms and host references, beside timing.h's random inputs and medians.
// Test and benchmark support (and `ptxgen gemm --run`), not part of the
// library: //lib/gemm:verification.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "lib/gemm/timing.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::gemm {

// The 16-bit values of a device buffer, on the host.
absl::StatusOr<std::vector<uint16_t>> DownloadHalves(
    const runtime::DeviceBuffer& buffer);

// The values of a device buffer of f32 or of 16-bit floats of `type`, as
// doubles on the host.
absl::StatusOr<std::vector<double>> DownloadValues(
    const runtime::DeviceBuffer& buffer, ptx::ScalarType type);

// Sets every 16-bit value to a NaN, so an element the kernel fails to write
// cannot pass for a result.
absl::Status Poison(CUdeviceptr address, int64_t count, CUstream stream);

// cuBLAS, dlopen'ed (libcublas.so.13): C = A * B^T in the layout of
// GemmProblem, f32 compute. Unavailable when the library is missing.
absl::Status CublasGemm(const GemmProblem& problem, CUdeviceptr a,
                        CUdeviceptr b, CUdeviceptr c, CUstream stream);

// 16-bit float bits <-> float, on the host.
float HalfBitsToFloat(uint16_t bits, ptx::ScalarType element);
uint16_t FloatToHalfBits(float value, ptx::ScalarType element);

// ||result - reference|| / ||reference|| over 16-bit values; NaN or
// infinity anywhere in `result` gives +infinity.
double RelativeErrorByNorm(const std::vector<uint16_t>& result,
                           const std::vector<uint16_t>& reference,
                           ptx::ScalarType element);

// C = A * B^T in float64 on the host, from 16-bit inputs.
std::vector<double> HostReferenceGemm(const GemmProblem& problem,
                                      const std::vector<uint16_t>& a,
                                      const std::vector<uint16_t>& b);
double RelativeErrorByNorm(const std::vector<uint16_t>& result,
                           const std::vector<double>& reference,
                           ptx::ScalarType element);

// The error a correct kernel stays under: 16-bit outputs round at 2^-11
// (f16) or 2^-8 (bf16) relative, with margin for summation order.
double ErrorBound(ptx::ScalarType element);

// 2mnk floating-point operations in `milliseconds`, in TFLOP/s.
double Tflops(const GemmProblem& problem, double milliseconds);

// `gemm` checked and timed beside cuBLAS on random inputs: one run into a
// poisoned C compared with cuBLAS's C by norm, then the median of 20
// batches of 5 calls (after 3 warm-ups) of each.
struct CublasComparison {
  double relative_error = 0;
  double error_bound = 0;
  double milliseconds = 0;
  double cublas_milliseconds = 0;
  bool passed() const { return relative_error < error_bound; }
};
absl::StatusOr<CublasComparison> CompareWithCublas(const Gemm& gemm);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_VERIFICATION_H_
