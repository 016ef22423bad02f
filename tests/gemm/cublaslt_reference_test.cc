// The cuBLASLt reference as a specification: how an LtGemm in ptxgen's
// row-major terms becomes cuBLASLt's column-major call (ToCublasLt, pure),
// what is refused and how, and what PreparedLtGemm hands to cuBLASLt, read
// back from a stand-in library that records every call, fails the call it
// is told to, and counts what is alive (nothing may be left on any path).
#include "lib/testing/cublaslt_reference.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/cublaslt_library.h"

// cuBLASLt 13 leaks 192 bytes inside every cublasLtCreate that fails (as it
// does here without a GPU; checked with a plain program under ASan: n
// failed calls, n blocks). Under LeakSanitizer (tools/sanitize.sh) that is
// excused, and only that: allocations with cublasLtCreate on their stack.
// The hook must be defined in the executable, so each test that calls the
// real library has its own.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:^cublasLtCreate$\n";
}

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;
using Bias = LtGemm::Bias;
using Activation = LtGemm::Activation;

// m, n, k and leading dimensions all different, so that a swapped pair
// cannot pass for the right one.
constexpr int64_t kM = 64, kN = 128, kK = 32;

LtGemm Padded(bool a_k_major, bool b_k_major) {
  LtGemm gemm = PackedLtGemm(kM, kN, kK, ScalarType::kF16, ScalarType::kF16,
                             a_k_major, b_k_major);
  gemm.lda = a_k_major ? kK + 8 : kM + 8;
  gemm.ldb = b_k_major ? kK + 16 : kN + 8;
  gemm.ldc = kN + 16;
  gemm.ldd = kN + 32;
  gemm.beta = 0.5f;
  return gemm;
}

// The same problem in other families (Padded's sizes and layouts, which are
// K-major for fp8 and int8 refusals to be about one thing at a time).
void ToFp8(LtGemm& g) {
  g.a_type = g.b_type = ScalarType::kE4M3;
  g.c_type = g.d_type = g.bias_type = ScalarType::kBF16;
}
void ToTf32(LtGemm& g) {
  g.a_type = g.b_type = ScalarType::kTF32;
  g.c_type = g.d_type = g.bias_type = ScalarType::kF32;
}
void ToInt8(LtGemm& g) {
  g.a_type = g.b_type = ScalarType::kS8;
  g.c_type = g.d_type = g.bias_type = ScalarType::kS32;
}

// ---------------------------------------------------------------------------
// The mapping.

struct MajorCase {
  bool a_k_major, b_k_major;
  // What cuBLASLt is to be given: A' is ptxgen's B, B' is ptxgen's A.
  cublasOperation_t transa;
  uint64_t a_rows, a_cols;
  int64_t a_ld;
  cublasOperation_t transb;
  uint64_t b_rows, b_cols;
  int64_t b_ld;
};

// op(A') is M' x K = n x k and op(B') is K x N' = k x m.
const MajorCase kMajorCases[] = {
    // B [n,k] is col-major k x n, transposed; A [m,k] is col-major k x m.
    {true, true, CUBLAS_OP_T, kK, kN, kK + 16, CUBLAS_OP_N, kK, kM, kK + 8},
    // B [k,n] is col-major n x k as it is.
    {true, false, CUBLAS_OP_N, kN, kK, kN + 8, CUBLAS_OP_N, kK, kM, kK + 8},
    // A [k,m] is col-major m x k, transposed.
    {false, true, CUBLAS_OP_T, kK, kN, kK + 16, CUBLAS_OP_T, kM, kK, kM + 8},
    {false, false, CUBLAS_OP_N, kN, kK, kN + 8, CUBLAS_OP_T, kM, kK, kM + 8},
};

class MajorTest : public testing::TestWithParam<MajorCase> {};

