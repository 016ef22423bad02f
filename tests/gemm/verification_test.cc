// The test-support layer without a GPU: 8-bit float decoding and rounding
// (against CUDA's own host conversions too), the fill kernels of every type
// compiled by NVRTC, the refusals of FillRandom, PoisonValues and
// CublasGemm that come before any device work, and the float64 host
// reference and its norm.
#include "lib/testing/verification.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cuda_fp8.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/fill_kernel.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

constexpr ScalarType kFp8Types[] = {ScalarType::kE4M3, ScalarType::kE5M2};

bool IsNanCode(uint8_t bits, ScalarType type) {
  return std::isnan(Fp8BitsToDouble(bits, type));
}

TEST(Fp8Test, DecodesTheFormats) {
  const ScalarType e4m3 = ScalarType::kE4M3, e5m2 = ScalarType::kE5M2;
  EXPECT_EQ(Fp8BitsToDouble(0x38, e4m3), 1.0);
  EXPECT_EQ(Fp8BitsToDouble(0x7E, e4m3), 448.0);
  EXPECT_EQ(Fp8BitsToDouble(0xFE, e4m3), -448.0);
  EXPECT_EQ(Fp8BitsToDouble(0x08, e4m3), std::ldexp(1.0, -6));  // min normal
  EXPECT_EQ(Fp8BitsToDouble(0x01, e4m3), std::ldexp(1.0, -9));  // subnormal
  EXPECT_EQ(Fp8BitsToDouble(0x07, e4m3), 7 * std::ldexp(1.0, -9));
  EXPECT_EQ(Fp8BitsToDouble(0x78, e4m3), 256.0);  // no infinity
  EXPECT_TRUE(std::signbit(Fp8BitsToDouble(0x80, e4m3)));
  EXPECT_EQ(Fp8BitsToDouble(0x80, e4m3), 0.0);
  EXPECT_EQ(Fp8BitsToDouble(0x3C, e5m2), 1.0);
  EXPECT_EQ(Fp8BitsToDouble(0x7B, e5m2), 57344.0);
  EXPECT_EQ(Fp8BitsToDouble(0x04, e5m2), std::ldexp(1.0, -14));
  EXPECT_EQ(Fp8BitsToDouble(0x01, e5m2), std::ldexp(1.0, -16));
  EXPECT_EQ(Fp8BitsToDouble(0x7C, e5m2), INFINITY);
  EXPECT_EQ(Fp8BitsToDouble(0xFC, e5m2), -INFINITY);
  // NaNs: e4m3's S.1111.111 only; e5m2's exponent 31 with any mantissa.
  int nans[2] = {0, 0};
  for (int bits = 0; bits < 256; ++bits) {
    nans[0] += IsNanCode(static_cast<uint8_t>(bits), e4m3);
    nans[1] += IsNanCode(static_cast<uint8_t>(bits), e5m2);
  }
  EXPECT_EQ(nans[0], 2);
  EXPECT_EQ(nans[1], 6);
  EXPECT_TRUE(IsNanCode(0x7F, e4m3) && IsNanCode(0xFF, e4m3));
  EXPECT_TRUE(std::isnan(Fp8BitsToDouble(0x38, ScalarType::kF16)));
}

// Every finite code decodes to a value that rounds back to it.
TEST(Fp8Test, EveryCodeRoundTrips) {
  for (ScalarType type : kFp8Types) {
    for (int code = 0; code < 256; ++code) {
      const uint8_t bits = static_cast<uint8_t>(code);
      const double value = Fp8BitsToDouble(bits, type);
      SCOPED_TRACE(absl::StrCat(ptx::PtxName(type), " code ", code));
      if (std::isnan(value)) {
        EXPECT_TRUE(IsNanCode(DoubleToFp8Bits(value, type), type));
      } else if (std::isinf(value)) {  // e5m2: saturates
        EXPECT_EQ(DoubleToFp8Bits(value, type), (bits & 0x80) | 0x7B);
      } else {
        EXPECT_EQ(DoubleToFp8Bits(value, type), bits);
      }
    }
  }
}

