// The C API's GEMMs of the fp8 and tf32 types on a Hopper GPU: prepared
// with ptxgenGemmPrepare and run with ptxgenGemmRunOperands (the scale
// pointers too) on random data, checked against a float64 host reference
// of the inputs as stored (fp8 decoded exactly, times the scales) by
// relative error by norm; split-K and stream-K GEMMs on the caller's
// workspaces (two streams at once, a CUDA graph), against cuBLAS; grouped
// GEMMs (contiguous, masked) with their rows on the device; attention
// forward (grouped-query heads, causal, variable lengths) against a float64
// host reference computed here. Skips without a Hopper GPU. The entry points
// are linked statically (//lib/capi:capi, as libptxgen.so holds them), so the
// binary runs on a GPU host outside Bazel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/gemm/timing.h"
#include "lib/testing/verification.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/ptxgen.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::capi {
namespace {

using ptx::ScalarType;
using runtime::DeviceBuffer;

// Multiples of 16 (TMA rows of 16 bytes for fp8), not of the tiles: edges
// are exercised.
constexpr int64_t kM = 264, kN = 136, kK = 528;

// bf16 D rounds at 2^-8 relative; tf32 keeps 10 of f32's 23 mantissa bits
// of each input.
constexpr double kFp8IntoBf16Bound = 3e-3;
constexpr double kTf32Bound = 5e-3;

DeviceBuffer Allocate(size_t bytes) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(bytes);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return *std::move(buffer);
}

// One f32 on the device, as a scale pointer reads it.
DeviceBuffer Scalar(float value) {
  DeviceBuffer buffer = Allocate(sizeof value);
  EXPECT_TRUE(buffer.CopyFromHost(&value, sizeof value).ok());
  return buffer;
}

// `count` random elements of `type` in [-1, 1).
DeviceBuffer Random(int64_t count, ScalarType type, uint32_t seed) {
  DeviceBuffer buffer = Allocate(count * ptx::SizeInBytes(type));
  EXPECT_TRUE(
      gemm::FillRandom(buffer.address(), count, type, seed, nullptr).ok());
  return buffer;
}

std::vector<double> Values(const DeviceBuffer& buffer, ScalarType type) {
  absl::StatusOr<std::vector<double>> values =
      gemm::DownloadValues(buffer, type);
  EXPECT_TRUE(values.ok()) << values.status();
  return values.ok() ? *std::move(values) : std::vector<double>();
}

const void* Pointer(const DeviceBuffer& buffer) {
  return reinterpret_cast<const void*>(
      static_cast<uintptr_t>(buffer.address()));
}

void* MutablePointer(DeviceBuffer& buffer) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(buffer.address()));
}

class CApiGpuTest : public testing_support::HopperTest {
 protected:
  void SetUp() override {
    HopperTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(ptxgenCreate(&handle_), PTXGEN_STATUS_SUCCESS);
  }
  void TearDown() override { ptxgenDestroy(handle_); }