TEST_P(MajorTest, SwapsTheOperandsAndTransposesToViewDAsColumnMajorDT) {
  const MajorCase& expected = GetParam();
  const absl::StatusOr<CublasLtCall> call =
      ToCublasLt(Padded(expected.a_k_major, expected.b_k_major));
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->m, uint64_t{kN});
  EXPECT_EQ(call->n, uint64_t{kM});
  EXPECT_EQ(call->k, uint64_t{kK});
  EXPECT_EQ(call->transa, expected.transa);
  EXPECT_EQ(call->a.rows, expected.a_rows);
  EXPECT_EQ(call->a.cols, expected.a_cols);
  EXPECT_EQ(call->a.ld, expected.a_ld);
  EXPECT_EQ(call->transb, expected.transb);
  EXPECT_EQ(call->b.rows, expected.b_rows);
  EXPECT_EQ(call->b.cols, expected.b_cols);
  EXPECT_EQ(call->b.ld, expected.b_ld);
  // C and D [m,n] row-major are col-major n x m.
  EXPECT_EQ(call->c.rows, uint64_t{kN});
  EXPECT_EQ(call->c.cols, uint64_t{kM});
  EXPECT_EQ(call->c.ld, kN + 16);
  EXPECT_EQ(call->d.rows, uint64_t{kN});
  EXPECT_EQ(call->d.cols, uint64_t{kM});
  EXPECT_EQ(call->d.ld, kN + 32);
  for (const CublasLtLayout* layout :
       {&call->a, &call->b, &call->c, &call->d}) {
    EXPECT_EQ(layout->type, CUDA_R_16F);
    EXPECT_EQ(layout->batch_count, 1);
    EXPECT_EQ(layout->batch_stride, 0);
  }
  EXPECT_EQ(call->compute_type, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(call->scale_type, CUDA_R_32F);
  EXPECT_TRUE(call->reads_c);
  EXPECT_EQ(call->beta, 0.5f);
  EXPECT_EQ(call->epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_FALSE(call->uses_bias);
}

INSTANTIATE_TEST_SUITE_P(EveryMajor, MajorTest, testing::ValuesIn(kMajorCases),
                         [](const testing::TestParamInfo<MajorCase>& info) {
                           return absl::StrCat(
                               "A", info.param.a_k_major ? "K" : "MN", "_B",
                               info.param.b_k_major ? "K" : "MN");
                         });

// The product as cuBLASLt defines it, from the layouts ToCublasLt gives,
// against ptxgen's definition, on small integer matrices: the mapping
// computes the same numbers, not only plausible parameters.
TEST(ToCublasLt, TheColumnMajorProductIsPtxgensProduct) {
  for (const MajorCase& major : kMajorCases) {
    const int64_t m = 3, n = 5, k = 4;
    LtGemm gemm = PackedLtGemm(m, n, k, ScalarType::kF16, ScalarType::kF16,
                               major.a_k_major, major.b_k_major);
    gemm.lda += 1;
    gemm.ldb += 2;
    gemm.ldd += 3;
    const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
    ASSERT_TRUE(call.ok()) << call.status();
    std::vector<double> a(
        static_cast<size_t>((major.a_k_major ? m : k) * gemm.lda));
    std::vector<double> b(
        static_cast<size_t>((major.b_k_major ? n : k) * gemm.ldb));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2;
    auto a_at = [&](int64_t i, int64_t l) {  // ptxgen's A(i,l)
      return a[major.a_k_major ? i * gemm.lda + l : l * gemm.lda + i];
    };
    auto b_at = [&](int64_t j, int64_t l) {
      return b[major.b_k_major ? j * gemm.ldb + l : l * gemm.ldb + j];
    };
    // cuBLAS: element (r, c) of a col-major matrix is at r + c * ld.
    auto op = [](const std::vector<double>& x, const CublasLtLayout& layout,
                 cublasOperation_t trans, int64_t r, int64_t c) {
      return trans == CUBLAS_OP_N ? x[r + c * layout.ld] : x[c + r * layout.ld];
    };
    std::vector<double> d(static_cast<size_t>(m * gemm.ldd), 0);
    for (uint64_t r = 0; r < call->m; ++r) {
      for (uint64_t c = 0; c < call->n; ++c) {
        double sum = 0;
        for (uint64_t l = 0; l < call->k; ++l) {
          // A' holds ptxgen's b, B' ptxgen's a.
          sum += op(b, call->a, call->transa, r, l) *
                 op(a, call->b, call->transb, l, c);
        }
        d[r + c * call->d.ld] = sum;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double expected = 0;
        for (int64_t l = 0; l < k; ++l) expected += a_at(i, l) * b_at(j, l);
        EXPECT_EQ(d[i * gemm.ldd + j], expected)
            << "A " << major.a_k_major << " B " << major.b_k_major << " at "
            << i << "," << j;
      }
    }
  }
}

TEST(ToCublasLt, TypesBecomeCudaDataTypes) {
  struct Case {
    ScalarType input, output;
    cudaDataType cuda_input, cuda_output;
  };
  for (const Case& c : {
           Case{ScalarType::kF16, ScalarType::kF16, CUDA_R_16F, CUDA_R_16F},
           Case{ScalarType::kF16, ScalarType::kF32, CUDA_R_16F, CUDA_R_32F},
           Case{ScalarType::kBF16, ScalarType::kBF16, CUDA_R_16BF, CUDA_R_16BF},
           Case{ScalarType::kBF16, ScalarType::kF32, CUDA_R_16BF, CUDA_R_32F},
           Case{ScalarType::kF32, ScalarType::kF32, CUDA_R_32F, CUDA_R_32F},
       }) {
    LtGemm gemm = PackedLtGemm(8, 16, 32, c.input, c.output);
    gemm.beta = 1;
    gemm.bias = Bias::kAlongN;
    const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
    ASSERT_TRUE(call.ok()) << call.status();
    EXPECT_EQ(call->a.type, c.cuda_input);
    EXPECT_EQ(call->b.type, c.cuda_input);
    EXPECT_EQ(call->c.type, c.cuda_output);
    EXPECT_EQ(call->d.type, c.cuda_output);
    EXPECT_EQ(call->bias_type, c.cuda_output);
  }
}

TEST(ToCublasLt, Tf32IsF32InMemoryWithFastTf32Compute) {
  LtGemm gemm = PackedLtGemm(8, 16, 32, ScalarType::kTF32, ScalarType::kF32,
                             false, false);
  EXPECT_EQ(gemm.c_type, ScalarType::kF32);
  EXPECT_EQ(gemm.bias_type, ScalarType::kF32);
  gemm.beta = 1;
  gemm.bias = Bias::kAlongN;
  gemm.activation = Activation::kGelu;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  for (const CublasLtLayout* layout :
       {&call->a, &call->b, &call->c, &call->d}) {
    EXPECT_EQ(layout->type, CUDA_R_32F);
  }
  EXPECT_EQ(call->bias_type, CUDA_R_32F);
  EXPECT_EQ(call->compute_type, CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(call->scale_type, CUDA_R_32F);
  EXPECT_EQ(call->epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_FALSE(call->sets_fast_accum);
  // Either major, as for f32.
  EXPECT_EQ(call->transa, CUBLAS_OP_N);
  EXPECT_EQ(call->transb, CUBLAS_OP_T);
}

// cuBLASLt's fp8 table: for each pair of inputs and D, the C and bias types.
TEST(ToCublasLt, Fp8TypesFollowCublasLtsTable) {
  using T = ScalarType;
  struct Case {
    T a, b, d, c, bias;
    cudaDataType cuda_c, cuda_d, cuda_bias;
  };
  for (const Case& c : {
           Case{T::kE4M3, T::kE4M3, T::kBF16, T::kBF16, T::kBF16, CUDA_R_16BF,
                CUDA_R_16BF, CUDA_R_16BF},
           Case{T::kE4M3, T::kE4M3, T::kF16, T::kF16, T::kF16, CUDA_R_16F,
                CUDA_R_16F, CUDA_R_16F},
           Case{T::kE4M3, T::kE4M3, T::kF32, T::kF32, T::kBF16, CUDA_R_32F,
                CUDA_R_32F, CUDA_R_16BF},
           Case{T::kE4M3, T::kE4M3, T::kE4M3, T::kBF16, T::kBF16, CUDA_R_16BF,
                CUDA_R_8F_E4M3, CUDA_R_16BF},
           Case{T::kE4M3, T::kE4M3, T::kE4M3, T::kF16, T::kF16, CUDA_R_16F,
                CUDA_R_8F_E4M3, CUDA_R_16F},
           Case{T::kE4M3, T::kE5M2, T::kE5M2, T::kBF16, T::kBF16, CUDA_R_16BF,
                CUDA_R_8F_E5M2, CUDA_R_16BF},
           Case{T::kE5M2, T::kE4M3, T::kE5M2, T::kF16, T::kF16, CUDA_R_16F,
                CUDA_R_8F_E5M2, CUDA_R_16F},
           Case{T::kE5M2, T::kE4M3, T::kE4M3, T::kBF16, T::kBF16, CUDA_R_16BF,
                CUDA_R_8F_E4M3, CUDA_R_16BF},
           Case{T::kE5M2, T::kE4M3, T::kBF16, T::kBF16, T::kBF16, CUDA_R_16BF,
                CUDA_R_16BF, CUDA_R_16BF},
           Case{T::kE4M3, T::kE5M2, T::kF32, T::kF32, T::kBF16, CUDA_R_32F,
                CUDA_R_32F, CUDA_R_16BF},
       }) {
    LtGemm gemm = PackedLtGemm(64, 128, 64, c.a, c.d);
    gemm.b_type = c.b;
    gemm.c_type = c.c;
    gemm.bias_type = c.bias;
    gemm.beta = 1;
    gemm.bias = Bias::kAlongN;
    const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
    ASSERT_TRUE(call.ok()) << DescribeLtGemm(gemm) << ": " << call.status();
    SCOPED_TRACE(DescribeLtGemm(gemm));
    // A' is ptxgen's B, B' ptxgen's A.
    EXPECT_EQ(call->a.type, *CudaDataType(c.b));
    EXPECT_EQ(call->b.type, *CudaDataType(c.a));
    EXPECT_EQ(call->c.type, c.cuda_c);
    EXPECT_EQ(call->d.type, c.cuda_d);
    EXPECT_EQ(call->bias_type, c.cuda_bias);
    EXPECT_EQ(call->compute_type, CUBLAS_COMPUTE_32F);
    EXPECT_EQ(call->scale_type, CUDA_R_32F);
    EXPECT_EQ(call->transa, CUBLAS_OP_T);  // "TN"
    EXPECT_EQ(call->transb, CUBLAS_OP_N);
    EXPECT_TRUE(call->sets_fast_accum);
    EXPECT_FALSE(call->fast_accum);
    EXPECT_FALSE(call->a_scale || call->b_scale || call->d_scale ||
                 call->amax_d);
  }
}

TEST(ToCublasLt, AnFp8DsUnreadCTakesDsLayoutInCsType) {
  const LtGemm gemm =
      PackedLtGemm(64, 128, 64, ScalarType::kE4M3, ScalarType::kE4M3);
  EXPECT_EQ(gemm.c_type, ScalarType::kBF16);  // PackedLtGemm's choice
  EXPECT_EQ(gemm.bias_type, ScalarType::kBF16);
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_FALSE(call->reads_c);
  EXPECT_EQ(call->c.type, CUDA_R_16BF);
  EXPECT_EQ(call->d.type, CUDA_R_8F_E4M3);
  EXPECT_EQ(call->c.ld, call->d.ld);
  EXPECT_EQ(call->c.rows, call->d.rows);
  EXPECT_EQ(call->c.cols, call->d.cols);
}

TEST(ToCublasLt, Fp8ScalesGoToTheSwappedOperands) {
  LtGemm gemm = PackedLtGemm(64, 128, 64, ScalarType::kE4M3, ScalarType::kE5M2);
  gemm.b_type = ScalarType::kE5M2;
  gemm.scale_a = true;
  absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->b_scale);  // B' is ptxgen's A
  EXPECT_FALSE(call->a_scale);
  gemm.scale_a = false;
  gemm.scale_b = true;
  gemm.fast_accumulation = true;
  call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->a_scale);
  EXPECT_FALSE(call->b_scale);
  EXPECT_FALSE(call->d_scale);
  EXPECT_FALSE(call->amax_d);
  EXPECT_TRUE(call->fast_accum);
  gemm.scale_d = gemm.amax_d = true;
  call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->d_scale);
  EXPECT_TRUE(call->amax_d);
  // amax_d needs no fp8 D.
  gemm = PackedLtGemm(64, 128, 64, ScalarType::kE4M3, ScalarType::kBF16);
  gemm.amax_d = true;
  call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->amax_d);
}

