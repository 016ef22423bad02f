#ifndef PTXGEN_GEMM_VERIFICATION_H_
#define PTXGEN_GEMM_VERIFICATION_H_

// Checking and timing GEMMs: random device data, poisoned outputs, a
// cuBLAS reference loaded at run time, norms and host references. Used by
// the tests, the benchmarks, the autotuner and `ptxgen gemm --run`.

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::gemm {

// Fills `count` f16/bf16 values at `address` uniform in [-1, 1), from
// `seed`, with a kernel ptxgen generates (compiled once per process).
absl::Status FillRandom(CUdeviceptr address, int64_t count,
                        ptx::ScalarType element, uint32_t seed,
                        CUstream stream);

// A GEMM on device addresses of A, B and C: a prepared Gemm's Run or
// CublasGemm, bound to a problem and a stream.
using GemmCall = std::function<absl::Status(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c)>;

// Copies of A and B for timing, enough that one pass over them exceeds an
// L2 of `l2_bytes` four times (at most 16 copies), so that no timed call
// finds its inputs left in L2 by the call before; l2_bytes = 0 gives one.
// Copy i is filled by FillRandom with seeds seed + 2i and seed + 2i + 1; C
// is one buffer, not written.
struct RotatingGemmOperands {
  std::vector<runtime::DeviceBuffer> a, b;
  runtime::DeviceBuffer c;

  // `call` on copy `i` modulo the number of copies, into C.
  absl::Status RunOnCopy(size_t i, const GemmCall& call) const;
};
absl::StatusOr<RotatingGemmOperands> RandomRotatingGemmOperands(
    const GemmProblem& problem, int64_t l2_bytes, uint32_t seed, CUstream stream);

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

// Median milliseconds per call of `run` over `repeats` timed batches of
// `calls_per_batch`, after `warmups` untimed calls, with CUDA events.
absl::StatusOr<double> MedianMilliseconds(
    const std::function<absl::Status()>& run, CUstream stream, int warmups,
    int repeats, int calls_per_batch);

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

#endif  // PTXGEN_GEMM_VERIFICATION_H_
