// cuBLASLt through ptxgen's description of a GEMM (cublaslt_reference.h),
// on the GPU, against a float64 host reference computed from the inputs as
// they are on the device: each major combination, leading dimensions longer
// than their rows, batches, alpha/beta with C, bias with ReLU and with GELU
// (tanh form), f32 output and C == D in place; tf32; fp8 (e4m3, e5m2 and
// mixed) with per-tensor scales, with and without fast accumulation, to
// bf16, f32 and e4m3 with D's scale and amax; int8 to s32 and to s8. D is
// poisoned first, and the padding between its rows must keep its poison
// bytes. Skips without a Hopper GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/gemm/timing.h"
#include "lib/testing/cublaslt_reference.h"
#include "lib/testing/verification.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;
using Bias = LtGemm::Bias;
using Activation = LtGemm::Activation;
using runtime::DeviceBuffer;

// The elements a strided, batched, padded row-major matrix spans.
int64_t Span(int64_t rows, int64_t row, int64_t ld, int batch, int64_t stride) {
  return static_cast<int64_t>(batch - 1) * stride + (rows - 1) * ld + row;
}

int64_t SpanOfA(const LtGemm& g) {
  return Span(g.a_k_major ? g.m : g.k, g.a_k_major ? g.k : g.m, g.lda, g.batch,
              g.stride_a);
}
int64_t SpanOfB(const LtGemm& g) {
  return Span(g.b_k_major ? g.n : g.k, g.b_k_major ? g.k : g.n, g.ldb, g.batch,
              g.stride_b);
}
int64_t SpanOfC(const LtGemm& g) {
  return Span(g.m, g.n, g.ldc, g.batch, g.stride_c);
}
int64_t SpanOfD(const LtGemm& g) {
  return Span(g.m, g.n, g.ldd, g.batch, g.stride_d);
}
int64_t SpanOfBias(const LtGemm& g) {
  return Span(1, g.n, g.n, g.batch, g.stride_bias);
}

// One element of `type` at `bytes`, exactly, as a double.
double Decode(const uint8_t* bytes, ScalarType type) {
  switch (type) {
    case ScalarType::kF16:
    case ScalarType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, bytes, 2);
      return HalfBitsToFloat(bits, type);
    }
    case ScalarType::kF32:
    case ScalarType::kTF32: {
      float value;
      std::memcpy(&value, bytes, 4);
      return value;
    }
    case ScalarType::kE4M3:
    case ScalarType::kE5M2:
      return Fp8BitsToDouble(bytes[0], type);
    case ScalarType::kS8:
      return static_cast<int8_t>(bytes[0]);
    case ScalarType::kU8:
      return bytes[0];
    case ScalarType::kS32: {
      int32_t value;
      std::memcpy(&value, bytes, 4);
      return value;
    }
  }
  return NAN;
}

std::vector<double> DecodeAll(const std::vector<uint8_t>& bytes, size_t from,
                              ScalarType type) {
  const size_t size = static_cast<size_t>(ptx::SizeInBytes(type));
  std::vector<double> values;
  for (size_t at = from; at + size <= bytes.size(); at += size) {
    values.push_back(Decode(bytes.data() + at, type));
  }
  return values;
}

absl::StatusOr<std::vector<uint8_t>> DownloadBytes(const DeviceBuffer& buffer) {
  std::vector<uint8_t> bytes(buffer.size());
  if (absl::Status copied = buffer.CopyToHost(bytes.data(), bytes.size());
      !copied.ok()) {
    return copied;
  }
  return bytes;
}

// A small deterministic generator (an LCG's high bits).
class Random {
 public:
  explicit Random(uint32_t seed) : state_(seed * 2654435761u + 1) {}
  uint32_t Next() {
    state_ = state_ * 1664525u + 1013904223u;
    return state_ >> 8;  // 24 bits
  }
  float Uniform() {  // [-1, 1)
    return static_cast<float>(Next()) / (1 << 23) - 1.0f;
  }

 private:
  uint32_t state_;
};