TEST(ToCublasLt, Int8ToS32HasInt32AlphaAndBeta) {
  LtGemm gemm = PackedLtGemm(64, 128, 32, ScalarType::kS8, ScalarType::kS32);
  gemm.alpha = 3;
  gemm.beta = -2;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->a.type, CUDA_R_8I);
  EXPECT_EQ(call->b.type, CUDA_R_8I);
  EXPECT_EQ(call->c.type, CUDA_R_32I);
  EXPECT_EQ(call->d.type, CUDA_R_32I);
  EXPECT_EQ(call->compute_type, CUBLAS_COMPUTE_32I);
  EXPECT_EQ(call->scale_type, CUDA_R_32I);
  EXPECT_EQ(call->alpha_int, 3);
  EXPECT_EQ(call->beta_int, -2);
  EXPECT_TRUE(call->reads_c);
  EXPECT_EQ(call->transa, CUBLAS_OP_T);  // "TN"
  EXPECT_EQ(call->transb, CUBLAS_OP_N);
  EXPECT_EQ(call->epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_FALSE(call->sets_fast_accum);
}

TEST(ToCublasLt, Int8ToS8HasF32AlphaAndBeta) {
  LtGemm gemm = PackedLtGemm(64, 128, 32, ScalarType::kS8, ScalarType::kS8);
  gemm.alpha = 0.25f;
  gemm.beta = 0.5f;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  for (const CublasLtLayout* layout :
       {&call->a, &call->b, &call->c, &call->d}) {
    EXPECT_EQ(layout->type, CUDA_R_8I);
  }
  EXPECT_EQ(call->compute_type, CUBLAS_COMPUTE_32I);
  EXPECT_EQ(call->scale_type, CUDA_R_32F);
  EXPECT_EQ(call->alpha, 0.25f);
  EXPECT_EQ(call->beta, 0.5f);
}

TEST(CudaDataType, EveryScalarTypeHasOne) {
  using T = ScalarType;
  for (const auto& [type, expected] :
       std::vector<std::pair<ScalarType, cudaDataType>>{
           {T::kF16, CUDA_R_16F},
           {T::kBF16, CUDA_R_16BF},
           {T::kTF32, CUDA_R_32F},
           {T::kE4M3, CUDA_R_8F_E4M3},
           {T::kE5M2, CUDA_R_8F_E5M2},
           {T::kS8, CUDA_R_8I},
           {T::kU8, CUDA_R_8U},
           {T::kF32, CUDA_R_32F},
           {T::kS32, CUDA_R_32I},
       }) {
    const absl::StatusOr<cudaDataType> cuda = CudaDataType(type);
    ASSERT_TRUE(cuda.ok()) << cuda.status();
    EXPECT_EQ(*cuda, expected) << ptx::PtxName(type);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      CudaDataType(static_cast<ScalarType>(42)).status()));
}

TEST(ToCublasLt, BatchesCarryTheirStridesToTheSwappedOperands) {
  LtGemm gemm = Padded(true, false);
  gemm.batch = 3;
  gemm.stride_a = 10000;
  gemm.stride_b = 20000;
  gemm.stride_c = 30000;
  gemm.stride_d = 40000;
  gemm.stride_bias = 256;
  gemm.bias = Bias::kAlongN;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  for (const CublasLtLayout* layout :
       {&call->a, &call->b, &call->c, &call->d}) {
    EXPECT_EQ(layout->batch_count, 3);
  }
  EXPECT_EQ(call->a.batch_stride, 20000);  // A' is B
  EXPECT_EQ(call->b.batch_stride, 10000);  // B' is A
  EXPECT_EQ(call->c.batch_stride, 30000);
  EXPECT_EQ(call->d.batch_stride, 40000);
  EXPECT_EQ(call->bias_batch_stride, 256);
}

TEST(ToCublasLt, ABatchOfOneHasNoStrides) {
  LtGemm gemm = Padded(true, true);
  gemm.stride_a = gemm.stride_d = 12345;
  gemm.bias = Bias::kAlongN;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->b.batch_stride, 0);
  EXPECT_EQ(call->d.batch_stride, 0);
  EXPECT_EQ(call->bias_batch_stride, 0);
}

TEST(ToCublasLt, InputStridesMayBeZeroToReuseOneMatrix) {
  LtGemm gemm = PackedLtGemm(8, 16, 32, ScalarType::kBF16, ScalarType::kBF16,
                             true, true, /*batch=*/4);
  gemm.stride_b = 0;
  gemm.stride_bias = 0;
  gemm.bias = Bias::kAlongN;
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->a.batch_stride, 0);
  EXPECT_EQ(call->bias_batch_stride, 0);
}

TEST(ToCublasLt, EachBiasAndActivationHasItsEpilogue) {
  struct Case {
    Bias bias;
    Activation activation;
    cublasLtEpilogue_t epilogue;
    bool uses_bias;
  };
  for (const Case& c : {
           Case{Bias::kNone, Activation::kNone, CUBLASLT_EPILOGUE_DEFAULT,
                false},
           Case{Bias::kNone, Activation::kRelu, CUBLASLT_EPILOGUE_RELU, false},
           Case{Bias::kNone, Activation::kGelu, CUBLASLT_EPILOGUE_GELU, false},
           Case{Bias::kAlongN, Activation::kNone, CUBLASLT_EPILOGUE_BIAS, true},
           Case{Bias::kAlongN, Activation::kRelu, CUBLASLT_EPILOGUE_RELU_BIAS,
                true},
           Case{Bias::kAlongN, Activation::kGelu, CUBLASLT_EPILOGUE_GELU_BIAS,
                true},
       }) {
    LtGemm gemm = Padded(true, true);
    gemm.bias = c.bias;
    gemm.activation = c.activation;
    const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
    ASSERT_TRUE(call.ok()) << call.status();
    EXPECT_EQ(call->epilogue, c.epilogue) << DescribeLtGemm(gemm);
    EXPECT_EQ(call->uses_bias, c.uses_bias) << DescribeLtGemm(gemm);
  }
}

TEST(ToCublasLt, WithBetaZeroCIsNotReadAndTakesDsLayout) {
  LtGemm gemm = Padded(true, true);
  gemm.beta = 0;
  gemm.ldc = 0;                     // ignored
  gemm.c_type = ScalarType::kBF16;  // ignored
  gemm.batch = 2;
  gemm.stride_d = kM * (kN + 32);
  gemm.stride_c = -1;  // ignored
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_FALSE(call->reads_c);
  EXPECT_EQ(call->c.ld, call->d.ld);
  EXPECT_EQ(call->c.type, call->d.type);
  EXPECT_EQ(call->c.batch_stride, call->d.batch_stride);
}

struct Refusal {
  const char* what;
  void (*change)(LtGemm&);
  absl::StatusCode code;
  const char* message;
};

