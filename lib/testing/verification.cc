#include "lib/testing/verification.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cublas_v2.h"
#include "lib/gemm/helper_kernels.h"
#include "lib/testing/cublas_library.h"
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

namespace {

// The elements of `buffer` as `Element`s, each made a double by `decode`.
template <typename Element, typename Decode>
absl::StatusOr<std::vector<double>> DownloadAs(
    const runtime::DeviceBuffer& buffer, Decode decode) {
  std::vector<Element> host(buffer.size() / sizeof(Element));
  if (absl::Status copied =
          buffer.CopyToHost(host.data(), host.size() * sizeof(Element));
      !copied.ok()) {
    return copied;
  }
  std::vector<double> values(host.size());
  for (size_t i = 0; i < host.size(); ++i) values[i] = decode(host[i]);
  return values;
}

}  // namespace

absl::StatusOr<std::vector<double>> DownloadValues(
    const runtime::DeviceBuffer& buffer, ptx::ScalarType type) {
  using ptx::ScalarType;
  auto exact = [](auto value) { return static_cast<double>(value); };
  switch (type) {
    case ScalarType::kF16:
    case ScalarType::kBF16:
      return DownloadAs<uint16_t>(buffer, [type](uint16_t bits) {
        return static_cast<double>(HalfBitsToFloat(bits, type));
      });
    case ScalarType::kE4M3:
    case ScalarType::kE5M2:
      return DownloadAs<uint8_t>(
          buffer, [type](uint8_t bits) { return Fp8BitsToDouble(bits, type); });
    case ScalarType::kF32:
    case ScalarType::kTF32:
      return DownloadAs<float>(buffer, exact);
    case ScalarType::kS8:
      return DownloadAs<int8_t>(buffer, exact);
    case ScalarType::kU8:
      return DownloadAs<uint8_t>(buffer, exact);
    case ScalarType::kS32:
      return DownloadAs<int32_t>(buffer, exact);
  }
  return absl::InvalidArgumentError("DownloadValues: unknown element type");
}

absl::Status Poison(CUdeviceptr address, int64_t count, CUstream stream) {
  return PoisonValues(address, count, ptx::ScalarType::kF16, stream);
}

absl::Status PoisonValues(CUdeviceptr address, int64_t count,
                          ptx::ScalarType type, CUstream stream) {
  if (count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("PoisonValues: count ", count, " is negative"));
  }
  if (!ptx::IsKnownScalarType(type)) {
    return absl::InvalidArgumentError("PoisonValues: unknown element type");
  }
  if (ptx::SizeInBits(type) == 8) {
    // 0x7F: a NaN in e4m3 and e5m2, 127 in s8 and u8.
    absl::StatusOr<runtime::Function> fill =
        HelperKernel(gen::ByteFillKernelName(), gen::ByteFillSource);
    if (!fill.ok()) return fill.status();
    unsigned long long bytes = static_cast<unsigned long long>(count);
    unsigned value = 0x7F;
    void* args[] = {&address, &bytes, &value};
    runtime::LaunchConfig launch;
    launch.grid = {1024, 1, 1};
    launch.block = {256, 1, 1};
    launch.stream = stream;
    return fill->Launch(launch, args);
  }
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  // 16-bit: 0x7FFF, a NaN in f16 and bf16. 32-bit, two halves each:
  // 0xFFFFFFFF (a NaN) for the floats, 0x7F7F7F7F for s32.
  const bool wide = ptx::SizeInBits(type) == 32;
  const unsigned short half = !wide                           ? 0x7FFF
                              : type == ptx::ScalarType::kS32 ? 0x7F7F
                                                              : 0xFFFF;
  return (*driver)->Check(
      (*driver)->cuMemsetD16Async(
          address, half, static_cast<size_t>(count) * (wide ? 2 : 1), stream),
      "cuMemsetD16Async");
}