// Host-made bytes of `count` elements of a type FillRandom does not fill:
// f32 (and tf32, stored as f32) uniform in [-1, 1); fp8 normal numbers of
// either sign with magnitudes in [2^-3, 4), every mantissa (so that products
// exercise the whole format without saturating anything); s8 in [-128, 127]
// and s32 in [-2^15, 2^15).
std::vector<uint8_t> HostBytes(int64_t count, ScalarType type, uint32_t seed) {
  Random random(seed);
  const size_t size = static_cast<size_t>(ptx::SizeInBytes(type));
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * size);
  for (size_t at = 0; at < bytes.size(); at += size) {
    const uint32_t r = random.Next();
    switch (type) {
      case ScalarType::kE4M3: {
        // Exponent field 4..8 is 2^-3..2^1.
        const uint32_t exponent = 4 + (r >> 4) % 5;
        bytes[at] = static_cast<uint8_t>(((r & 1) << 7) | (exponent << 3) |
                                         ((r >> 1) & 0x7));
        break;
      }
      case ScalarType::kE5M2: {
        // Exponent field 12..16 is 2^-3..2^1.
        const uint32_t exponent = 12 + (r >> 3) % 5;
        bytes[at] = static_cast<uint8_t>(((r & 1) << 7) | (exponent << 2) |
                                         ((r >> 1) & 0x3));
        break;
      }
      case ScalarType::kS8:
        bytes[at] = static_cast<uint8_t>(r & 0xFF);
        break;
      case ScalarType::kS32: {
        const int32_t value = static_cast<int32_t>(r & 0xFFFF) - (1 << 15);
        std::memcpy(&bytes[at], &value, 4);
        break;
      }
      default: {  // f32, tf32
        const float value = static_cast<float>(r) / (1 << 23) - 1.0f;
        std::memcpy(&bytes[at], &value, 4);
        break;
      }
    }
  }
  return bytes;
}

double GeluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// The per-tensor scales' values (1 where the LtGemm has none).
struct ScaleValues {
  float a = 1, b = 1, d = 1;
};

// D as LtGemm defines it, in float64, at d[batch * stride_d + i * ldd + j],
// before any conversion to D's type and before scale_d; elements outside
// the matrices stay 0.
std::vector<double> HostReference(const LtGemm& g, const ScaleValues& scales,
                                  const std::vector<double>& a,
                                  const std::vector<double>& b,
                                  const std::vector<double>& c,
                                  const std::vector<double>& bias) {
  std::vector<double> d(static_cast<size_t>(SpanOfD(g)), 0);
  const double product_scale =
      static_cast<double>(g.scale_a ? scales.a : 1.0f) *
      static_cast<double>(g.scale_b ? scales.b : 1.0f);
  for (int batch = 0; batch < g.batch; ++batch) {
    const double* a0 = a.data() + batch * g.stride_a;
    const double* b0 = b.data() + batch * g.stride_b;
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          sum += (g.a_k_major ? a0[i * g.lda + l] : a0[l * g.lda + i]) *
                 (g.b_k_major ? b0[j * g.ldb + l] : b0[l * g.ldb + j]);
        }
        double value = g.alpha * product_scale * sum;
        if (g.beta != 0) {
          value += g.beta * c[batch * g.stride_c + i * g.ldc + j];
        }
        if (g.bias == Bias::kAlongN) value += bias[batch * g.stride_bias + j];
        if (g.activation == Activation::kRelu) value = std::max(value, 0.0);
        if (g.activation == Activation::kGelu) value = GeluTanh(value);
        d[batch * g.stride_d + i * g.ldd + j] = value;
      }
    }
  }
  return d;
}

// A device buffer, where its elements start (`offset` bytes in), and the
// values from there on, on the host.
struct Operand {
  DeviceBuffer buffer;
  CUdeviceptr address;
  std::vector<double> host;
};