const Refusal kRefusals[] = {
    {"m0", [](LtGemm& g) { g.m = 0; }, absl::StatusCode::kInvalidArgument,
     "m=0 is not in 1..2147483647"},
    {"n_negative", [](LtGemm& g) { g.n = -4; },
     absl::StatusCode::kInvalidArgument, "n=-4 is not in 1..2147483647"},
    {"k_huge", [](LtGemm& g) { g.k = int64_t{1} << 31; },
     absl::StatusCode::kInvalidArgument,
     "k=2147483648 is not in 1..2147483647"},
    {"lda_short_k_major", [](LtGemm& g) { g.lda = kK - 1; },
     absl::StatusCode::kInvalidArgument,
     "lda=31 is not in 32..2147483647 (A is [m,k], K-major)"},
    {"lda_short_mn_major",
     [](LtGemm& g) {
       g.a_k_major = false;
       g.lda = kK;  // a K-major row, too short for [k,m]
     },
     absl::StatusCode::kInvalidArgument,
     "lda=32 is not in 64..2147483647 (A is [k,m], MN-major)"},
    {"ldb_short_mn_major",
     [](LtGemm& g) {
       g.b_k_major = false;
       g.ldb = kN - 1;
     },
     absl::StatusCode::kInvalidArgument,
     "ldb=127 is not in 128..2147483647 (B is [k,n], MN-major)"},
    {"ldc_short", [](LtGemm& g) { g.ldc = kN - 8; },
     absl::StatusCode::kInvalidArgument,
     "ldc=120 is not in 128..2147483647 (C is [m,n])"},
    {"ldd_zero", [](LtGemm& g) { g.ldd = 0; },
     absl::StatusCode::kInvalidArgument,
     "ldd=0 is not in 128..2147483647 (D is [m,n])"},
    {"batch0", [](LtGemm& g) { g.batch = 0; },
     absl::StatusCode::kInvalidArgument, "batch=0 is not at least 1"},
    {"batches_of_d_overlap",
     [](LtGemm& g) {
       g.batch = 2;
       g.stride_d = (kM - 1) * g.ldd + kN - 1;
     },
     absl::StatusCode::kInvalidArgument,
     "stride_d=10207 is not in 10208..4294967296 (batches of D would "
     "overlap: one spans (m-1)*ldd+n = 10208)"},
    {"stride_a_negative",
     [](LtGemm& g) {
       g.batch = 2;
       g.stride_a = -1;
     },
     absl::StatusCode::kInvalidArgument, "stride_a=-1 is not in 0..4294967296"},
    {"s32_input", [](LtGemm& g) { g.a_type = g.b_type = ScalarType::kS32; },
     absl::StatusCode::kUnimplemented,
     "a_type s32 is not an input type (f16, bf16, f32, tf32, e4m3, e5m2, s8)"},
    {"u8", [](LtGemm& g) { g.b_type = ScalarType::kU8; },
     absl::StatusCode::kUnimplemented,
     "b_type u8 is not supported: cuBLASLt's integer GEMMs take s8"},
    {"s32_output", [](LtGemm& g) { g.d_type = ScalarType::kS32; },
     absl::StatusCode::kUnimplemented,
     "f16 inputs give f16 or f32 outputs, not d_type s32"},
    {"mixed_inputs", [](LtGemm& g) { g.b_type = ScalarType::kBF16; },
     absl::StatusCode::kUnimplemented,
     "a_type f16 and b_type bf16 differ: cuBLASLt mixes input types only for "
     "fp8 (e4m3 with e5m2)"},
    {"fp8_with_f16", [](LtGemm& g) { g.b_type = ScalarType::kE4M3; },
     absl::StatusCode::kUnimplemented,
     "a_type f16 and b_type e4m3 differ: cuBLASLt mixes input types only for "
     "fp8 (e4m3 with e5m2)"},
    {"tf32_with_f32",
     [](LtGemm& g) {
       g.a_type = ScalarType::kTF32;
       g.b_type = ScalarType::kF32;
     },
     absl::StatusCode::kUnimplemented,
     "a_type tf32 and b_type f32 differ: cuBLASLt mixes input types only for "
     "fp8 (e4m3 with e5m2)"},
    {"tf32_to_f16", [](LtGemm& g) { g.a_type = g.b_type = ScalarType::kTF32; },
     absl::StatusCode::kUnimplemented,
     "tf32 inputs give f32 outputs, not d_type f16"},
    {"tf32_output",
     [](LtGemm& g) { g.c_type = g.d_type = g.bias_type = ScalarType::kTF32; },
     absl::StatusCode::kUnimplemented,
     "f16 inputs give f16 or f32 outputs, not d_type tf32"},
    {"scale_a_without_fp8", [](LtGemm& g) { g.scale_a = true; },
     absl::StatusCode::kUnimplemented,
     "scale_a is for fp8 inputs (e4m3, e5m2), not f16"},
    {"amax_d_without_fp8", [](LtGemm& g) { g.amax_d = true; },
     absl::StatusCode::kUnimplemented,
     "amax_d is for fp8 inputs (e4m3, e5m2), not f16"},
    {"fast_accumulation_without_fp8",
     [](LtGemm& g) {
       ToTf32(g);
       g.fast_accumulation = true;
     },
     absl::StatusCode::kUnimplemented,
     "fast_accumulation is for fp8 inputs (e4m3, e5m2), not tf32"},
    // fp8.
    {"e5m2_x_e5m2",
     [](LtGemm& g) {
       ToFp8(g);
       g.a_type = g.b_type = ScalarType::kE5M2;
     },
     absl::StatusCode::kUnimplemented,
     "a_type and b_type are both e5m2: cuBLASLt's fp8 GEMMs take e4m3 x e4m3, "
     "e4m3 x e5m2 or e5m2 x e4m3"},
    {"fp8_A_mn_major",
     [](LtGemm& g) {
       ToFp8(g);
       g.a_k_major = false;
       g.lda = kM;
     },
     absl::StatusCode::kUnimplemented,
     "A is MN-major: fp8 inputs must be K-major (A [m,k], B [n,k]), as "
     "cuBLASLt's fp8 kernels take only its \"TN\" layout"},
    {"fp8_B_mn_major",
     [](LtGemm& g) {
       ToFp8(g);
       g.b_type = ScalarType::kE5M2;
       g.b_k_major = false;
       g.ldb = kN;
     },
     absl::StatusCode::kUnimplemented,
     "B is MN-major: fp8 inputs must be K-major (A [m,k], B [n,k]), as "
     "cuBLASLt's fp8 kernels take only its \"TN\" layout"},
    {"e4m3_x_e4m3_to_e5m2",
     [](LtGemm& g) {
       ToFp8(g);
       g.d_type = ScalarType::kE5M2;
     },
     absl::StatusCode::kUnimplemented,
     "e4m3 x e4m3 inputs give bf16, f16, f32 or e4m3 outputs, not d_type e5m2 "
     "(cuBLASLt writes e5m2 only from e4m3 x e5m2 or e5m2 x e4m3)"},
    {"fp8_to_s8",
     [](LtGemm& g) {
       ToFp8(g);
       g.a_type = ScalarType::kE5M2;
       g.d_type = ScalarType::kS8;
     },
     absl::StatusCode::kUnimplemented,
     "e5m2 x e4m3 inputs give bf16, f16, f32, e4m3 or e5m2 outputs, not "
     "d_type s8"},
    {"fp8_d_with_f32_c",
     [](LtGemm& g) {
       ToFp8(g);
       g.d_type = ScalarType::kE4M3;
       g.c_type = ScalarType::kF32;
     },
     absl::StatusCode::kUnimplemented,
     "c_type f32 is not bf16 or f16: cuBLASLt's C for an fp8 D is bf16 or f16 "
     "(its layout has that type even when beta == 0)"},
    {"fp8_d_with_fp8_c_beta_zero",
     [](LtGemm& g) {
       ToFp8(g);
       g.beta = 0;
       g.c_type = g.d_type = ScalarType::kE4M3;
     },
     absl::StatusCode::kUnimplemented,
     "c_type e4m3 is not bf16 or f16: cuBLASLt's C for an fp8 D is bf16 or "
     "f16 (its layout has that type even when beta == 0)"},
    {"fp8_bf16_d_with_f32_c",
     [](LtGemm& g) {
       ToFp8(g);
       g.c_type = ScalarType::kF32;
     },
     absl::StatusCode::kUnimplemented,
     "c_type f32 differs from d_type bf16: with f32 compute cuBLASLt reads C "
     "in D's type"},
    {"fp8_f32_d_with_f32_bias",
     [](LtGemm& g) {
       ToFp8(g);
       g.c_type = g.d_type = g.bias_type = ScalarType::kF32;
       g.bias = Bias::kAlongN;
     },
     absl::StatusCode::kUnimplemented,
     "bias_type f32 is not bf16: with fp8 inputs and an f32 D cuBLASLt's bias "
     "is bf16"},
    {"fp8_d_with_bias_not_c",
     [](LtGemm& g) {
       ToFp8(g);
       g.d_type = ScalarType::kE4M3;
       g.c_type = ScalarType::kF16;
       g.bias_type = ScalarType::kBF16;
       g.bias = Bias::kAlongN;
     },
     absl::StatusCode::kUnimplemented,
     "bias_type bf16 is not f16: with an fp8 D cuBLASLt's bias has C's type"},
    {"fp8_bf16_d_with_f16_bias",
     [](LtGemm& g) {
       ToFp8(g);
       g.bias_type = ScalarType::kF16;
       g.bias = Bias::kAlongN;
     },
     absl::StatusCode::kUnimplemented,
     "bias_type f16 differs from d_type bf16: cuBLASLt's bias has D's type"},
    {"scale_d_without_fp8_d",
     [](LtGemm& g) {
       ToFp8(g);
       g.scale_d = true;
     },
     absl::StatusCode::kUnimplemented,
     "scale_d is for an fp8 D (e4m3, e5m2), not d_type bf16"},
    // int8.
    {"s8_to_f16", [](LtGemm& g) { g.a_type = g.b_type = ScalarType::kS8; },
     absl::StatusCode::kUnimplemented,
     "s8 inputs give s32 or s8 outputs, not d_type f16"},
    {"s8_A_mn_major",
     [](LtGemm& g) {
       ToInt8(g);
       g.a_k_major = false;
       g.lda = kM;
     },
     absl::StatusCode::kUnimplemented,
     "A is MN-major: s8 inputs must be K-major (A [m,k], B [n,k]), as "
     "cuBLASLt's int8 kernels take only its \"TN\" layout"},
    {"s8_B_mn_major",
     [](LtGemm& g) {
       ToInt8(g);
       g.b_k_major = false;
       g.ldb = kN;
     },
     absl::StatusCode::kUnimplemented,
     "B is MN-major: s8 inputs must be K-major (A [m,k], B [n,k]), as "
     "cuBLASLt's int8 kernels take only its \"TN\" layout"},
    {"s8_with_s8_c_to_s32",
     [](LtGemm& g) {
       ToInt8(g);
       g.c_type = ScalarType::kS8;
     },
     absl::StatusCode::kUnimplemented,
     "c_type s8 differs from d_type s32: with s32 compute cuBLASLt reads C in "
     "D's type"},
    {"s8_with_bias",
     [](LtGemm& g) {
       ToInt8(g);
       g.bias = Bias::kAlongN;
     },
     absl::StatusCode::kUnimplemented,
     "s8 inputs take no bias and no activation: cuBLASLt's int8 kernels have "
     "only the default epilogue"},
    {"s8_with_relu",
     [](LtGemm& g) {
       ToInt8(g);
       g.c_type = g.d_type = g.bias_type = ScalarType::kS8;
       g.activation = Activation::kRelu;
     },
     absl::StatusCode::kUnimplemented,
     "s8 inputs take no bias and no activation: cuBLASLt's int8 kernels have "
     "only the default epilogue"},
    {"s8_with_scale_b",
     [](LtGemm& g) {
       ToInt8(g);
       g.scale_b = true;
     },
     absl::StatusCode::kUnimplemented,
     "scale_b is for fp8 inputs (e4m3, e5m2), not s8"},
    {"s32_d_fractional_alpha",
     [](LtGemm& g) {
       ToInt8(g);
       g.alpha = 1.5f;
     },
     absl::StatusCode::kInvalidArgument,
     "alpha=1.5 is not an int32: with an s32 D cuBLASLt's alpha and beta are "
     "int32"},
    {"s32_d_huge_beta",
     [](LtGemm& g) {
       ToInt8(g);
       g.beta = 4294967296.0f;
     },
     absl::StatusCode::kInvalidArgument,
     "beta=4.29497e+09 is not an int32: with an s32 D cuBLASLt's alpha and "
     "beta are int32"},
    {"f16_to_bf16",
     [](LtGemm& g) { g.c_type = g.d_type = g.bias_type = ScalarType::kBF16; },
     absl::StatusCode::kUnimplemented,
     "f16 inputs give f16 or f32 outputs, not d_type bf16"},
    {"c_type_differs", [](LtGemm& g) { g.c_type = ScalarType::kF32; },
     absl::StatusCode::kUnimplemented,
     "c_type f32 differs from d_type f16: with f32 compute cuBLASLt reads C "
     "in D's type"},
    {"bias_type_differs",
     [](LtGemm& g) {
       g.bias = Bias::kAlongN;
       g.bias_type = ScalarType::kF32;
     },
     absl::StatusCode::kUnimplemented,
     "bias_type f32 differs from d_type f16: cuBLASLt's bias has D's type"},
    {"bias_along_m", [](LtGemm& g) { g.bias = Bias::kAlongM; },
     absl::StatusCode::kUnimplemented,
     "a bias along m (one value per row of D) has no cuBLASLt epilogue: "
     "cuBLASLt computes D^T column-major, and its bias (one value per row of "
     "D^T) runs along n; use Bias::kAlongN or add it separately"},
    {"bias_not_an_enumerator", [](LtGemm& g) { g.bias = static_cast<Bias>(7); },
     absl::StatusCode::kInvalidArgument, "bias 7 is not an LtGemm::Bias"},
    {"activation_not_an_enumerator",
     [](LtGemm& g) { g.activation = static_cast<Activation>(-1); },
     absl::StatusCode::kInvalidArgument,
     "activation -1 is not an LtGemm::Activation"},
    {"type_not_an_enumerator",
     [](LtGemm& g) { g.d_type = static_cast<ScalarType>(99); },
     absl::StatusCode::kInvalidArgument, "d_type 99 is not a ScalarType"},
};