absl::Status CublasGemm(const GemmProblem& problem, CUdeviceptr a,
                        CUdeviceptr b, CUdeviceptr c, CUstream stream) {
  if (problem.element != ptx::ScalarType::kF16 &&
      problem.element != ptx::ScalarType::kBF16) {
    return absl::InvalidArgumentError(
        absl::StrCat("CublasGemm: f16 or bf16 inputs only, not ",
                     ptx::PtxName(problem.element)));
  }
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

namespace {

// An 8-bit float format: mantissa bits, exponent bias, largest finite value
// and its code.
struct Fp8Format {
  int mantissa_bits;
  int bias;
  double max;
  uint8_t max_code;
};

constexpr Fp8Format kE4M3 = {3, 7, 448.0, 0x7E};
constexpr Fp8Format kE5M2 = {2, 15, 57344.0, 0x7B};

}  // namespace

double Fp8BitsToDouble(uint8_t bits, ptx::ScalarType type) {
  if (type != ptx::ScalarType::kE4M3 && type != ptx::ScalarType::kE5M2) {
    return NAN;
  }
  const Fp8Format& f = type == ptx::ScalarType::kE4M3 ? kE4M3 : kE5M2;
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  const int exponent = (bits & 0x7F) >> f.mantissa_bits;
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  const int top_exponent = (1 << (7 - f.mantissa_bits)) - 1;
  if (type == ptx::ScalarType::kE4M3 && exponent == top_exponent &&
      mantissa == 7) {
    return NAN;
  }
  if (type == ptx::ScalarType::kE5M2 && exponent == top_exponent) {
    return mantissa ? NAN : sign * INFINITY;
  }
  // Subnormals (exponent 0) scale like the smallest normals, less the
  // implicit 1.
  const int implicit = exponent == 0 ? 0 : 1 << f.mantissa_bits;
  return sign * std::ldexp(mantissa + implicit,
                           std::max(exponent, 1) - f.bias - f.mantissa_bits);
}

uint8_t DoubleToFp8Bits(double value, ptx::ScalarType type) {
  if (type != ptx::ScalarType::kE4M3 && type != ptx::ScalarType::kE5M2) {
    return 0x7F;
  }
  const Fp8Format& f = type == ptx::ScalarType::kE4M3 ? kE4M3 : kE5M2;
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return sign | 0x7F;
  const double magnitude = std::fabs(value);
  if (!(magnitude < f.max)) return sign | f.max_code;
  if (magnitude == 0) return sign;  // frexp gives no binade for 0
  // The binade's exponent, no lower than the smallest normal's, whose
  // quantum subnormals share.
  const int min_exponent = 1 - f.bias;
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);  // magnitude in [2^(e-1), 2^e)
  const int exponent = std::max(frexp_exponent - 1, min_exponent);
  // nearbyint rounds to nearest even in the default rounding mode.
  const int units = static_cast<int>(
      std::nearbyint(std::ldexp(magnitude, f.mantissa_bits - exponent)));
  if (std::ldexp(units, exponent - f.mantissa_bits) > f.max) {
    return sign | f.max_code;
  }
  // units includes the implicit 1 of normals, so a carry into the next
  // binade lands on its code too.
  return sign | static_cast<uint8_t>(
                    ((exponent - min_exponent) << f.mantissa_bits) + units);
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

std::vector<double> HostReferenceGemm(const GemmProblem& problem,
                                      const std::vector<double>& a,
                                      const std::vector<double>& b) {
  if (problem.m < 0 || problem.n < 0 || problem.k < 0 || problem.batch < 1) {
    return {};
  }
  const absl::StatusOr<GemmSpans> spans = StoredSpans(problem);
  if (!spans.ok() || static_cast<int64_t>(a.size()) < spans->a ||
      static_cast<int64_t>(b.size()) < spans->b) {
    return {};
  }
  const GemmProblem r = Resolved(problem);
  // Steps between consecutive i (rows of op(A)) and l (along k) in A, and
  // between j and l in B.
  const bool a_k = r.a_major == MajorOrder::kK;
  const bool b_k = r.b_major == MajorOrder::kK;
  const int64_t a_i = a_k ? r.lda : 1, a_l = a_k ? 1 : r.lda;
  const int64_t b_j = b_k ? r.ldb : 1, b_l = b_k ? 1 : r.ldb;
  std::vector<double> d(static_cast<size_t>(r.batch * r.m * r.n));
  for (int64_t batch = 0; batch < r.batch; ++batch) {
    const double* a_matrix = a.data() + batch * r.stride_a;
    const double* b_matrix = b.data() + batch * r.stride_b;
    double* d_matrix = d.data() + batch * r.m * r.n;
    for (int64_t i = 0; i < r.m; ++i) {
      for (int64_t j = 0; j < r.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < r.k; ++l) {
          sum += a_matrix[i * a_i + l * a_l] * b_matrix[j * b_j + l * b_l];
        }
        d_matrix[i * r.n + j] = r.alpha * sum;
      }
    }
  }
  return d;
}

double RelativeErrorByNorm(const std::vector<double>& result,
                           const std::vector<double>& reference) {
  if (result.size() != reference.size()) return INFINITY;
  double difference = 0;
  double norm = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    if (!std::isfinite(result[i])) return INFINITY;
    difference += (result[i] - reference[i]) * (result[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
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