// `count` random values from `offset` bytes into a buffer: FillRandom's
// [-1, 1) for 16-bit floats, HostBytes uploaded for the other types.
absl::StatusOr<Operand> RandomOperand(int64_t count, ScalarType type,
                                      uint32_t seed, int64_t offset) {
  const int64_t size = ptx::SizeInBytes(type);
  const int64_t bytes = count * size + offset;
  // Whole 32-bit words, so that FillRandom fills whole 16-bit elements.
  absl::StatusOr<DeviceBuffer> buffer =
      DeviceBuffer::Allocate((bytes + 3) / 4 * 4);
  if (!buffer.ok()) return buffer.status();
  if (size == 2) {
    if (absl::Status filled = FillRandom(
            buffer->address(), static_cast<int64_t>(buffer->size() / 2), type,
            seed, nullptr);
        !filled.ok()) {
      return filled;
    }
  } else {
    const std::vector<uint8_t> host =
        HostBytes(static_cast<int64_t>(buffer->size()) / size, type, seed);
    if (absl::Status copied = buffer->CopyFromHost(host.data(), host.size());
        !copied.ok()) {
      return copied;
    }
  }
  // The values as they are on the device.
  absl::StatusOr<std::vector<uint8_t>> downloaded = DownloadBytes(*buffer);
  if (!downloaded.ok()) return downloaded.status();
  const CUdeviceptr address =
      buffer->address() + static_cast<CUdeviceptr>(offset);
  std::vector<double> host =
      DecodeAll(*downloaded, static_cast<size_t>(offset), type);
  return Operand{*std::move(buffer), address, std::move(host)};
}

struct Case {
  std::string name;
  LtGemm gemm;
  bool in_place = false;  // C and D one buffer
  int64_t offset = 0;     // bytes from the allocations to every pointer
  ScaleValues scales;     // those the LtGemm has
  // The norm-wise relative error allowed; 0: the default for D's type (see
  // DefaultBound).
  double bound = 0;
};

// Bounds, norm-wise ||D - reference|| / ||reference||:
//   f16, bf16 D: ErrorBound (rounding to the 16-bit type, 2^-11 or 2^-8
//     relative, with margin for the summation order).
//   f32 D from f16, bf16, f32: 1e-5 (f32 accumulation over k <= 96 of
//     exact products: a few ulps of 2^-24).
//   s32 D: 0. Integer products and sums are exact (|sum| < k 2^14 << 2^31).
//   s8 D: set per case (the result rounded once to an integer, saturated
//     as the reference is).
double DefaultBound(ScalarType d_type) {
  switch (d_type) {
    case ScalarType::kF32:
      return 1e-5;
    case ScalarType::kS32:
      return 0;
    default:
      return ErrorBound(d_type);
  }
}

LtGemm Packed(ScalarType input, bool a_k_major, bool b_k_major,
              ScalarType output = ScalarType::kF16, int64_t m = 96,
              int64_t n = 80, int64_t k = 72) {
  if (output == ScalarType::kF16) output = input;
  return PackedLtGemm(m, n, k, input, output, a_k_major, b_k_major);
}

// Every leading dimension longer than its row; strides leave gaps too.
// `unit` elements at a time, so that fp8 rows stay multiples of 16 bytes.
LtGemm Padded(LtGemm g, int64_t unit = 8) {
  g.lda += unit;
  g.ldb += 3 * unit;
  g.ldc += 2 * unit;
  g.ldd += 5 * unit;
  g.stride_a = SpanOfA(g) + 8 * unit;
  g.stride_b = SpanOfB(g) + 16 * unit;
  g.stride_c = SpanOfC(g) + unit;
  g.stride_d = SpanOfD(g) + 32 * unit;
  g.stride_bias = g.n + unit;
  return g;
}