class RefusalTest : public testing::TestWithParam<Refusal> {};

TEST_P(RefusalTest, IsRefusedByNameBeforeAnyCall) {
  LtGemm gemm = Padded(true, true);
  GetParam().change(gemm);
  const absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.status().code(), GetParam().code) << call.status();
  EXPECT_EQ(std::string(call.status().message()),
            absl::StrCat("cuBLASLt reference: ", GetParam().message));
  // The same refusal from the one-call path, with or without cuBLASLt.
  const absl::Status run =
      RunCublasLt(gemm, 0, 0, 0, 0, 0, nullptr, nullptr, 0);
  EXPECT_EQ(run, call.status());
}

INSTANTIATE_TEST_SUITE_P(Refusals, RefusalTest, testing::ValuesIn(kRefusals),
                         [](const testing::TestParamInfo<Refusal>& info) {
                           return info.param.what;
                         });

TEST(ToCublasLt, WhatBetaZeroIgnoresIsNotChecked) {
  LtGemm gemm = Padded(true, true);
  gemm.beta = 0;
  gemm.ldc = 1;
  gemm.c_type = ScalarType::kF32;
  EXPECT_TRUE(ToCublasLt(gemm).ok());
}

TEST(DescribeLtGemm, NamesEverythingThatDiffersFromPlain) {
  LtGemm gemm = Padded(true, false);
  gemm.d_type = gemm.c_type = gemm.bias_type = ScalarType::kF32;
  gemm.batch = 2;
  gemm.bias = Bias::kAlongN;
  gemm.activation = Activation::kGelu;
  EXPECT_EQ(DescribeLtGemm(gemm),
            "64x128x32 f16->f32 A:K B:MN ld=40,136,144,160 batch=2 alpha=1 "
            "beta=0.5 bias=n gelu");
  EXPECT_EQ(DescribeLtGemm(PackedLtGemm(1, 2, 8, ScalarType::kBF16,
                                        ScalarType::kBF16, false, true)),
            "1x2x8 bf16->bf16 A:MN B:K ld=1,8,2,2 alpha=1 beta=0");
  LtGemm fp8 = PackedLtGemm(64, 128, 64, ScalarType::kE4M3, ScalarType::kE4M3);
  fp8.b_type = ScalarType::kE5M2;
  fp8.scale_a = fp8.scale_b = fp8.scale_d = fp8.amax_d = true;
  fp8.fast_accumulation = true;
  EXPECT_EQ(DescribeLtGemm(fp8),
            "64x128x64 e4m3*e5m2->e4m3(C bf16) A:K B:K ld=64,64,128,128 "
            "alpha=1 beta=0 scales=a,b,d amax_d fast_accum");
  fp8.d_type = ScalarType::kBF16;
  fp8.scale_a = fp8.scale_d = fp8.fast_accumulation = false;
  EXPECT_EQ(DescribeLtGemm(fp8),
            "64x128x64 e4m3*e5m2->bf16 A:K B:K ld=64,64,128,128 alpha=1 "
            "beta=0 scales=b amax_d");
}

TEST(PackedLtGemm, EveryRowAndBatchIsPacked) {
  const LtGemm gemm = PackedLtGemm(3, 5, 8, ScalarType::kF16, ScalarType::kF32,
                                   false, false, 2);
  EXPECT_EQ(gemm.lda, 3);
  EXPECT_EQ(gemm.ldb, 5);
  EXPECT_EQ(gemm.ldc, 5);
  EXPECT_EQ(gemm.ldd, 5);
  EXPECT_EQ(gemm.stride_a, 24);
  EXPECT_EQ(gemm.stride_b, 40);
  EXPECT_EQ(gemm.stride_d, 15);
  EXPECT_EQ(gemm.stride_bias, 5);
  EXPECT_EQ(gemm.d_type, ScalarType::kF32);
  EXPECT_EQ(gemm.bias_type, ScalarType::kF32);
  EXPECT_TRUE(ToCublasLt(gemm).ok());
}

// ---------------------------------------------------------------------------
// PreparedLtGemm against the recording stand-in.

constexpr char kStub[] = "tests/gemm/libcublaslt_stub_working.so";

