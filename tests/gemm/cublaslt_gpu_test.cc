// cuBLASLt through ptxgen's description of a GEMM (cublaslt_reference.h),
// on the GPU, against a float64 host reference computed from the inputs as
// downloaded: each major combination, leading dimensions longer than their
// rows, batches, alpha/beta with C, bias with ReLU and with GELU (tanh
// form), f32 output and C == D in place. D is poisoned first, and the
// padding between its rows must stay poisoned. Skips without a Hopper GPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/gemm/cublaslt_reference.h"
#include "lib/gemm/verification.h"
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

double GeluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// D as LtGemm defines it, in float64, at d[batch * stride_d + i * ldd + j];
// elements outside the matrices stay 0.
std::vector<double> HostReference(const LtGemm& g, const std::vector<double>& a,
                                  const std::vector<double>& b,
                                  const std::vector<double>& c,
                                  const std::vector<double>& bias) {
  std::vector<double> d(static_cast<size_t>(SpanOfD(g)), 0);
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
        double value = g.alpha * sum;
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

// `count` random values in [-1, 1) from `offset` bytes into a buffer:
// FillRandom for 16-bit types, host-made for f32.
absl::StatusOr<Operand> RandomOperand(int64_t count, ScalarType type,
                                      uint32_t seed, int64_t offset) {
  const int64_t bytes = count * ptx::SizeInBytes(type) + offset;
  // Even 16-bit counts, so that DownloadHalves reads whole elements.
  absl::StatusOr<DeviceBuffer> buffer =
      DeviceBuffer::Allocate((bytes + 3) / 4 * 4);
  if (!buffer.ok()) return buffer.status();
  if (type == ScalarType::kF32) {
    std::vector<float> words(buffer->size() / 4);
    uint32_t state = seed * 2654435761u + 1;
    for (float& word : words) {
      state = state * 1664525u + 1013904223u;
      word = static_cast<float>(state >> 8) / (1 << 23) - 1.0f;
    }
    if (absl::Status copied =
            buffer->CopyFromHost(words.data(), buffer->size());
        !copied.ok()) {
      return copied;
    }
  } else if (absl::Status filled = FillRandom(
                 buffer->address(), static_cast<int64_t>(buffer->size() / 2),
                 type, seed, nullptr);
             !filled.ok()) {
    return filled;
  }
  absl::StatusOr<std::vector<double>> host = DownloadValues(*buffer, type);
  if (!host.ok()) return host.status();
  host->erase(host->begin(), host->begin() + offset / ptx::SizeInBytes(type));
  const CUdeviceptr address =
      buffer->address() + static_cast<CUdeviceptr>(offset);
  return Operand{*std::move(buffer), address, *std::move(host)};
}

struct Case {
  std::string name;
  LtGemm gemm;
  bool in_place = false;  // C and D one buffer
  int64_t offset = 0;     // bytes from the allocations to every pointer
};

LtGemm Packed(ScalarType input, bool a_k_major, bool b_k_major,
              ScalarType output = ScalarType::kF16, int64_t m = 96,
              int64_t n = 80, int64_t k = 72) {
  if (output == ScalarType::kF16) output = input;
  return PackedLtGemm(m, n, k, input, output, a_k_major, b_k_major);
}

// Every leading dimension longer than its row; strides leave gaps too.
LtGemm Padded(LtGemm g) {
  g.lda += 8;
  g.ldb += 24;
  g.ldc += 16;
  g.ldd += 40;
  g.stride_a = SpanOfA(g) + 64;
  g.stride_b = SpanOfB(g) + 128;
  g.stride_c = SpanOfC(g) + 8;
  g.stride_d = SpanOfD(g) + 256;
  g.stride_bias = g.n + 8;
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

class CublasLtGpuTest : public testing_support::HopperTest,
                        public testing::WithParamInterface<Case> {};

TEST_P(CublasLtGpuTest, MatchesTheHostReference) {
  const LtGemm& g = GetParam().gemm;
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
  absl::StatusOr<DeviceBuffer> d = DeviceBuffer::Allocate(
      static_cast<size_t>(SpanOfD(g) * ptx::SizeInBytes(g.d_type) + offset +
                          3) /
      4 * 4);
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<DeviceBuffer> workspace =
      DeviceBuffer::Allocate(kLtWorkspaceBytes);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  const CUdeviceptr d_address =
      GetParam().in_place ? c->address
                          : d->address() + static_cast<CUdeviceptr>(offset);
  const std::vector<double> expected =
      HostReference(g, a->host, b->host, c->host, bias->host);

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
    void* space = reinterpret_cast<void*>(workspace->address());
    const absl::Status status =
        run < 2
            ? prepared->Run(a->address, b->address, c->address, d_address,
                            bias->address, nullptr, space, kLtWorkspaceBytes)
            : RunCublasLt(g, a->address, b->address, c->address, d_address,
                          bias->address, nullptr, space, kLtWorkspaceBytes);
    ASSERT_TRUE(status.ok()) << status;
    absl::StatusOr<std::vector<double>> result =
        DownloadValues(GetParam().in_place ? c->buffer : *d, g.d_type);
    ASSERT_TRUE(result.ok()) << result.status();
    result->erase(result->begin(),
                  result->begin() + offset / ptx::SizeInBytes(g.d_type));
    std::vector<double> inside, reference;
    int64_t untouched = 0, padding = 0;
    for (int batch = 0; batch < g.batch; ++batch) {
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.ldd; ++j) {
          const size_t at =
              static_cast<size_t>(batch * g.stride_d + i * g.ldd + j);
          if (j < g.n) {
            inside.push_back((*result)[at]);
            reference.push_back(expected[at]);
          } else if (at < result->size() && !GetParam().in_place) {
            ++padding;
            untouched += std::isnan((*result)[at]) ? 1 : 0;
          }
        }
      }
    }
    const double bound =
        g.d_type == ScalarType::kF32 ? 1e-5 : ErrorBound(g.d_type);
    EXPECT_LT(RelativeError(inside, reference), bound);
    EXPECT_EQ(untouched, padding) << "D's padding was written";
  }
}

INSTANTIATE_TEST_SUITE_P(Problems, CublasLtGpuTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ptxgen::gemm