// fp8 inputs (both K-major, as cuBLASLt requires) from `a` and `b` to `d`,
// with k a multiple of 16 bytes of fp8.
LtGemm Fp8(ScalarType a, ScalarType b, ScalarType d, int64_t k = 96) {
  LtGemm g = PackedLtGemm(96, 80, k, a, d);
  g.b_type = b;
  return g;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (ScalarType type : {ScalarType::kF16, ScalarType::kBF16}) {
    for (bool a_k_major : {true, false}) {
      for (bool b_k_major : {true, false}) {
        cases.push_back(
            {absl::StrCat(ptx::PtxName(type), "_A", a_k_major ? "K" : "MN",
                          "_B", b_k_major ? "K" : "MN"),
             Packed(type, a_k_major, b_k_major)});
      }
    }
  }
  cases.push_back(
      {"f16_padded_AMN_BK", Padded(Packed(ScalarType::kF16, false, true))});
  cases.push_back(
      {"bf16_padded_AK_BMN", Padded(Packed(ScalarType::kBF16, true, false))});
  {
    LtGemm g =
        Packed(ScalarType::kF16, true, true, ScalarType::kF16, 33, 24, 40);
    cases.push_back({"f16_ragged_33x24x40", g});
  }
  {
    LtGemm g = Packed(ScalarType::kF16, true, true);
    g.alpha = 1.5f;
    g.beta = -0.75f;
    cases.push_back({"f16_alpha_beta_with_C", g});
  }
  {
    LtGemm g = Padded(Packed(ScalarType::kBF16, false, false));
    g.batch = 2;
    g.alpha = 0.5f;
    g.beta = 1;
    g.bias = Bias::kAlongN;
    cases.push_back({"bf16_batch2_padded_C_bias", g});
  }
  {
    LtGemm g = Packed(ScalarType::kF16, true, false);
    g.batch = 2;
    g = Padded(g);
    g.bias = Bias::kAlongN;
    g.activation = Activation::kRelu;
    cases.push_back({"f16_batch2_bias_relu", g});
  }
  {
    LtGemm g = Packed(ScalarType::kF16, true, true);
    g.bias = Bias::kAlongN;
    g.activation = Activation::kRelu;
    cases.push_back({"f16_bias_relu", g});
  }
  {
    LtGemm g = Packed(ScalarType::kBF16, false, true);
    g.bias = Bias::kAlongN;
    g.activation = Activation::kGelu;
    cases.push_back({"bf16_bias_gelu", g});
  }
  {
    LtGemm g = Packed(ScalarType::kF16, true, true);
    g.activation = Activation::kGelu;
    cases.push_back({"f16_gelu", g});
  }
  {
    LtGemm g = Padded(Packed(ScalarType::kBF16, true, true, ScalarType::kF32));
    g.beta = 0.25f;
    g.bias = Bias::kAlongN;
    cases.push_back({"bf16_to_f32_C_bias", g});
  }
  {
    LtGemm g = Packed(ScalarType::kF16, false, true);
    g.beta = 1;
    cases.push_back({"f16_in_place", g, /*in_place=*/true});
  }
  {
    // The least alignment Run accepts, on every pointer the bias's too.
    LtGemm g = Padded(Packed(ScalarType::kBF16, true, false));
    g.beta = 1;
    g.bias = Bias::kAlongN;
    g.activation = Activation::kGelu;
    cases.push_back({"bf16_pointers_16B_aligned", g, false, /*offset=*/16});
  }

  // tf32: f32 data multiplied with 10-bit mantissas. Each input rounded to
  // tf32 is off by at most 2^-11 relative (2^-10 if truncated), so each
  // product by about twice that; summed with random signs, the error
  // relative to the norm of D stays near sqrt(2) 2^-11 (~7e-4), at most
  // sqrt(2) 2^-10 (~1.4e-3): bound 2e-3. (A plain f32 product would pass
  // too; what is checked is the mapping, not that tf32 was used.)
  {
    LtGemm g = Packed(ScalarType::kTF32, true, false, ScalarType::kF32);
    g.beta = 0.5f;
    g.bias = Bias::kAlongN;
    cases.push_back({"tf32_AK_BMN_C_bias", g, false, 0, {}, 2e-3});
  }
  {
    LtGemm g = Packed(ScalarType::kTF32, false, true, ScalarType::kF32);
    g.batch = 2;
    g = Padded(g);
    cases.push_back({"tf32_batch2_padded_AMN_BK", g, false, 0, {}, 2e-3});
  }

  // fp8. Products of fp8 values are exact in f32, but Hopper's fp8 tensor
  // cores add them into the accumulator with fewer bits than f32 (about 14
  // significant bits kept per addition, truncated: DeepSeek-V3's report
  // measures ~2% worst-element error at k = 4096 without promotion). Over
  // k <= 256 that is ~1e-3 norm-wise at worst: bound 5e-3 for an f32 D,
  // and for bf16 D ErrorBound(bf16) (1e-2, rounding to bf16's 8 bits
  // dominating). Scales 0.5 and 3 (a product of 1.5), so that a scale left
  // out or applied twice is off by 33% or more.
  {
    LtGemm g = Fp8(ScalarType::kE4M3, ScalarType::kE4M3, ScalarType::kBF16);
    g.scale_a = g.scale_b = true;
    cases.push_back({"e4m3_to_bf16_scaled", g, false, 0, {0.5f, 3.0f}});
  }
  {
    LtGemm g = Fp8(ScalarType::kE4M3, ScalarType::kE4M3, ScalarType::kBF16);
    g.scale_a = g.scale_b = true;
    g.fast_accumulation = true;
    cases.push_back(
        {"e4m3_to_bf16_scaled_fast_accum", g, false, 0, {0.5f, 3.0f}});
  }
  {
    LtGemm g = Fp8(ScalarType::kE4M3, ScalarType::kE5M2, ScalarType::kF32);
    g.scale_a = g.scale_b = true;
    g.alpha = 0.75f;
    g.beta = 0.5f;
    cases.push_back(
        {"e4m3xe5m2_to_f32_scaled_C", g, false, 0, {0.5f, 3.0f}, 5e-3});
  }
  {
    LtGemm g = Fp8(ScalarType::kE5M2, ScalarType::kE4M3, ScalarType::kF32,
                   /*k=*/256);
    g.scale_a = g.scale_b = true;
    g.fast_accumulation = true;
    cases.push_back({"e5m2xe4m3_to_f32_scaled_fast_accum_k256",
                     g,
                     false,
                     0,
                     {3.0f, 0.5f},
                     5e-3});
  }
  {
    // Batches with padding (rows still multiples of 16 bytes) and a bias,
    // only one operand scaled.
    LtGemm g = Fp8(ScalarType::kE4M3, ScalarType::kE4M3, ScalarType::kBF16);
    g.batch = 2;
    g = Padded(g, 16);
    g.bias = Bias::kAlongN;
    g.scale_b = true;
    cases.push_back({"e4m3_to_bf16_batch2_padded_bias_scale_b",
                     g,
                     false,
                     0,
                     {1.0f, 0.75f}});
  }
  {
    // An fp8 D: scaled by 2 before conversion to e4m3 (3 mantissa bits:
    // rounding to nearest is off by at most 2^-4 relative per element, so
    // by 2^-4 norm-wise, plus the accumulation's 1e-3; bound 0.07), with
    // the amax of the unscaled result. The inputs (RMS ~1.5, see HostBytes)
    // give sums of RMS ~22 over k = 96, ~67 once scaled by 1.5 and 2: the
    // largest, ~4 RMS, stay under e4m3's 448. C (unread) is bf16, as
    // PackedLtGemm makes it.
    LtGemm g = Fp8(ScalarType::kE4M3, ScalarType::kE4M3, ScalarType::kE4M3);
    g.scale_a = g.scale_b = g.scale_d = g.amax_d = true;
    cases.push_back(
        {"e4m3_to_e4m3_scale_d_amax", g, false, 0, {0.5f, 3.0f, 2.0f}, 0.07});
  }

  // int8, K-major: exact to s32 (alpha, beta integers), rounded to s8.
  {
    LtGemm g = PackedLtGemm(96, 80, 96, ScalarType::kS8, ScalarType::kS32);
    g.alpha = 2;
    g.beta = -1;
    cases.push_back({"s8_to_s32_alpha_beta_C", g});
  }
  {
    LtGemm g = PackedLtGemm(96, 80, 96, ScalarType::kS8, ScalarType::kS32);
    g.batch = 2;
    g = Padded(g, 16);
    cases.push_back({"s8_to_s32_batch2_padded", g});
  }
  {
    // Sums of 96 products of s8 reach ~ sqrt(96) 74^2 ~ 54000 (RMS); alpha
    // 2^-11 brings them to ~26, inside s8 with few saturating. Rounding
    // moves each element by less than 1 (RMS 0.29 to nearest, 0.58 even if
    // cuBLASLt truncated): under 0.58 / 26 ~ 0.022 norm-wise; bound 0.04.
    LtGemm g = PackedLtGemm(96, 80, 96, ScalarType::kS8, ScalarType::kS8);
    g.alpha = 1.0f / 2048;
    cases.push_back({"s8_to_s8", g, false, 0, {}, 0.04});
  }
  return cases;
}