struct Stub {
  void (*reset)(int fail_at, int algorithms, size_t workspace);
  int (*live)();
  int (*calls)();
  double (*value)(const char* key);
};

// The stand-in's controls (the same loaded copy LoadCublasLt uses).
const Stub& TheStub() {
  static const Stub* const stub = [] {
    void* library = dlopen(kStub, RTLD_NOW | RTLD_LOCAL);
    auto* made = new Stub;
    if (library == nullptr) return made;
    made->reset = reinterpret_cast<decltype(Stub::reset)>(
        dlsym(library, "ptxgen_lt_stub_reset"));
    made->live = reinterpret_cast<decltype(Stub::live)>(
        dlsym(library, "ptxgen_lt_stub_live"));
    made->calls = reinterpret_cast<decltype(Stub::calls)>(
        dlsym(library, "ptxgen_lt_stub_calls"));
    made->value = reinterpret_cast<decltype(Stub::value)>(
        dlsym(library, "ptxgen_lt_stub_value"));
    return made;
  }();
  return *stub;
}

// Recognizable, 16-byte aligned fake device addresses.
constexpr CUdeviceptr kA = 0x10000, kB = 0x20000, kC = 0x30000, kD = 0x40000,
                      kBias = 0x50000;
constexpr size_t kStubWorkspace = 4096;
// The scales' stand-ins: 4-byte aligned, as Run requires of them.
constexpr CUdeviceptr kScaleA = 0x60004, kScaleB = 0x60008, kScaleD = 0x6000c,
                      kAmaxD = 0x60010;

LtScales AllScales() { return LtScales{kScaleA, kScaleB, kScaleD, kAmaxD}; }

// e4m3 x e5m2 -> e4m3 with C (f16), a bias (f16), ReLU, every scale and fast
// accumulation: every descriptor attribute ptxgen sets for fp8.
LtGemm FullFp8() {
  LtGemm gemm = PackedLtGemm(kM, kN, 64, ScalarType::kE4M3, ScalarType::kE4M3);
  gemm.b_type = ScalarType::kE5M2;
  gemm.c_type = gemm.bias_type = ScalarType::kF16;
  gemm.ldc = kN + 16;
  gemm.beta = 0.5f;
  gemm.bias = Bias::kAlongN;
  gemm.activation = Activation::kRelu;
  gemm.scale_a = gemm.scale_b = gemm.scale_d = gemm.amax_d = true;
  gemm.fast_accumulation = true;
  return gemm;
}

class PreparedLtGemmTest : public testing::Test {
 protected:
  void SetUp() override {
    static const absl::StatusOr<CublasLtLibrary>* const library =
        new absl::StatusOr<CublasLtLibrary>(LoadCublasLt(kStub));
    ASSERT_TRUE(library->ok()) << library->status();
    lt_ = &**library;
    ASSERT_NE(TheStub().reset, nullptr);
    ASSERT_NE(TheStub().value, nullptr);
    TheStub().reset(0, 1, kStubWorkspace);
    ASSERT_EQ(TheStub().live(), 0);
  }
  void TearDown() override { EXPECT_EQ(TheStub().live(), 0); }

  static double Value(const std::string& key) {
    return TheStub().value(key.c_str());
  }
  static std::string Attribute(const char* object, int attribute) {
    return absl::StrCat(object, ".", attribute);
  }

  // Padded(true, false), batch 2, with C, a bias along n and GELU: every
  // descriptor attribute ptxgen sets.
  static LtGemm Full() {
    LtGemm gemm = Padded(true, false);
    gemm.batch = 2;
    gemm.stride_a = 5000;
    gemm.stride_b = 6000;
    gemm.stride_c = 70000;
    gemm.stride_d = 80000;
    gemm.stride_bias = 128;
    gemm.alpha = 2;
    gemm.bias = Bias::kAlongN;
    gemm.activation = Activation::kGelu;
    return gemm;
  }

  const CublasLtLibrary* lt_ = nullptr;
};

TEST_F(PreparedLtGemmTest, HandsCublasLtTheTranslatedCall) {
  const LtGemm gemm = Full();
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, kLtWorkspaceBytes);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->workspace_bytes(), kStubWorkspace);
  EXPECT_EQ(DescribeLtGemm(prepared->gemm()), DescribeLtGemm(gemm));
  // The heuristic's preference: the workspace allowed, 16-byte alignment.
  EXPECT_EQ(Value(Attribute("pref", CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)),
            static_cast<double>(kLtWorkspaceBytes));
  for (int attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    EXPECT_EQ(Value(Attribute("pref", attribute)), 16) << attribute;
  }
  const int stream_tag = 0;
  CUstream stream = reinterpret_cast<CUstream>(const_cast<int*>(&stream_tag));
  char workspace[16];
  ASSERT_TRUE(
      prepared->Run(kA, kB, kC, kD, kBias, stream, workspace, kStubWorkspace)
          .ok());

  // Pointers: A' is ptxgen's B, B' is ptxgen's A.
  EXPECT_EQ(Value("matmul.A"), static_cast<double>(kB));
  EXPECT_EQ(Value("matmul.B"), static_cast<double>(kA));
  EXPECT_EQ(Value("matmul.C"), static_cast<double>(kC));
  EXPECT_EQ(Value("matmul.D"), static_cast<double>(kD));
  EXPECT_EQ(Value("matmul.alpha"), 2);
  EXPECT_EQ(Value("matmul.beta"), 0.5);
  EXPECT_EQ(Value("matmul.algo"), 40);  // the heuristic's first
  EXPECT_EQ(Value("matmul.workspace"),
            static_cast<double>(reinterpret_cast<uintptr_t>(workspace)));
  EXPECT_EQ(Value("matmul.workspace_bytes"), kStubWorkspace);
  EXPECT_EQ(Value("matmul.stream"),
            static_cast<double>(reinterpret_cast<uintptr_t>(stream)));
  // The descriptor.
  EXPECT_EQ(Value("desc.compute"), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(Value("desc.scale"), CUDA_R_32F);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_TRANSA)), CUBLAS_OP_N);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_TRANSB)), CUBLAS_OP_N);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_EPILOGUE)),
            CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_BIAS_POINTER)),
            static_cast<double>(kBias));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE)),
            CUDA_R_16F);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE)),
            128);
  // The layouts, as ToCublasLt says (B MN-major: A' is n x k, ld ldb).
  struct Layout {
    const char* name;
    double rows, cols, ld, stride;
  };
  for (const Layout& layout : {
           Layout{"A", kN, kK, kN + 8, 6000},
           Layout{"B", kK, kM, kK + 8, 5000},
           Layout{"C", kN, kM, kN + 16, 70000},
           Layout{"D", kN, kM, kN + 32, 80000},
       }) {
    SCOPED_TRACE(layout.name);
    const std::string name = layout.name;
    EXPECT_EQ(Value(name + ".type"), CUDA_R_16F);
    EXPECT_EQ(Value(name + ".rows"), layout.rows);
    EXPECT_EQ(Value(name + ".cols"), layout.cols);
    EXPECT_EQ(Value(name + ".ld"), layout.ld);
    EXPECT_EQ(Value(Attribute(layout.name, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)),
              2);
    EXPECT_EQ(Value(Attribute(layout.name,
                              CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)),
              layout.stride);
  }
  // Alive: one descriptor and four layouts; the preference is gone.
  EXPECT_EQ(TheStub().live(), 5);
}

TEST_F(PreparedLtGemmTest, APlainGemmSetsNoBiasAndNoBatch) {
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, Padded(true, true), 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // The stub's algorithm needs a workspace.
  EXPECT_FALSE(
      prepared->Run(kA, kB, kC, kD, 0, nullptr, nullptr, kStubWorkspace).ok());
  char workspace[16];
  ASSERT_TRUE(
      prepared->Run(kA, kB, kC, kD, 0, nullptr, workspace, kStubWorkspace)
          .ok());
  EXPECT_EQ(Value(Attribute("pref", CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)),
            0);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_EPILOGUE)),
            CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_TRANSA)), CUBLAS_OP_T);
  EXPECT_TRUE(
      std::isnan(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_BIAS_POINTER))));
  EXPECT_TRUE(
      std::isnan(Value(Attribute("D", CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT))));
  EXPECT_TRUE(
      std::isnan(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_FAST_ACCUM))));
  EXPECT_TRUE(std::isnan(
      Value(Attribute("desc", CUBLASLT_MATMUL_DESC_A_SCALE_POINTER))));
}