TEST(Fp8Test, RoundsToNearestEvenAndSaturates) {
  const ScalarType e4m3 = ScalarType::kE4M3, e5m2 = ScalarType::kE5M2;
  EXPECT_EQ(DoubleToFp8Bits(1.0625, e4m3), 0x38);  // 1 | 1.125: to even 1
  EXPECT_EQ(DoubleToFp8Bits(1.1875, e4m3), 0x3A);  // 1.125 | 1.25: to 1.25
  EXPECT_EQ(DoubleToFp8Bits(1.07, e4m3), 0x39);
  EXPECT_EQ(DoubleToFp8Bits(std::ldexp(1.0, -10), e4m3), 0x00);  // 0 | 2^-9
  EXPECT_EQ(DoubleToFp8Bits(3 * std::ldexp(1.0, -10), e4m3), 0x02);
  EXPECT_EQ(DoubleToFp8Bits(15 * std::ldexp(1.0, -10), e4m3), 0x08);  // carry
  EXPECT_EQ(DoubleToFp8Bits(-0.0, e4m3), 0x80);
  EXPECT_EQ(DoubleToFp8Bits(464.0, e4m3), 0x7E);  // 448 | 480: to even 448
  for (double big : {470.0, 1e9, 1e300, double{INFINITY}}) {
    EXPECT_EQ(DoubleToFp8Bits(big, e4m3), 0x7E) << big;
    EXPECT_EQ(DoubleToFp8Bits(-big, e4m3), 0xFE) << big;
  }
  EXPECT_EQ(DoubleToFp8Bits(61440.0, e5m2), 0x7B);  // 57344 | 65536: even
  EXPECT_EQ(DoubleToFp8Bits(-1e9, e5m2), 0xFB);
  EXPECT_EQ(DoubleToFp8Bits(INFINITY, e5m2), 0x7B);
  EXPECT_EQ(DoubleToFp8Bits(NAN, e4m3), 0x7F);
  EXPECT_EQ(DoubleToFp8Bits(-NAN, e5m2), 0xFF);
  EXPECT_EQ(DoubleToFp8Bits(1.0, ScalarType::kS8), 0x7F);
}

// CUDA's host conversion (cuda_fp8.h, satfinite) as a second opinion: at
// every code, between every pair of neighbours, and just off each midpoint.
TEST(Fp8Test, RoundsAsCudaDoes) {
  for (ScalarType type : kFp8Types) {
    const __nv_fp8_interpretation_t format =
        type == ScalarType::kE4M3 ? __NV_E4M3 : __NV_E5M2;
    std::vector<double> values = {0.0, 1e-30, 1e30};
    for (int code = 0; code < 127; ++code) {
      const double low = Fp8BitsToDouble(static_cast<uint8_t>(code), type);
      const double high = Fp8BitsToDouble(static_cast<uint8_t>(code + 1), type);
      if (!std::isfinite(low)) continue;
      values.push_back(low);
      if (!std::isfinite(high)) continue;
      const double middle = (low + high) / 2;
      values.insert(values.end(), {middle, std::nextafter(middle, 0.0),
                                   std::nextafter(middle, INFINITY)});
    }
    for (double value : values) {
      for (double signed_value : {value, -value}) {
        EXPECT_EQ(
            int{DoubleToFp8Bits(signed_value, type)},
            int{__nv_cvt_double_to_fp8(signed_value, __NV_SATFINITE, format)})
            << ptx::PtxName(type) << " " << signed_value;
      }
    }
  }
}