double RelativeError(const std::vector<double>& result,
                     const std::vector<double>& reference) {
  double difference = 0, norm = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    if (!std::isfinite(result[i])) return INFINITY;
    difference += (result[i] - reference[i]) * (result[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
}

// The reference converted as cuBLASLt converts to D's type where it
// matters for the comparison: integers saturate (s8 rounds to nearest),
// an fp8 D is scale_d times the result.
double Expected(double value, const LtGemm& g, const ScaleValues& scales) {
  switch (g.d_type) {
    case ScalarType::kS8:
      return std::clamp(std::nearbyint(value), -128.0, 127.0);
    case ScalarType::kE4M3:
    case ScalarType::kE5M2:
      return value * (g.scale_d ? scales.d : 1.0f);
    default:
      return value;
  }
}

// Poison's 0x7FFF in every 16 bits: bytes FF 7F from an even address.
bool IsPoison(const std::vector<uint8_t>& bytes, size_t at, size_t size) {
  for (size_t i = at; i < at + size; ++i) {
    if (bytes[i] != (i % 2 == 0 ? 0xFF : 0x7F)) return false;
  }
  return true;
}

class CublasLtGpuTest : public testing_support::HopperTest,
                        public testing::WithParamInterface<Case> {};

TEST_P(CublasLtGpuTest, MatchesTheHostReference) {
  const LtGemm& g = GetParam().gemm;
  const ScaleValues& scale_values = GetParam().scales;
  SCOPED_TRACE(DescribeLtGemm(g));
  const uint32_t seed =
      static_cast<uint32_t>(std::hash<std::string>()(GetParam().name));
  const int64_t offset = GetParam().offset;
  absl::StatusOr<Operand> a = RandomOperand(SpanOfA(g), g.a_type, seed, offset);
  absl::StatusOr<Operand> b =
      RandomOperand(SpanOfB(g), g.b_type, seed + 1, offset);
  absl::StatusOr<Operand> bias =
      RandomOperand(SpanOfBias(g), g.bias_type, seed + 2, offset);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(bias.ok()) << bias.status();
  absl::StatusOr<Operand> c =
      RandomOperand(GetParam().in_place ? SpanOfD(g) : SpanOfC(g), g.c_type,
                    seed + 3, offset);
  ASSERT_TRUE(c.ok()) << c.status();
  const size_t d_size = static_cast<size_t>(ptx::SizeInBytes(g.d_type));
  absl::StatusOr<DeviceBuffer> d =
      DeviceBuffer::Allocate((static_cast<size_t>(SpanOfD(g)) * d_size +
                              static_cast<size_t>(offset) + 3) /
                             4 * 4);
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<DeviceBuffer> workspace =
      DeviceBuffer::Allocate(kLtWorkspaceBytes);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  const CUdeviceptr d_address =
      GetParam().in_place ? c->address
                          : d->address() + static_cast<CUdeviceptr>(offset);
  const std::vector<double> expected =
      HostReference(g, scale_values, a->host, b->host, c->host, bias->host);

  // The scales, 16 bytes apart: a, b, d as f32, then amax_d, written.
  absl::StatusOr<DeviceBuffer> scale_buffer = DeviceBuffer::Allocate(64);
  ASSERT_TRUE(scale_buffer.ok()) << scale_buffer.status();
  const CUdeviceptr scales_at = scale_buffer->address();
  LtScales scales;
  if (g.scale_a) scales.a = scales_at;
  if (g.scale_b) scales.b = scales_at + 16;
  if (g.scale_d) scales.d = scales_at + 32;
  if (g.amax_d) scales.amax_d = scales_at + 48;

  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(g, kLtWorkspaceBytes);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_LE(prepared->workspace_bytes(), kLtWorkspaceBytes);
  // Twice through the prepared call (the second must not depend on the
  // first: D poisoned again), then once through RunCublasLt. In place, one
  // run only, since it overwrites C.
  const int runs = GetParam().in_place ? 1 : 3;
  for (int run = 0; run < runs; ++run) {
    SCOPED_TRACE(run);
    if (!GetParam().in_place) {
      ASSERT_TRUE(
          Poison(d->address(), static_cast<int64_t>(d->size() / 2), nullptr)
              .ok());
    }
    {
      // The scales, and an amax_d no result has (amax is never negative).
      float values[16] = {};
      values[0] = scale_values.a;
      values[4] = scale_values.b;
      values[8] = scale_values.d;
      values[12] = -1;
      ASSERT_TRUE(scale_buffer->CopyFromHost(values, sizeof(values)).ok());
    }
    void* space = reinterpret_cast<void*>(workspace->address());
    const absl::Status status =
        run < 2 ? prepared->Run(a->address, b->address, c->address, d_address,
                                bias->address, scales, nullptr, space,
                                kLtWorkspaceBytes)
                : RunCublasLt(g, a->address, b->address, c->address, d_address,
                              bias->address, scales, nullptr, space,
                              kLtWorkspaceBytes);
    ASSERT_TRUE(status.ok()) << status;
    absl::StatusOr<std::vector<uint8_t>> bytes =
        DownloadBytes(GetParam().in_place ? c->buffer : *d);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    std::vector<double> inside, reference;
    int64_t untouched = 0, padding = 0;
    double amax = 0;
    for (int batch = 0; batch < g.batch; ++batch) {
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.ldd; ++j) {
          const size_t at =
              static_cast<size_t>(batch * g.stride_d + i * g.ldd + j);
          const size_t byte = static_cast<size_t>(offset) + at * d_size;
          if (j < g.n) {
            inside.push_back(Decode(bytes->data() + byte, g.d_type));
            reference.push_back(Expected(expected[at], g, scale_values));
            amax = std::max(amax, std::abs(expected[at]));
          } else if (byte + d_size <= bytes->size() && !GetParam().in_place) {
            ++padding;
            untouched += IsPoison(*bytes, byte, d_size) ? 1 : 0;
          }
        }
      }
    }
    const double bound =
        GetParam().bound != 0 ? GetParam().bound : DefaultBound(g.d_type);
    if (bound == 0) {
      EXPECT_EQ(inside, reference);
    } else {
      EXPECT_LT(RelativeError(inside, reference), bound);
    }
    EXPECT_EQ(untouched, padding) << "D's padding was written";
    if (g.amax_d) {
      // max |result| before scale_d, in f32 from the same accumulators
      // the result comes from: the fp8 accumulation bound above.
      float got[16];
      ASSERT_TRUE(scale_buffer->CopyToHost(got, sizeof(got)).ok());
      EXPECT_NEAR(got[12], amax, 5e-3 * amax);
    }
  }
}