TEST_F(PreparedLtGemmTest, WithBetaZeroDIsPassedAsC) {
  LtGemm gemm = Padded(false, true);
  gemm.beta = 0;
  TheStub().reset(0, 1, 0);
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->workspace_bytes(), 0u);
  ASSERT_TRUE(prepared->Run(kA, kB, /*c=*/0, kD, 0, nullptr, nullptr, 0).ok());
  EXPECT_EQ(Value("matmul.C"), static_cast<double>(kD));
  EXPECT_EQ(Value("C.ld"), kN + 32);
  EXPECT_EQ(Value("matmul.beta"), 0);
}

TEST_F(PreparedLtGemmTest, RunRefusesWhatCublasLtWouldMisread) {
  LtGemm gemm = Full();
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, kLtWorkspaceBytes);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  char workspace[16];
  struct Case {
    CUdeviceptr a, b, c, d, bias;
    void* workspace;
    size_t workspace_bytes;
    const char* message;
  };
  for (const Case& c : {
           Case{0, kB, kC, kD, kBias, workspace, kStubWorkspace, "a is null"},
           Case{kA, kB + 8, kC, kD, kBias, workspace, kStubWorkspace,
                "b=0x20008 is not aligned to 16 bytes"},
           Case{kA, kB, 0, kD, kBias, workspace, kStubWorkspace, "c is null"},
           Case{kA, kB, kC, kD, 0, workspace, kStubWorkspace, "bias is null"},
           Case{kA, kB, kC, kD, kBias + 4, workspace, kStubWorkspace,
                "bias=0x50004 is not aligned to 16 bytes"},
           Case{kA, kB, kC, kD, kBias, workspace, kStubWorkspace - 1,
                "the algorithm needs a workspace of 4096 bytes, given 4095"},
           Case{kA, kB, kC, kD, kBias, nullptr, kStubWorkspace,
                "the algorithm needs a workspace of 4096 bytes, given 0"},
           Case{kA, kB, kD, kD, kBias, workspace, kStubWorkspace,
                "C and D are one buffer but ldc=144, stride_c=70000 differ "
                "from ldd=160, stride_d=80000: cuBLASLt computes in place "
                "only with one layout"},
       }) {
    const absl::Status run = prepared->Run(c.a, c.b, c.c, c.d, c.bias, nullptr,
                                           c.workspace, c.workspace_bytes);
    EXPECT_TRUE(absl::IsInvalidArgument(run)) << run;
    EXPECT_EQ(std::string(run.message()),
              absl::StrCat("cuBLASLt reference: ", c.message));
  }
  EXPECT_TRUE(std::isnan(Value("matmul.matmuls")));  // none reached cuBLASLt
}

TEST_F(PreparedLtGemmTest, InPlaceWithOneLayoutRuns) {
  LtGemm gemm = Padded(true, true);
  gemm.ldc = gemm.ldd;
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  char workspace[16];
  EXPECT_TRUE(
      prepared->Run(kA, kB, kD, kD, 0, nullptr, workspace, kStubWorkspace)
          .ok());
  EXPECT_EQ(Value("matmul.C"), static_cast<double>(kD));
}

TEST_F(PreparedLtGemmTest, NoAlgorithmIsUnimplementedAndLeavesNothing) {
  TheStub().reset(0, /*algorithms=*/0, 0);
  const absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, Padded(true, true), 1024);
  ASSERT_FALSE(prepared.ok());
  EXPECT_TRUE(absl::IsUnimplemented(prepared.status())) << prepared.status();
  EXPECT_EQ(std::string(prepared.status().message()),
            "cuBLASLt reference: cuBLASLt has no algorithm for 64x128x32 "
            "f16->f16 A:K B:K ld=40,48,144,160 alpha=1 beta=0.5 within a "
            "workspace of 1024 bytes (cublasLtMatmulAlgoGetHeuristic returned "
            "0 algorithms, status 0)");
  EXPECT_EQ(TheStub().live(), 0);
}

// Every call ptxgen makes, failed in turn: each failure is reported naming
// the call (and the attribute), and nothing stays alive once the
// PreparedLtGemm (if one was made) is gone. Returns the calls that failed.
std::set<std::string> FailEachCallInTurn(const CublasLtLibrary& lt,
                                         const LtGemm& gemm,
                                         const LtScales& scales) {
  char workspace[16];
  auto create_and_run = [&]() -> absl::Status {
    absl::StatusOr<PreparedLtGemm> prepared =
        PreparedLtGemm::Create(lt, gemm, kLtWorkspaceBytes);
    if (!prepared.ok()) {
      EXPECT_EQ(TheStub().live(), 0) << prepared.status();
      return prepared.status();
    }
    return prepared->Run(kA, kB, kC, kD, kBias, scales, nullptr, workspace,
                         kStubWorkspace);
  };
  std::set<std::string> failed;
  const absl::Status once = create_and_run();
  EXPECT_TRUE(once.ok()) << once;
  if (!once.ok()) return failed;
  const int calls = TheStub().calls();
  for (int fail_at = 1; fail_at <= calls; ++fail_at) {
    TheStub().reset(fail_at, 1, kStubWorkspace);
    const absl::Status status = create_and_run();
    EXPECT_TRUE(absl::IsInternal(status)) << fail_at << ": " << status;
    const std::string message(status.message());
    constexpr absl::string_view kSuffix =
        " returned 7 (CUBLAS_STATUS_INVALID_VALUE)";
    EXPECT_TRUE(absl::StartsWith(message, "cuBLASLt reference: ") &&
                absl::EndsWith(message, kSuffix))
        << message;
    if (message.size() > 20 + kSuffix.size()) {
      failed.insert(message.substr(20, message.size() - 20 - kSuffix.size()));
    }
    EXPECT_EQ(TheStub().live(), 0) << message;
  }
  return failed;
}

TEST_F(PreparedLtGemmTest, EveryFailingCallIsNamedAndLeavesNothing) {
  const std::set<std::string> failed =
      FailEachCallInTurn(*lt_, Full(), LtScales{});
  for (const char* call : {
           "cublasLtMatmulDescCreate",
           "cublasLtMatmulDescSetAttribute(TRANSA)",
           "cublasLtMatmulDescSetAttribute(TRANSB)",
           "cublasLtMatmulDescSetAttribute(EPILOGUE)",
           "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)",
           "cublasLtMatmulDescSetAttribute(BIAS_POINTER)",
           "cublasLtMatmulDescSetAttribute(BIAS_BATCH_STRIDE)",
           "cublasLtMatrixLayoutCreate(A)",
           "cublasLtMatrixLayoutSetAttribute(A, BATCH_COUNT)",
           "cublasLtMatrixLayoutSetAttribute(B, STRIDED_BATCH_OFFSET)",
           "cublasLtMatrixLayoutCreate(D)",
           "cublasLtMatrixLayoutSetAttribute(D, STRIDED_BATCH_OFFSET)",
           "cublasLtMatmulPreferenceCreate",
           "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)",
           "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)",
           "cublasLtMatmulAlgoGetHeuristic",
           "cublasLtMatmul",
       }) {
    EXPECT_EQ(failed.count(call), 1u) << call;
  }
}

TEST_F(PreparedLtGemmTest, EveryFailingFp8CallIsNamedAndLeavesNothing) {
  const std::set<std::string> failed =
      FailEachCallInTurn(*lt_, FullFp8(), AllScales());
  for (const char* call : {
           "cublasLtMatmulDescSetAttribute(FAST_ACCUM)",
           "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)",
           "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)",
           "cublasLtMatmulDescSetAttribute(D_SCALE_POINTER)",
           "cublasLtMatmulDescSetAttribute(AMAX_D_POINTER)",
           "cublasLtMatmulDescSetAttribute(BIAS_POINTER)",
           "cublasLtMatmulAlgoGetHeuristic",
           "cublasLtMatmul",
       }) {
    EXPECT_EQ(failed.count(call), 1u) << call;
  }
}