TEST(FillKernelTest, EveryFillableTypeCompilesWithItsStorage) {
  const std::pair<ScalarType, const char*> kStorage[] = {
      {ScalarType::kF16, "unsigned short* out"},
      {ScalarType::kBF16, "unsigned short* out"},
      {ScalarType::kE4M3, "unsigned char* out"},
      {ScalarType::kE5M2, "unsigned char* out"},
      {ScalarType::kS8, "unsigned char* out"},
      {ScalarType::kU8, "unsigned char* out"},
      {ScalarType::kF32, "float* out"},
      {ScalarType::kTF32, "float* out"},
  };
  for (const auto& [type, storage] : kStorage) {
    SCOPED_TRACE(ptx::PtxName(type));
    absl::StatusOr<std::string> source = gen::RandomFillSource(type);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_TRUE(absl::StrContains(*source, storage)) << *source;
    absl::StatusOr<compile::CompiledModule> compiled =
        compile::CompileCuda(gen::RandomFillKernelName(type), *source, {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_TRUE(compiled->diagnostics.empty());
  }
  EXPECT_TRUE(absl::StrContains(*gen::RandomFillSource(ScalarType::kE4M3),
                                "cvt.rn.satfinite.e4m3x2.f32"));
  EXPECT_EQ(gen::RandomFillSource(ScalarType::kS32).status().message(),
            "random fill: no fill for s32 (f16, bf16, e4m3, e5m2, f32, tf32, "
            "s8 or u8)");
  absl::StatusOr<compile::CompiledModule> bytes = compile::CompileCuda(
      gen::ByteFillKernelName(), gen::ByteFillSource(), {});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_TRUE(bytes->diagnostics.empty());
}

// Refused before the driver or cuBLAS is asked for anything, so here too
// (a fill that is not refused writes nothing: count 0).
TEST(FillRandomTest, RefusesWhatTheTypesCannotHold) {
  EXPECT_EQ(DefaultFillScale(ScalarType::kS8), 8.0f);
  EXPECT_EQ(DefaultFillScale(ScalarType::kU8), 8.0f);
  EXPECT_EQ(DefaultFillScale(ScalarType::kE4M3), 1.0f);
  EXPECT_EQ(DefaultFillScale(ScalarType::kF32), 1.0f);
  const auto refused = [](ScalarType type, float scale) {
    const absl::Status status = FillRandom(0, 0, type, 1, scale, nullptr);
    return status.code() == absl::StatusCode::kInvalidArgument &&
           absl::StrContains(status.message(), "FillRandom: scale");
  };
  EXPECT_TRUE(refused(ScalarType::kS8, 128.0f));
  EXPECT_TRUE(refused(ScalarType::kU8, 256.0f));
  EXPECT_TRUE(refused(ScalarType::kF16, 65536.0f));
  EXPECT_TRUE(refused(ScalarType::kE4M3, INFINITY));
  EXPECT_TRUE(refused(ScalarType::kF32, NAN));
  EXPECT_TRUE(refused(ScalarType::kBF16, -1.0f));
  EXPECT_FALSE(refused(ScalarType::kS8, 127.0f));
  EXPECT_FALSE(refused(ScalarType::kE4M3, 1e6f));  // saturates
  EXPECT_EQ(FillRandom(0, -1, ScalarType::kF16, 1, nullptr).message(),
            "FillRandom: count -1 is negative");
  EXPECT_EQ(PoisonValues(0, -1, ScalarType::kS32, nullptr).message(),
            "PoisonValues: count -1 is negative");
  EXPECT_EQ(PoisonValues(0, 1, static_cast<ScalarType>(99), nullptr).message(),
            "PoisonValues: unknown element type");
  EXPECT_EQ(
      CublasGemm({8, 8, 16, ScalarType::kE4M3}, 0, 0, 0, nullptr).message(),
      "CublasGemm: f16 or bf16 inputs only, not e4m3");
}

// A value per (row, column) of a logical matrix, distinct everywhere.
double AValue(int64_t i, int64_t l) { return 1 + i * 10 + l; }
double BValue(int64_t j, int64_t l) { return (j + 1) * (l % 2 ? -1 : 1); }

// The logical [rows, k] matrix `value` stored as `major` says with leading
// dimension `ld`, `batch` times `stride` apart (matrix b adds 100 * b);
// padding holds NaN, so that reading it shows.
std::vector<double> Stored(double (*value)(int64_t, int64_t), int64_t rows,
                           int64_t k, ptx::MajorOrder major, int64_t ld,
                           int64_t batch, int64_t stride) {
  std::vector<double> stored(batch * stride, NAN);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t l = 0; l < k; ++l) {
        const int64_t at =
            major == ptx::MajorOrder::kK ? r * ld + l : l * ld + r;
        stored[b * stride + at] = value(r, l) + 100 * b;
      }
    }
  }
  return stored;
}