// Without a GPU: the host side of the cases above.
TEST(CublasLtGpuTestSupport, Fp8DecodingMatchesTheFormats) {
  EXPECT_EQ(Fp8BitsToDouble(0x00, ScalarType::kE4M3), 0);
  EXPECT_EQ(Fp8BitsToDouble(0x38, ScalarType::kE4M3), 1);  // 0.0111.000
  EXPECT_EQ(Fp8BitsToDouble(0xC4, ScalarType::kE4M3),
            -3);  // 1.1000.100: -2 * 1.5
  EXPECT_EQ(Fp8BitsToDouble(0x7E, ScalarType::kE4M3), 448);  // the largest
  EXPECT_EQ(Fp8BitsToDouble(0x01, ScalarType::kE4M3),
            std::ldexp(1, -9));  // the least subnormal
  EXPECT_EQ(Fp8BitsToDouble(0x08, ScalarType::kE4M3),
            std::ldexp(1, -6));  // the least normal
  EXPECT_TRUE(std::isnan(Fp8BitsToDouble(0x7F, ScalarType::kE4M3)));
  EXPECT_TRUE(std::isnan(Fp8BitsToDouble(0xFF, ScalarType::kE4M3)));
  EXPECT_EQ(Fp8BitsToDouble(0x78, ScalarType::kE4M3),
            256);  // no infinity: 0.1111.000 is finite
  EXPECT_EQ(Fp8BitsToDouble(0x3C, ScalarType::kE5M2), 1);  // 0.01111.00
  EXPECT_EQ(Fp8BitsToDouble(0xC2, ScalarType::kE5M2),
            -3);  // 1.10000.10: -2 * 1.5
  EXPECT_EQ(Fp8BitsToDouble(0x7B, ScalarType::kE5M2), 57344);
  EXPECT_EQ(Fp8BitsToDouble(0x01, ScalarType::kE5M2), std::ldexp(1, -16));
  EXPECT_EQ(Fp8BitsToDouble(0x7C, ScalarType::kE5M2), INFINITY);
  EXPECT_EQ(Fp8BitsToDouble(0xFC, ScalarType::kE5M2), -INFINITY);
  EXPECT_TRUE(std::isnan(Fp8BitsToDouble(0x7D, ScalarType::kE5M2)));
}