  // Prepares `problem` (whose kernel's form must be `form`), runs it on
  // `operands` (a, b, d given by the caller) into a poisoned D, and gives
  // D's values.
  std::vector<double> Run(const ptxgenGemmProblem_t& problem,
                          const std::string& form,
                          const ptxgenGemmOperands_t& operands, DeviceBuffer& d,
                          ScalarType output) {
    ptxgenGemm_t gemm = nullptr;
    EXPECT_EQ(ptxgenGemmPrepare(handle_, &problem, &gemm),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    if (gemm == nullptr) return {};
    ptxgenKernelInfo_t info;
    EXPECT_EQ(ptxgenGemmGetKernelInfo(gemm, &info), PTXGEN_STATUS_SUCCESS);
    EXPECT_EQ(std::string(info.form_name), form);
    EXPECT_TRUE(gemm::PoisonValues(d.address(), kM * kN, output, nullptr).ok());
    EXPECT_EQ(ptxgenGemmRunOperands(handle_, gemm, &operands, nullptr),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    std::vector<double> values = Values(d, output);  // after the run
    EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
    return values;
  }

  ptxgenHandle_t handle_ = nullptr;
};

// D = scale_a * scale_b * A.B^T into bf16, from e4m3 and from e4m3 x e5m2.
TEST_F(CApiGpuTest, ScaledFp8MatchesTheDequantizedReference) {
  constexpr float kScaleA = 0.5f, kScaleB = 4.0f;
  for (ptxgenDataType_t b_type : {PTXGEN_TYPE_E4M3, PTXGEN_TYPE_E5M2}) {
    SCOPED_TRACE(b_type == PTXGEN_TYPE_E4M3 ? "e4m3" : "e4m3 x e5m2");
    const ScalarType b_element =
        b_type == PTXGEN_TYPE_E4M3 ? ScalarType::kE4M3 : ScalarType::kE5M2;
    ptxgenGemmProblem_t problem;
    ASSERT_EQ(ptxgenGemmProblemInit(&problem, kM, kN, kK, PTXGEN_TYPE_E4M3),
              PTXGEN_STATUS_SUCCESS);
    problem.b_input_type = b_type;
    problem.scaling = PTXGEN_SCALING_TENSOR;
    ASSERT_EQ(problem.output_type, PTXGEN_TYPE_BF16);

    DeviceBuffer a = Random(kM * kK, ScalarType::kE4M3, 11);
    DeviceBuffer b = Random(kN * kK, b_element, 12);
    DeviceBuffer d = Allocate(kM * kN * 2);
    DeviceBuffer scale_a = Scalar(kScaleA);
    DeviceBuffer scale_b = Scalar(kScaleB);
    ptxgenGemmOperands_t operands{};
    operands.a = Pointer(a);
    operands.b = Pointer(b);
    operands.d = MutablePointer(d);
    operands.scale_a = static_cast<const float*>(Pointer(scale_a));
    operands.scale_b = static_cast<const float*>(Pointer(scale_b));
    const std::string form = b_type == PTXGEN_TYPE_E4M3
                                 ? "e4m3.kk->bf16+tensor_scaled"
                                 : "e4m3xe5m2.kk->bf16+tensor_scaled";
    const std::vector<double> computed =
        Run(problem, form, operands, d, ScalarType::kBF16);

    gemm::GemmProblem reference_problem{kM, kN, kK, ScalarType::kE4M3};
    reference_problem.alpha = kScaleA * kScaleB;
    const std::vector<double> expected = gemm::HostReferenceGemm(
        reference_problem, Values(a, ScalarType::kE4M3), Values(b, b_element));
    EXPECT_LT(gemm::RelativeErrorByNorm(computed, expected), kFp8IntoBf16Bound);
  }
}

// f32 in memory, tf32 tensor cores, f32 D.
TEST_F(CApiGpuTest, Tf32MatchesTheF32Reference) {
  ptxgenGemmProblem_t problem;
  ASSERT_EQ(ptxgenGemmProblemInit(&problem, kM, kN, kK, PTXGEN_TYPE_TF32),
            PTXGEN_STATUS_SUCCESS);
  ASSERT_EQ(problem.output_type, PTXGEN_TYPE_F32);
  DeviceBuffer a = Random(kM * kK, ScalarType::kF32, 21);
  DeviceBuffer b = Random(kN * kK, ScalarType::kF32, 22);
  DeviceBuffer d = Allocate(kM * kN * 4);
  ptxgenGemmOperands_t operands{};
  operands.a = Pointer(a);
  operands.b = Pointer(b);
  operands.d = MutablePointer(d);
  const std::vector<double> computed =
      Run(problem, "tf32.kk->f32", operands, d, ScalarType::kF32);

  const gemm::GemmProblem reference_problem{kM, kN, kK, ScalarType::kTF32};
  const std::vector<double> expected =
      gemm::HostReferenceGemm(reference_problem, Values(a, ScalarType::kF32),
                              Values(b, ScalarType::kF32));
  EXPECT_LT(gemm::RelativeErrorByNorm(computed, expected), kTf32Bound);
}

// A scaled problem run without its scales (ptxgenGemmRun passes none) is
// refused naming the pointer, before anything is launched.
TEST_F(CApiGpuTest, AScaledProblemNeedsItsScalePointers) {
  ptxgenGemmProblem_t problem;
  ASSERT_EQ(ptxgenGemmProblemInit(&problem, kM, kN, kK, PTXGEN_TYPE_E4M3),
            PTXGEN_STATUS_SUCCESS);
  problem.scaling = PTXGEN_SCALING_TENSOR;
  ptxgenGemm_t gemm = nullptr;
  ASSERT_EQ(ptxgenGemmPrepare(handle_, &problem, &gemm), PTXGEN_STATUS_SUCCESS)
      << ptxgenGetLastErrorMessage(handle_);
  DeviceBuffer a = Random(kM * kK, ScalarType::kE4M3, 31);
  DeviceBuffer b = Random(kN * kK, ScalarType::kE4M3, 32);
  DeviceBuffer d = Allocate(kM * kN * 2);
  EXPECT_EQ(ptxgenGemmRun(handle_, gemm, Pointer(a), Pointer(b), nullptr,
                          MutablePointer(d), nullptr, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(ptxgenGetLastErrorMessage(handle_))
                .find("ptxgenGemmRun: GEMM: scale_a is a null pointer"),
            std::string::npos)
      << ptxgenGetLastErrorMessage(handle_);
  EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
}

// Grouped GEMMs through the C API: each group's rows from the int32 array
// ptxgenGemmOperands_t.group_rows points to. Contiguous with
// torch._grouped_mm's layout (B [groups, k, n], cumulative row ends, an
// empty group); masked with K-major B (row counts, an empty and a full
// group). Each group's D rows against its own float64 product.
TEST_F(CApiGpuTest, GroupedGemmsReadTheirRowsFromTheDevice) {
  constexpr int64_t kGroups = 4;
  const struct {
    const char* name;
    ptxgenGrouping_t grouping;
    ptxgenMajor_t b_major;
    int64_t m;  // contiguous: the rows' total; masked: each group's room
    std::vector<int> rows;
    const char* form;
  } cases[] = {
      {"contiguous",
       PTXGEN_GROUPING_CONTIGUOUS,
       PTXGEN_MAJOR_MN,
       264,
       {100, 0, 37, 127},
       "bf16.km->bf16+contiguous_groups"},
      {"masked",
       PTXGEN_GROUPING_MASKED,
       PTXGEN_MAJOR_K,
       128,
       {5, 128, 0, 77},
       "bf16.kk->bf16+masked_groups"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const bool contiguous = c.grouping == PTXGEN_GROUPING_CONTIGUOUS;
    ptxgenGemmProblem_t problem;
    ASSERT_EQ(ptxgenGemmProblemInit(&problem, c.m, kN, kK, PTXGEN_TYPE_BF16),
              PTXGEN_STATUS_SUCCESS);
    problem.grouping = c.grouping;
    problem.batch = kGroups;
    problem.b_major = c.b_major;
    const int64_t a_rows = contiguous ? c.m : kGroups * c.m;
    DeviceBuffer a = Random(a_rows * kK, ScalarType::kBF16, 41);
    DeviceBuffer b = Random(kGroups * kN * kK, ScalarType::kBF16, 42);
    DeviceBuffer d = Allocate(a_rows * kN * 2);
    std::vector<int> group_rows = c.rows;
    if (contiguous) {
      for (size_t g = 1; g < group_rows.size(); ++g) {
        group_rows[g] += group_rows[g - 1];
      }
    }
    DeviceBuffer rows = Allocate(group_rows.size() * sizeof(int));
    ASSERT_TRUE(
        rows.CopyFromHost(group_rows.data(), group_rows.size() * sizeof(int))
            .ok());

    ptxgenGemm_t gemm = nullptr;
    ASSERT_EQ(ptxgenGemmPrepare(handle_, &problem, &gemm),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    ptxgenKernelInfo_t info;
    EXPECT_EQ(ptxgenGemmGetKernelInfo(gemm, &info), PTXGEN_STATUS_SUCCESS);
    EXPECT_EQ(std::string(info.form_name), c.form);
    ptxgenGemmOperands_t operands{};
    operands.a = Pointer(a);
    operands.b = Pointer(b);
    operands.d = MutablePointer(d);
    // Without its rows a grouped GEMM is refused, naming them.
    EXPECT_EQ(ptxgenGemmRunOperands(handle_, gemm, &operands, nullptr),
              PTXGEN_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(ptxgenGetLastErrorMessage(handle_))
                  .find("group_rows is a null pointer"),
              std::string::npos)
        << ptxgenGetLastErrorMessage(handle_);
    operands.group_rows = static_cast<const int*>(Pointer(rows));
    ASSERT_TRUE(
        gemm::PoisonValues(d.address(), a_rows * kN, ScalarType::kBF16, nullptr)
            .ok());
    ASSERT_EQ(ptxgenGemmRunOperands(handle_, gemm, &operands, nullptr),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    const std::vector<double> computed = Values(d, ScalarType::kBF16);
    const std::vector<double> a_values = Values(a, ScalarType::kBF16);
    const std::vector<double> b_values = Values(b, ScalarType::kBF16);
    EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
    ASSERT_EQ(computed.size(), static_cast<size_t>(a_rows * kN));

    int64_t first_row = 0;  // of the group in A and D
    for (int64_t g = 0; g < kGroups; ++g) {
      const int64_t count = c.rows[g];
      if (!contiguous) first_row = g * c.m;
      if (count > 0) {
        gemm::GemmProblem group{count, kN, kK, ScalarType::kBF16};
        group.b_major = c.b_major == PTXGEN_MAJOR_MN ? gemm::MajorOrder::kMN
                                                     : gemm::MajorOrder::kK;
        const auto a_first = a_values.begin() + first_row * kK;
        const auto b_first = b_values.begin() + g * kN * kK;
        const std::vector<double> expected = gemm::HostReferenceGemm(
            group, std::vector<double>(a_first, a_first + count * kK),
            std::vector<double>(b_first, b_first + kN * kK));
        const auto d_first = computed.begin() + first_row * kN;
        EXPECT_LT(
            gemm::RelativeErrorByNorm(
                std::vector<double>(d_first, d_first + count * kN), expected),
            gemm::ErrorBound(ScalarType::kBF16))
            << "group " << g;
      }
      if (contiguous) first_row += count;
    }
  }
}

// One attention through the C API: packed BSHD tensors, sequence b's rows
// starting at row offsets_q[b] of Q and O and offsets_k[b] of K and V
// (fixed lengths: b * seq).
struct AttentionCase {
  const char* name;
  bool causal;
  bool variable_lengths;
  std::vector<int> offsets_q, offsets_k;  // batch + 1 cumulative rows
};

// O and the LSE in float64: each query row's softmax over the keys it sees
// (causal: aligned to the bottom-right corner), O 0 and LSE +inf for a row
// that sees none. LSE as the run stores it: [batch, heads_q, seq_q], or
// [heads_q, total_q] with variable lengths.
void ReferenceAttention(const AttentionCase& c, int64_t heads_q,
                        int64_t heads_kv, int64_t seq_q, int64_t head_dim,
                        double scale, const std::vector<double>& q,
                        const std::vector<double>& k,
                        const std::vector<double>& v, std::vector<double>& o,
                        std::vector<double>& lse) {
  const int64_t batch = static_cast<int64_t>(c.offsets_q.size()) - 1;
  const int64_t total_q = c.offsets_q.back();
  o.assign(total_q * heads_q * head_dim, 0.0);
  lse.assign(c.variable_lengths ? heads_q * total_q : batch * heads_q * seq_q,
             std::numeric_limits<double>::infinity());
  std::vector<double> scores;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t rows_q = c.offsets_q[b + 1] - c.offsets_q[b];
    const int64_t rows_k = c.offsets_k[b + 1] - c.offsets_k[b];
    for (int64_t h = 0; h < heads_q; ++h) {
      const int64_t kv_head = h / (heads_q / heads_kv);
      for (int64_t i = 0; i < rows_q; ++i) {
        const int64_t row = c.offsets_q[b] + i;
        const int64_t seen =
            c.causal ? std::clamp<int64_t>(i + rows_k - rows_q + 1, 0, rows_k)
                     : rows_k;
        if (seen == 0) continue;
        scores.assign(seen, 0.0);
        double largest = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < seen; ++j) {
          const int64_t key = c.offsets_k[b] + j;
          double dot = 0;
          for (int64_t d = 0; d < head_dim; ++d) {
            dot += q[(row * heads_q + h) * head_dim + d] *
                   k[(key * heads_kv + kv_head) * head_dim + d];
          }
          scores[j] = dot * scale;
          largest = std::max(largest, scores[j]);
        }
        double sum = 0;
        for (double& score : scores) {
          score = std::exp(score - largest);
          sum += score;
        }
        for (int64_t j = 0; j < seen; ++j) {
          const int64_t key = c.offsets_k[b] + j;
          for (int64_t d = 0; d < head_dim; ++d) {
            o[(row * heads_q + h) * head_dim + d] +=
                scores[j] / sum * v[(key * heads_kv + kv_head) * head_dim + d];
          }
        }
        lse[c.variable_lengths ? h * total_q + row
                               : (b * heads_q + h) * seq_q + i] =
            largest + std::log(sum);
      }
    }
  }
}

// Grouped-query bf16 attention (4 query heads on 2 K/V heads) through
// ptxgenAttentionPrepare and ptxgenAttentionRun: with seq_q < seq_k, causal
// with seq_q > seq_k (its first rows see no key), and causal variable
// lengths read from the device. O and the LSE are poisoned first.
TEST_F(CApiGpuTest, AttentionMatchesTheHostReference) {
  constexpr int64_t kHeadsQ = 4, kHeadsKv = 2, kHeadDim = 64;
  // P is rounded to bf16 before P.V, O to bf16 after it.
  constexpr double kOBound = 1e-2, kLseBound = 1e-3;
  const AttentionCase cases[] = {
      {"seq_q < seq_k", false, false, {0, 100, 200}, {0, 160, 320}},
      {"causal, seq_q > seq_k", true, false, {0, 160, 320}, {0, 100, 200}},
      {"causal varlen", true, true, {0, 37, 101, 229}, {0, 50, 114, 214}},
  };
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t batch = static_cast<int64_t>(c.offsets_q.size()) - 1;
    int64_t seq_q = 0, seq_k = 0;
    for (int64_t b = 0; b < batch; ++b) {
      seq_q = std::max<int64_t>(seq_q, c.offsets_q[b + 1] - c.offsets_q[b]);
      seq_k = std::max<int64_t>(seq_k, c.offsets_k[b + 1] - c.offsets_k[b]);
    }
    const int64_t total_q = c.offsets_q.back(), total_k = c.offsets_k.back();
    ptxgenAttentionProblem_t problem;
    ASSERT_EQ(
        ptxgenAttentionProblemInit(&problem, batch, kHeadsQ, kHeadsKv, seq_q,
                                   seq_k, kHeadDim, PTXGEN_TYPE_BF16),
        PTXGEN_STATUS_SUCCESS);
    problem.causal = c.causal ? 1 : 0;
    problem.variable_lengths = c.variable_lengths ? 1 : 0;
    if (c.variable_lengths) {
      problem.total_q = total_q;
      problem.total_k = total_k;
    }
    ptxgenAttentionSpans_t spans;
    ASSERT_EQ(ptxgenAttentionGetSpans(handle_, &problem, &spans),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    ASSERT_EQ(spans.q, total_q * kHeadsQ * kHeadDim);
    DeviceBuffer q = Random(spans.q, ScalarType::kBF16, 51);
    DeviceBuffer k = Random(spans.k, ScalarType::kBF16, 52);
    DeviceBuffer v = Random(spans.v, ScalarType::kBF16, 53);
    DeviceBuffer o = Allocate(spans.o * 2);
    DeviceBuffer lse = Allocate(spans.lse * 4);
    ASSERT_TRUE(
        gemm::PoisonValues(o.address(), spans.o, ScalarType::kBF16, nullptr)
            .ok());
    ASSERT_TRUE(
        gemm::PoisonValues(lse.address(), spans.lse, ScalarType::kF32, nullptr)
            .ok());
    DeviceBuffer offsets_q = Allocate(c.offsets_q.size() * sizeof(int));
    DeviceBuffer offsets_k = Allocate(c.offsets_k.size() * sizeof(int));
    ASSERT_TRUE(
        offsets_q
            .CopyFromHost(c.offsets_q.data(), c.offsets_q.size() * sizeof(int))
            .ok());
    ASSERT_TRUE(
        offsets_k
            .CopyFromHost(c.offsets_k.data(), c.offsets_k.size() * sizeof(int))
            .ok());
    const int* cu_seqlens_q = c.variable_lengths
                                  ? static_cast<const int*>(Pointer(offsets_q))
                                  : nullptr;
    const int* cu_seqlens_k = c.variable_lengths
                                  ? static_cast<const int*>(Pointer(offsets_k))
                                  : nullptr;

    ptxgenAttention_t attention = nullptr;
    ASSERT_EQ(ptxgenAttentionPrepare(handle_, &problem, &attention),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    ptxgenKernelInfo_t info;
    EXPECT_EQ(ptxgenAttentionGetKernelInfo(attention, &info),
              PTXGEN_STATUS_SUCCESS);
    EXPECT_EQ(std::string(info.form_name),
              absl::StrCat("attention.bf16.d64", c.causal ? "+causal" : "",
                           c.variable_lengths ? "+varlen" : ""));
    EXPECT_NE(std::string(info.ptx).find(".target sm_90a"), std::string::npos);
    ASSERT_EQ(ptxgenAttentionRun(handle_, attention, Pointer(q), Pointer(k),
                                 Pointer(v), MutablePointer(o),
                                 static_cast<float*>(MutablePointer(lse)),
                                 cu_seqlens_q, cu_seqlens_k, nullptr),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    const std::vector<double> computed_o = Values(o, ScalarType::kBF16);
    const std::vector<double> computed_lse = Values(lse, ScalarType::kF32);
    EXPECT_EQ(ptxgenAttentionDestroy(attention), PTXGEN_STATUS_SUCCESS);

    std::vector<double> expected_o, expected_lse;
    ReferenceAttention(c, kHeadsQ, kHeadsKv, seq_q, kHeadDim,
                       1 / std::sqrt(static_cast<double>(kHeadDim)),
                       Values(q, ScalarType::kBF16),
                       Values(k, ScalarType::kBF16),
                       Values(v, ScalarType::kBF16), expected_o, expected_lse);
    EXPECT_LT(gemm::RelativeErrorByNorm(computed_o, expected_o), kOBound);
    ASSERT_EQ(computed_lse.size(), expected_lse.size());
    int64_t wrong = 0;
    for (size_t i = 0; i < expected_lse.size(); ++i) {
      const bool matches =
          std::isinf(expected_lse[i])
              ? computed_lse[i] == expected_lse[i]
              : std::abs(computed_lse[i] - expected_lse[i]) <=
                    kLseBound * std::max(1.0, std::abs(expected_lse[i]));
      if (!matches && wrong++ < 5) {
        ADD_FAILURE() << "LSE " << i << ": " << computed_lse[i] << ", expected "
                      << expected_lse[i];
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Problems the heuristic plans, for an H200's 132 SMs, as split-K (four
// 64x128 tiles, k cut in four) and as stream-K (a partial last wave): each
// keeps partial sums in a workspace.
struct WorkspaceCase {
  const char* name;
  int64_t m, n, k;
  const char* config_part;  // in ptxgenKernelInfo_t.config_name
};
const WorkspaceCase kWorkspaceCases[] = {
    {"split-K", 128, 256, 4096, " k4 "},
    {"stream-K", 2304, 4096, 8192, " sk "},
};

// f16 inputs, D, cuBLAS's D and a workspace (every byte 0xff: stream-K's
// flags raised, partial sums NaN) of one case on the device.
struct CaseBuffers {
  CaseBuffers(const WorkspaceCase& c, size_t workspace_bytes, uint32_t seed)
      : problem{c.m, c.n, c.k, ScalarType::kF16},
        a(Allocate(c.m * c.k * 2)),
        b(Allocate(c.n * c.k * 2)),
        d(Allocate(c.m * c.n * 2)),
        reference(Allocate(c.m * c.n * 2)),
        workspace(Allocate(workspace_bytes)) {
    Refill(seed);
  }
  // New A and B, cuBLAS's D of them; D and the workspace poisoned.
  void Refill(uint32_t seed) {
    EXPECT_TRUE(gemm::FillRandom(a.address(), problem.m * problem.k,
                                 ScalarType::kF16, seed, nullptr)
                    .ok());
    EXPECT_TRUE(gemm::FillRandom(b.address(), problem.n * problem.k,
                                 ScalarType::kF16, seed + 1, nullptr)
                    .ok());
    EXPECT_TRUE(gemm::CublasGemm(problem, a.address(), b.address(),
                                 reference.address(), nullptr)
                    .ok());
    EXPECT_TRUE(gemm::Poison(d.address(), problem.m * problem.n, nullptr).ok());
    EXPECT_TRUE(workspace.Memset8(0xff).ok());
  }
  ptxgenGemmOperands_t Operands() {
    ptxgenGemmOperands_t operands{};
    operands.a = Pointer(a);
    operands.b = Pointer(b);
    operands.d = MutablePointer(d);
    return operands;
  }
  void* Workspace() { return MutablePointer(workspace); }
  // D's relative error against cuBLAS's.
  double Error() const {
    return gemm::RelativeErrorByNorm(Values(d, ScalarType::kF16),
                                     Values(reference, ScalarType::kF16));
  }

  gemm::GemmProblem problem;
  DeviceBuffer a, b, d, reference, workspace;
};

class CApiWorkspaceGpuTest : public CApiGpuTest {
 protected:
  // The case's GEMM with a caller's workspace, checked to be planned as
  // the case says (else nothing here would use a workspace); its size in
  // *bytes.
  ptxgenGemm_t Prepare(const WorkspaceCase& c, size_t* bytes) {
    ptxgenGemmProblem_t problem;
    EXPECT_EQ(ptxgenGemmProblemInit(&problem, c.m, c.n, c.k, PTXGEN_TYPE_F16),
              PTXGEN_STATUS_SUCCESS);
    ptxgenGemm_t gemm = nullptr;
    EXPECT_EQ(ptxgenGemmPrepareWithWorkspaceMode(
                  handle_, &problem, PTXGEN_WORKSPACE_CALLER, &gemm),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    if (gemm == nullptr) return nullptr;
    ptxgenKernelInfo_t info;
    EXPECT_EQ(ptxgenGemmGetKernelInfo(gemm, &info), PTXGEN_STATUS_SUCCESS);
    EXPECT_NE(std::string(info.config_name).find(c.config_part),
              std::string::npos)
        << info.config_name << ": the heuristic's pick changed";
    EXPECT_EQ(ptxgenGemmGetWorkspaceSize(gemm, bytes), PTXGEN_STATUS_SUCCESS);
    EXPECT_GT(*bytes, 0u);
    return gemm;
  }
};

// One GEMM run on two streams at once, each run on its stream's own
// workspace: each D is its own inputs' product.
TEST_F(CApiWorkspaceGpuTest, RunsOnTwoStreamsAtOnceEachWithItsWorkspace) {
  for (const WorkspaceCase& c : kWorkspaceCases) {
    SCOPED_TRACE(c.name);
    size_t bytes = 0;
    ptxgenGemm_t gemm = Prepare(c, &bytes);
    ASSERT_NE(gemm, nullptr);
    std::vector<runtime::Stream> streams;
    std::vector<CaseBuffers> buffers;
    for (uint32_t i = 0; i < 2; ++i) {
      absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
      ASSERT_TRUE(stream.ok()) << stream.status();
      streams.push_back(*std::move(stream));
      buffers.emplace_back(c, bytes, 90 + 2 * i);
    }
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < streams.size(); ++i) {
        const ptxgenGemmOperands_t operands = buffers[i].Operands();
        ASSERT_EQ(ptxgenGemmRunWithWorkspace(handle_, gemm, &operands,
                                             buffers[i].Workspace(), bytes,
                                             streams[i].get()),
                  PTXGEN_STATUS_SUCCESS)
            << ptxgenGetLastErrorMessage(handle_);
      }
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      ASSERT_TRUE(streams[i].Synchronize().ok());
      EXPECT_LT(buffers[i].Error(), gemm::ErrorBound(ScalarType::kF16))
          << "stream " << i;
    }
    EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
  }
}

// Prepared first, then a run captured (global mode, PyTorch's default) on
// a stream created after it; the graph replays on new inputs, its
// workspace poisoned before each replay.
TEST_F(CApiWorkspaceGpuTest, ARunCapturedInACudaGraphReplaysOnNewInputs) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  for (const WorkspaceCase& c : kWorkspaceCases) {
    SCOPED_TRACE(c.name);
    size_t bytes = 0;
    ptxgenGemm_t gemm = Prepare(c, &bytes);
    ASSERT_NE(gemm, nullptr);
    CaseBuffers buffers(c, bytes, 100);
    absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
    ASSERT_TRUE(stream.ok()) << stream.status();
    ASSERT_EQ((*driver)->cuStreamBeginCapture(stream->get(),
                                              CU_STREAM_CAPTURE_MODE_GLOBAL),
              CUDA_SUCCESS);
    const ptxgenGemmOperands_t operands = buffers.Operands();
    const ptxgenStatus_t run = ptxgenGemmRunWithWorkspace(
        handle_, gemm, &operands, buffers.Workspace(), bytes, stream->get());
    CUgraph graph = nullptr;
    ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph),
              CUDA_SUCCESS);
    ASSERT_EQ(run, PTXGEN_STATUS_SUCCESS) << ptxgenGetLastErrorMessage(handle_);
    CUgraphExec replay = nullptr;
    ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
              CUDA_SUCCESS);
    for (uint32_t replays = 0; replays < 3; ++replays) {
      buffers.Refill(110 + 2 * replays);
      ASSERT_EQ((*driver)->cuGraphLaunch(replay, stream->get()), CUDA_SUCCESS);
      ASSERT_TRUE(stream->Synchronize().ok());
      EXPECT_LT(buffers.Error(), gemm::ErrorBound(ScalarType::kF16))
          << "replay " << replays;
    }
    EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
    EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
  }
}

// A stream's capture id: 0 outside a capture, the same throughout one, and
// another for the next capture on the same stream.
TEST_F(CApiWorkspaceGpuTest, EachCaptureOnAStreamHasItsOwnId) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto id = [&] {
    unsigned long long capture = 7;
    EXPECT_EQ(ptxgenStreamGetCaptureId(handle_, stream->get(), &capture),
              PTXGEN_STATUS_SUCCESS)
        << ptxgenGetLastErrorMessage(handle_);
    return capture;
  };
  EXPECT_EQ(id(), 0u);
  std::vector<unsigned long long> ids;
  for (int capture = 0; capture < 2; ++capture) {
    ASSERT_EQ((*driver)->cuStreamBeginCapture(stream->get(),
                                              CU_STREAM_CAPTURE_MODE_GLOBAL),
              CUDA_SUCCESS);
    ids.push_back(id());
    EXPECT_EQ(id(), ids.back());
    CUgraph graph = nullptr;
    ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph),
              CUDA_SUCCESS);
    EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(id(), 0u);
  }
  EXPECT_NE(ids[0], 0u);
  EXPECT_NE(ids[0], ids[1]);
}

// One workspace zeroed once and kept, as a server keeps one per stream:
// the split-K and the stream-K GEMM take turns on it, each run zeroing
// nothing first (ptxgenGemmRunWithZeroedWorkspace) and leaving it ready
// for the next.
TEST_F(CApiWorkspaceGpuTest, GemmsTakeTurnsOnAKeptZeroedWorkspace) {
  std::vector<ptxgenGemm_t> gemms;
  std::vector<CaseBuffers> buffers;
  size_t most = 0;
  for (const WorkspaceCase& c : kWorkspaceCases) {
    size_t bytes = 0;
    gemms.push_back(Prepare(c, &bytes));
    ASSERT_NE(gemms.back(), nullptr);
    buffers.emplace_back(c, bytes, 110 + 2 * gemms.size());
    most = std::max(most, bytes);
  }
  DeviceBuffer kept = Allocate(most);
  ASSERT_TRUE(kept.Memset8(0).ok());
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  for (uint32_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < gemms.size(); ++i) {
      buffers[i].Refill(120 + 2 * round);
      const ptxgenGemmOperands_t operands = buffers[i].Operands();
      ASSERT_EQ(ptxgenGemmRunWithZeroedWorkspace(handle_, gemms[i], &operands,
                                                 MutablePointer(kept), most,
                                                 stream->get()),
                PTXGEN_STATUS_SUCCESS)
          << ptxgenGetLastErrorMessage(handle_);
    }
    ASSERT_TRUE(stream->Synchronize().ok());
    for (size_t i = 0; i < gemms.size(); ++i) {
      EXPECT_LT(buffers[i].Error(), gemm::ErrorBound(ScalarType::kF16))
          << kWorkspaceCases[i].name << ", round " << round;
    }
  }
  for (ptxgenGemm_t gemm : gemms) {
    EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
  }
}

// A GEMM whose workspace is the caller's refuses a run with too small a
// workspace, or with none (ptxgenGemmRunOperands), naming the bytes it
// needs; with enough it runs.
TEST_F(CApiWorkspaceGpuTest, ATooSmallOrMissingWorkspaceIsRefused) {
  const WorkspaceCase& c = kWorkspaceCases[0];
  size_t bytes = 0;
  ptxgenGemm_t gemm = Prepare(c, &bytes);
  ASSERT_NE(gemm, nullptr);
  CaseBuffers buffers(c, bytes, 120);
  const ptxgenGemmOperands_t operands = buffers.Operands();
  EXPECT_EQ(ptxgenGemmRunWithWorkspace(handle_, gemm, &operands,
                                       buffers.Workspace(), bytes - 1, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(ptxgenGetLastErrorMessage(handle_))
                .find(absl::StrCat("ptxgenGemmRunWithWorkspace: GEMM: a "
                                   "workspace of ",
                                   bytes - 1,
                                   " bytes is too small: this "
                                   "Gemm's split-K launch needs ",
                                   bytes, " bytes")),
            std::string::npos)
      << ptxgenGetLastErrorMessage(handle_);
  EXPECT_EQ(ptxgenGemmRunOperands(handle_, gemm, &operands, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(ptxgenGetLastErrorMessage(handle_))
                .find(absl::StrCat("needs a workspace of ", bytes, " bytes")),
            std::string::npos)
      << ptxgenGetLastErrorMessage(handle_);
  EXPECT_EQ(ptxgenGemmRunWithWorkspace(handle_, gemm, &operands,
                                       buffers.Workspace(), bytes, nullptr),
            PTXGEN_STATUS_SUCCESS)
      << ptxgenGetLastErrorMessage(handle_);
  EXPECT_LT(buffers.Error(), gemm::ErrorBound(ScalarType::kF16));
  EXPECT_EQ(ptxgenGemmDestroy(gemm), PTXGEN_STATUS_SUCCESS);
}

}  // namespace
}  // namespace ptxgen::capi