TEST(HostReferenceTest, HonoursMajorsLeadingDimensionsAndBatches) {
  for (ptx::MajorOrder a_major : {ptx::MajorOrder::kK, ptx::MajorOrder::kMN}) {
    for (ptx::MajorOrder b_major :
         {ptx::MajorOrder::kK, ptx::MajorOrder::kMN}) {
      GemmProblem p{2, 3, 4, ScalarType::kE4M3};
      p.a_major = a_major;
      p.b_major = b_major;
      p.lda = (a_major == ptx::MajorOrder::kK ? p.k : p.m) + 3;
      p.ldb = (b_major == ptx::MajorOrder::kK ? p.k : p.n) + 1;
      p.batch = 2;
      p.stride_a = 40;
      p.stride_b = 50;
      p.alpha = 0.5f;
      SCOPED_TRACE(absl::StrCat("A ", a_major == ptx::MajorOrder::kK, " B ",
                                b_major == ptx::MajorOrder::kK));
      const std::vector<double> a =
          Stored(AValue, p.m, p.k, a_major, p.lda, p.batch, p.stride_a);
      const std::vector<double> b =
          Stored(BValue, p.n, p.k, b_major, p.ldb, p.batch, p.stride_b);
      const std::vector<double> d = HostReferenceGemm(p, a, b);
      ASSERT_EQ(d.size(), static_cast<size_t>(p.batch * p.m * p.n));
      for (int64_t batch = 0; batch < p.batch; ++batch) {
        for (int64_t i = 0; i < p.m; ++i) {
          for (int64_t j = 0; j < p.n; ++j) {
            double sum = 0;
            for (int64_t l = 0; l < p.k; ++l) {
              sum +=
                  (AValue(i, l) + 100 * batch) * (BValue(j, l) + 100 * batch);
            }
            EXPECT_EQ(d[(batch * p.m + i) * p.n + j], 0.5 * sum);
          }
        }
      }
      const std::vector<double> short_a(a.begin(),
                                        a.begin() + StoredSpans(p)->a - 1);
      EXPECT_TRUE(HostReferenceGemm(p, short_a, b).empty());
    }
  }
}

// A packed 1x1x2 product by hand: [1, 2] . [3, 4] = 11.
TEST(HostReferenceTest, PackedProductByHand) {
  GemmProblem p{1, 1, 2, ScalarType::kS8};
  EXPECT_EQ(HostReferenceGemm(p, std::vector<double>{1, 2},
                              std::vector<double>{3, 4}),
            std::vector<double>{11});
  p.m = -1;
  EXPECT_TRUE(
      HostReferenceGemm(p, std::vector<double>{1, 2}, std::vector<double>{3, 4})
          .empty());
}

TEST(RelativeErrorTest, NormsAndNonFiniteResults) {
  EXPECT_EQ(RelativeErrorByNorm({3, 4}, {3, 4}), 0);
  EXPECT_DOUBLE_EQ(RelativeErrorByNorm({3, 5}, {3, 4}), 0.2);
  EXPECT_DOUBLE_EQ(RelativeErrorByNorm({1, 0}, {0, 0}), 1.0);  // absolute
  EXPECT_EQ(RelativeErrorByNorm({NAN, 4}, {3, 4}), INFINITY);
  EXPECT_EQ(RelativeErrorByNorm({INFINITY, 4}, {3, 4}), INFINITY);
  EXPECT_EQ(RelativeErrorByNorm({3}, {3, 4}), INFINITY);
}

}  // namespace
}  // namespace ptxgen::gemm