TEST(CublasLtGpuTestSupport, HostBytesStayInTheirRanges) {
  for (ScalarType type : {ScalarType::kE4M3, ScalarType::kE5M2}) {
    const std::vector<uint8_t> bytes = HostBytes(4096, type, 7);
    const std::vector<double> values = DecodeAll(bytes, 0, type);
    ASSERT_EQ(values.size(), 4096u);
    int negative = 0;
    for (double value : values) {
      EXPECT_GE(std::abs(value), 0.125) << ptx::PtxName(type);
      EXPECT_LT(std::abs(value), 4) << ptx::PtxName(type);
      negative += value < 0 ? 1 : 0;
    }
    EXPECT_GT(negative, 1500);
    EXPECT_LT(negative, 2600);
  }
  const std::vector<double> s8 =
      DecodeAll(HostBytes(4096, ScalarType::kS8, 3), 0, ScalarType::kS8);
  EXPECT_EQ(*std::min_element(s8.begin(), s8.end()), -128);
  EXPECT_EQ(*std::max_element(s8.begin(), s8.end()), 127);
  for (double value :
       DecodeAll(HostBytes(1024, ScalarType::kF32, 5), 0, ScalarType::kF32)) {
    EXPECT_GE(value, -1);
    EXPECT_LT(value, 1);
  }
}

// Each case is an LtGemm ToCublasLt takes, and the fp8 and int8 ones have
// rows and batch strides of whole 16-byte units (what the algorithm is
// chosen for).
TEST(CublasLtGpuTestSupport, EveryCaseIsAcceptedAndAligned) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const LtGemm& g = c.gemm;
    const absl::StatusOr<CublasLtCall> call = ToCublasLt(g);
    EXPECT_TRUE(call.ok()) << call.status();
    if (ptx::SizeInBytes(g.a_type) != 1) continue;
    for (const auto& [what, elements, size] : {
             std::tuple<const char*, int64_t, int>{"lda", g.lda, 1},
             {"ldb", g.ldb, 1},
             {"ldd", g.ldd, ptx::SizeInBytes(g.d_type)},
             {"stride_a", g.batch > 1 ? g.stride_a : 0, 1},
             {"stride_b", g.batch > 1 ? g.stride_b : 0, 1},
             {"stride_d", g.batch > 1 ? g.stride_d : 0,
              ptx::SizeInBytes(g.d_type)},
         }) {
      EXPECT_EQ(elements * size % 16, 0) << what << "=" << elements;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Problems, CublasLtGpuTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ptxgen::gemm