TEST_F(PreparedLtGemmTest, Fp8HandsCublasLtItsTypesScalesAndFastAccumulation) {
  const LtGemm gemm = FullFp8();
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, kLtWorkspaceBytes);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // The heuristic saw every scale (stand-ins) and the accumulation mode.
  for (int attribute : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER}) {
    EXPECT_EQ(Value(Attribute("heuristic.desc", attribute)), 16) << attribute;
  }
  EXPECT_EQ(Value(Attribute("heuristic.desc", CUBLASLT_MATMUL_DESC_FAST_ACCUM)),
            1);
  char workspace[16];
  ASSERT_TRUE(prepared
                  ->Run(kA, kB, kC, kD, kBias, AllScales(), nullptr, workspace,
                        kStubWorkspace)
                  .ok());
  EXPECT_EQ(Value("desc.compute"), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(Value("desc.scale"), CUDA_R_32F);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_TRANSA)), CUBLAS_OP_T);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_TRANSB)), CUBLAS_OP_N);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_FAST_ACCUM)), 1);
  // A' is ptxgen's B: its scale is ptxgen's scale_b, and B's ptxgen's scale_a.
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_A_SCALE_POINTER)),
            static_cast<double>(kScaleB));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_B_SCALE_POINTER)),
            static_cast<double>(kScaleA));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_D_SCALE_POINTER)),
            static_cast<double>(kScaleD));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_AMAX_D_POINTER)),
            static_cast<double>(kAmaxD));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_EPILOGUE)),
            CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE)),
            CUDA_R_16F);
  EXPECT_EQ(Value("A.type"), CUDA_R_8F_E5M2);  // ptxgen's B
  EXPECT_EQ(Value("B.type"), CUDA_R_8F_E4M3);  // ptxgen's A
  EXPECT_EQ(Value("C.type"), CUDA_R_16F);
  EXPECT_EQ(Value("D.type"), CUDA_R_8F_E4M3);
  EXPECT_EQ(Value("C.ld"), kN + 16);
  EXPECT_EQ(Value("matmul.alpha"), 1);
  EXPECT_EQ(Value("matmul.beta"), 0.5);
  // Scales that change between calls reach the next one.
  LtScales others = AllScales();
  others.a = 0x70000;
  others.amax_d = 0x70010;
  ASSERT_TRUE(prepared
                  ->Run(kA, kB, kC, kD, kBias, others, nullptr, workspace,
                        kStubWorkspace)
                  .ok());
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_B_SCALE_POINTER)),
            static_cast<double>(0x70000));
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_AMAX_D_POINTER)),
            static_cast<double>(0x70010));
}

TEST_F(PreparedLtGemmTest, Fp8WithoutScalesSetsNoScalePointers) {
  TheStub().reset(0, 1, 0);
  absl::StatusOr<PreparedLtGemm> prepared = PreparedLtGemm::Create(
      *lt_, PackedLtGemm(kM, kN, 64, ScalarType::kE4M3, ScalarType::kBF16), 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_TRUE(prepared->Run(kA, kB, 0, kD, 0, nullptr, nullptr, 0).ok());
  EXPECT_EQ(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_FAST_ACCUM)), 0);
  for (int attribute : {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER}) {
    EXPECT_TRUE(std::isnan(Value(Attribute("desc", attribute)))) << attribute;
  }
  // C, unread, is D's pointer and layout in bf16.
  EXPECT_EQ(Value("matmul.C"), static_cast<double>(kD));
  EXPECT_EQ(Value("C.type"), CUDA_R_16BF);
  EXPECT_EQ(Value("D.type"), CUDA_R_16BF);
}

TEST_F(PreparedLtGemmTest, Int8ToS32PassesInt32AlphaAndBeta) {
  TheStub().reset(0, 1, 0);
  LtGemm gemm = PackedLtGemm(kM, kN, kK, ScalarType::kS8, ScalarType::kS32);
  gemm.alpha = 3;
  gemm.beta = -2;
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_TRUE(prepared->Run(kA, kB, kC, kD, 0, nullptr, nullptr, 0).ok());
  EXPECT_EQ(Value("desc.compute"), CUBLAS_COMPUTE_32I);
  EXPECT_EQ(Value("desc.scale"), CUDA_R_32I);
  EXPECT_EQ(Value("matmul.alpha"), 3);  // read back as int32
  EXPECT_EQ(Value("matmul.beta"), -2);
  EXPECT_EQ(Value("A.type"), CUDA_R_8I);
  EXPECT_EQ(Value("C.type"), CUDA_R_32I);
  EXPECT_TRUE(
      std::isnan(Value(Attribute("desc", CUBLASLT_MATMUL_DESC_FAST_ACCUM))));
}

TEST_F(PreparedLtGemmTest, Tf32HasItsComputeType) {
  TheStub().reset(0, 1, 0);
  absl::StatusOr<PreparedLtGemm> prepared = PreparedLtGemm::Create(
      *lt_, PackedLtGemm(kM, kN, kK, ScalarType::kTF32, ScalarType::kF32), 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_TRUE(prepared->Run(kA, kB, 0, kD, 0, nullptr, nullptr, 0).ok());
  EXPECT_EQ(Value("desc.compute"), CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(Value("desc.scale"), CUDA_R_32F);
  EXPECT_EQ(Value("A.type"), CUDA_R_32F);
  EXPECT_EQ(Value("D.type"), CUDA_R_32F);
}

TEST_F(PreparedLtGemmTest, RunRefusesScalesOtherThanTheGemms) {
  LtGemm gemm = FullFp8();
  gemm.scale_d = false;  // so that one is given that the LtGemm lacks
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, gemm, kLtWorkspaceBytes);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  char workspace[16];
  struct Case {
    LtScales scales;
    CUdeviceptr c;
    const char* message;
  };
  for (const Case& c : {
           Case{{0, kScaleB, 0, kAmaxD},
                kC,
                "scales.a is null but the LtGemm has scale_a"},
           Case{{kScaleA, kScaleB, 0, 0},
                kC,
                "scales.amax_d is null but the LtGemm has amax_d"},
           Case{{kScaleA, kScaleB + 2, 0, kAmaxD},
                kC,
                "scales.b=0x6000a is not aligned to 4 bytes"},
           Case{{kScaleA, kScaleB, kScaleD, kAmaxD},
                kC,
                "scales.d=0x6000c is given but the LtGemm has no scale_d (its "
                "algorithm was chosen without)"},
           Case{{kScaleA, kScaleB, 0, kAmaxD},
                kD,
                "C and D are one buffer but c_type f16 differs from d_type "
                "e4m3: cuBLASLt computes in place only with one layout"},
       }) {
    const absl::Status run = prepared->Run(kA, kB, c.c, kD, kBias, c.scales,
                                           nullptr, workspace, kStubWorkspace);
    EXPECT_TRUE(absl::IsInvalidArgument(run)) << run;
    EXPECT_EQ(std::string(run.message()),
              absl::StrCat("cuBLASLt reference: ", c.message));
  }
  EXPECT_TRUE(std::isnan(Value("matmul.matmuls")));  // none reached cuBLASLt
  // A plain GEMM refuses any scale.
  absl::StatusOr<PreparedLtGemm> plain =
      PreparedLtGemm::Create(*lt_, Padded(true, true), kLtWorkspaceBytes);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const absl::Status run =
      plain->Run(kA, kB, kC, kD, 0, LtScales{kScaleA, 0, 0, 0}, nullptr,
                 workspace, kStubWorkspace);
  EXPECT_EQ(std::string(run.message()),
            "cuBLASLt reference: scales.a=0x60004 is given but the LtGemm has "
            "no scale_a (its algorithm was chosen without)");
}

TEST_F(PreparedLtGemmTest, MovesKeepOneOwner) {
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(*lt_, Padded(true, true), 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  PreparedLtGemm moved = *std::move(prepared);
  PreparedLtGemm assigned = std::move(moved);
  EXPECT_EQ(TheStub().live(), 5);
  char workspace[16];
  EXPECT_TRUE(
      assigned.Run(kA, kB, kC, kD, 0, nullptr, workspace, kStubWorkspace).ok());
  EXPECT_EQ(assigned.call().epilogue, CUBLASLT_EPILOGUE_DEFAULT);
}

// The process's cuBLASLt: without a GPU it is missing, or cannot make a
// handle or choose an algorithm, and Create says which instead of crashing.
// (No Run: its pointers would have to be real.)
TEST(PreparedLtGemmDefault, WithoutAGpuSaysWhyNot) {
  const absl::StatusOr<PreparedLtGemm> prepared = PreparedLtGemm::Create(
      PackedLtGemm(64, 64, 64, ScalarType::kF16, ScalarType::kF16), 0);
  if (prepared.ok()) GTEST_SKIP() << "cuBLASLt works here: a GPU test's case";
  EXPECT_TRUE(absl::StartsWith(prepared.status().message(), "cuBLASLt"))
      << prepared.status();
}

}  // namespace
}  // namespace ptxgen::gemm
