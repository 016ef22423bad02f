#ifndef PTXGEN_LIB_TESTING_VERIFICATION_H_
#define PTXGEN_LIB_TESTING_VERIFICATION_H_

// Checking GEMMs: poisoned outputs, a cuBLAS reference loaded at run time,
// norms and host references, beside timing.h's random inputs and medians.
// Test and benchmark support (and `ptxgen gemm --run`), not part of the
// library: //lib/testing:verification.

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

// The elements of a device buffer of `type`, as doubles on the host, each
// exactly: floats decoded (tf32 as the f32 it is stored as), s8, u8 and s32
// as integers. A trailing partial element is left out.
absl::StatusOr<std::vector<double>> DownloadValues(
    const runtime::DeviceBuffer& buffer, ptx::ScalarType type);

// Sets every 16-bit value to a NaN, so an element the kernel fails to write
// cannot pass for a result. PoisonValues(address, count, kF16, stream).
absl::Status Poison(CUdeviceptr address, int64_t count, CUstream stream);

// Sets `count` elements of `type` at `address` (aligned to the element) in
// stream order to a value no correct kernel is expected to leave there:
// for the floats a NaN: 0x7F for e4m3 and e5m2, 0x7FFF for f16 and bf16,
// 0xFFFFFFFF for f32 and tf32. Integers have no NaN, so for them an
// ordinary value that is only unlikely: 0x7F (127) for s8 and u8, which a
// kernel saturating to s8 does write; 0x7F7F7F7F for s32, which a sum of
// DefaultFillScale products (at most 64) reaches only past k = 33 million.
// Catching an unwritten integer thus takes comparing with a reference.
// A negative count or an unknown type is refused (InvalidArgument).
absl::Status PoisonValues(CUdeviceptr address, int64_t count,
                          ptx::ScalarType type, CUstream stream);

// cuBLAS, dlopen'ed (libcublas.so.13): C = A * B^T in the layout of
// GemmProblem, f32 compute, for f16 and bf16 (refused: other inputs).
// Unavailable when the library is missing.
absl::Status CublasGemm(const GemmProblem& problem, CUdeviceptr a,
                        CUdeviceptr b, CUdeviceptr c, CUstream stream);

// 16-bit float bits <-> float, on the host.
float HalfBitsToFloat(uint16_t bits, ptx::ScalarType element);
uint16_t FloatToHalfBits(float value, ptx::ScalarType element);

// 8-bit float bits (`type` e4m3 or e5m2) -> their exact value, on the host.
// e4m3: exponent bias 7, no infinity, S.1111.111 NaN, largest 448;
// e5m2: bias 15, infinities and NaNs as IEEE, largest 57344. Any other
// type gives NaN.
double Fp8BitsToDouble(uint8_t bits, ptx::ScalarType type);
// A value rounded to e4m3 or e5m2 as cvt.rn.satfinite rounds it: to
// nearest even, then past the largest finite value (infinity included)
// that value, signed; NaN gives sign | 0x7F (a NaN in both). Any other
// type gives 0x7F.
uint8_t DoubleToFp8Bits(double value, ptx::ScalarType type);

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

// A float64 host reference for inputs of any type (A and B as
// DownloadValues gives them, laid out as StoredSpans says): each of the
// problem's `batch` products alpha * op(A) * op(B), honouring its majors,
// lda, ldb and batch strides, batch after batch of [m, n] row-major;
// without beta * C, the bias or the activation. Negative sizes, or inputs
// shorter than their spans, give an empty result.
std::vector<double> HostReferenceGemm(const GemmProblem& problem,
                                      const std::vector<double>& a,
                                      const std::vector<double>& b);
// ||result - reference|| / ||reference|| (||result - reference|| where the
// reference is all zero); infinite where `result` holds a NaN or an
// infinity or the sizes differ.
double RelativeErrorByNorm(const std::vector<double>& result,
                           const std::vector<double>& reference);

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

#endif  // PTXGEN_LIB_TESTING_VERIFICATION_H_
