#include "lib/gemm/verification.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cublas_v2.h"
#include "lib/gemm/cublas_library.h"
#include "lib/gemm/helper_kernels.h"
#include "ptxgen/gen/fill_kernel.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"

namespace ptxgen::gemm {
namespace {

// cuBLAS, loaded on first use (thread-safe) and kept for the process.
absl::StatusOr<const CublasLibrary*> Cublas() {
  static const absl::StatusOr<CublasLibrary>* const library =
      new absl::StatusOr<CublasLibrary>(LoadCublas(kCublasLibrary));
  if (!library->ok()) return library->status();
  return &**library;
}

}  // namespace

absl::StatusOr<std::vector<uint16_t>> DownloadHalves(
    const runtime::DeviceBuffer& buffer) {
  std::vector<uint16_t> host(buffer.size() / sizeof(uint16_t));
  if (absl::Status copied = buffer.CopyToHost(host.data(), buffer.size());
      !copied.ok()) {
    return copied;
  }
  return host;
}

absl::StatusOr<std::vector<double>> DownloadValues(
    const runtime::DeviceBuffer& buffer, ptx::ScalarType type) {
  std::vector<double> values;
  if (type == ptx::ScalarType::kF32) {
    std::vector<float> words(buffer.size() / sizeof(float));
    if (absl::Status copied = buffer.CopyToHost(words.data(), buffer.size());
        !copied.ok()) {
      return copied;
    }
    values.assign(words.begin(), words.end());
    return values;
  }
  absl::StatusOr<std::vector<uint16_t>> halves = DownloadHalves(buffer);
  if (!halves.ok()) return halves.status();
  for (uint16_t bits : *halves) values.push_back(HalfBitsToFloat(bits, type));
  return values;
}

absl::Status Poison(CUdeviceptr address, int64_t count, CUstream stream) {
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  // 0x7FFF is a NaN in both f16 and bf16.
  return (*driver)->Check(
      (*driver)->cuMemsetD16Async(address, 0x7FFF, static_cast<size_t>(count),
                                  stream),
      "cuMemsetD16Async");
}

absl::Status CublasGemm(const GemmProblem& problem, CUdeviceptr a,
                        CUdeviceptr b, CUdeviceptr c, CUstream stream) {
  absl::StatusOr<const CublasLibrary*> cublas = Cublas();
  if (!cublas.ok()) return cublas.status();
  const cudaDataType type =
      problem.element == ptx::ScalarType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // Column-major view: C^T [n,m] = B [n,k] (A [m,k])^T, i.e. "TN".
  (*cublas)->set_stream((*cublas)->handle,
                        reinterpret_cast<cudaStream_t>(stream));
  const cublasStatus_t status = (*cublas)->gemm_ex(
      (*cublas)->handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(problem.n),
      static_cast<int>(problem.m), static_cast<int>(problem.k), &alpha,
      reinterpret_cast<const void*>(b), type, static_cast<int>(problem.k),
      reinterpret_cast<const void*>(a), type, static_cast<int>(problem.k),
      &beta, reinterpret_cast<void*>(c), type, static_cast<int>(problem.n),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError(absl::StrCat("cublasGemmEx failed with status ",
                                            static_cast<int>(status)));
  }
  return absl::OkStatus();
}

float HalfBitsToFloat(uint16_t bits, ptx::ScalarType element) {
  if (element == ptx::ScalarType::kBF16) {
    const uint32_t word = uint32_t{bits} << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

uint16_t FloatToHalfBits(float value, ptx::ScalarType element) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  if (element == ptx::ScalarType::kBF16) {
    // Round to nearest even on the 16 bits that are dropped.
    return static_cast<uint16_t>((word + 0x7FFF + ((word >> 16) & 1)) >> 16);
  }
  const uint16_t sign = static_cast<uint16_t>((word >> 16) & 0x8000);
  const float magnitude = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7E00;
  if (magnitude >= 65520.0f) return sign | 0x7C00;
  if (magnitude < std::ldexp(1.0f, -14)) {  // subnormal: units of 2^-24
    return sign |
           static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
  }
  int exponent;
  const float fraction = std::frexp(magnitude, &exponent);  // [0.5, 1)
  int mantissa = static_cast<int>(std::nearbyint(std::ldexp(fraction, 11)));
  if (mantissa == 2048) {
    mantissa = 1024;
    ++exponent;
  }
  return sign |
         static_cast<uint16_t>(((exponent + 14) << 10) | (mantissa - 1024));
}

double RelativeErrorByNorm(const std::vector<uint16_t>& result,
                           const std::vector<uint16_t>& reference,
                           ptx::ScalarType element) {
  std::vector<double> wide(reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    wide[i] = HalfBitsToFloat(reference[i], element);
  }
  return RelativeErrorByNorm(result, wide, element);
}

double RelativeErrorByNorm(const std::vector<uint16_t>& result,
                           const std::vector<double>& reference,
                           ptx::ScalarType element) {
  if (result.size() != reference.size()) return INFINITY;
  double difference = 0;
  double norm = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    const double value = HalfBitsToFloat(result[i], element);
    if (!std::isfinite(value)) return INFINITY;
    difference += (value - reference[i]) * (value - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
}

std::vector<double> HostReferenceGemm(const GemmProblem& problem,
                                      const std::vector<uint16_t>& a,
                                      const std::vector<uint16_t>& b) {
  std::vector<double> a_wide(a.size()), b_wide(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    a_wide[i] = HalfBitsToFloat(a[i], problem.element);
  for (size_t i = 0; i < b.size(); ++i)
    b_wide[i] = HalfBitsToFloat(b[i], problem.element);
  std::vector<double> c(static_cast<size_t>(problem.m * problem.n));
  for (int64_t i = 0; i < problem.m; ++i) {
    for (int64_t j = 0; j < problem.n; ++j) {
      double sum = 0;
      const double* row = &a_wide[i * problem.k];
      const double* column = &b_wide[j * problem.k];
      for (int64_t l = 0; l < problem.k; ++l) sum += row[l] * column[l];
      c[i * problem.n + j] = sum;
    }
  }
  return c;
}

double ErrorBound(ptx::ScalarType element) {
  return element == ptx::ScalarType::kBF16 ? 1e-2 : 2e-3;
}

double Tflops(const GemmProblem& problem, double milliseconds) {
  return 2.0 * problem.m * problem.n * problem.k / (milliseconds * 1e9);
}

absl::StatusOr<CublasComparison> CompareWithCublas(const Gemm& gemm) {
  const GemmProblem& problem = gemm.problem();
  absl::StatusOr<RotatingGemmOperands> x =
      RandomRotatingGemmOperands(problem, /*l2_bytes=*/0, 1234, nullptr);
  if (!x.ok()) return x.status();
  const CUdeviceptr a = x->a[0].address(), b = x->b[0].address();
  absl::StatusOr<runtime::DeviceBuffer> reference =
      runtime::DeviceBuffer::Allocate(problem.m * problem.n *
                                      ptx::SizeInBytes(problem.element));
  if (!reference.ok()) return reference.status();
  auto ours = [&] { return gemm.Run(a, b, x->c.address(), nullptr); };
  auto theirs = [&] {
    return CublasGemm(problem, a, b, reference->address(), nullptr);
  };
  for (absl::Status step :
       {Poison(x->c.address(), problem.m * problem.n, nullptr), ours(),
        theirs()}) {
    if (!step.ok()) return step;
  }
  absl::StatusOr<std::vector<uint16_t>> result = DownloadHalves(x->c);
  if (!result.ok()) return result.status();
  absl::StatusOr<std::vector<uint16_t>> expected = DownloadHalves(*reference);
  if (!expected.ok()) return expected.status();
  CublasComparison comparison;
  comparison.relative_error =
      RelativeErrorByNorm(*result, *expected, problem.element);
  comparison.error_bound = ErrorBound(problem.element);
  absl::StatusOr<double> our_ms = MedianMilliseconds(ours, nullptr, 3, 20, 5);
  if (!our_ms.ok()) return our_ms.status();
  absl::StatusOr<double> their_ms =
      MedianMilliseconds(theirs, nullptr, 3, 20, 5);
  if (!their_ms.ok()) return their_ms.status();
  comparison.milliseconds = *our_ms;
  comparison.cublas_milliseconds = *their_ms;
  return comparison;
}

}  // namespace ptxgen::gemm
