// What each field of the C problems becomes in gemm::GemmProblem and
// attention::AttentionProblem, including the ones no plan shows by itself
// (record_amax), B's type, which the C struct always names and GemmProblem
// only where it differs, and the attention's scale, 0 for the default; the
// entry points' refusals that need no device.
#include "lib/capi/problem.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/ptxgen.h"

namespace ptxgen::capi {
namespace {

using ptx::ScalarType;

ptxgenGemmProblem_t Initialized(ptxgenDataType_t type) {
  ptxgenGemmProblem_t problem;
  EXPECT_EQ(ptxgenGemmProblemInit(&problem, 128, 256, 64, type),
            PTXGEN_STATUS_SUCCESS);
  return problem;
}

TEST(ProblemOf, EachDataTypeIsItsScalarType) {
  const struct {
    ptxgenDataType_t c;
    ScalarType element;
  } types[] = {{PTXGEN_TYPE_F16, ScalarType::kF16},
               {PTXGEN_TYPE_BF16, ScalarType::kBF16},
               {PTXGEN_TYPE_F32, ScalarType::kF32},
               {PTXGEN_TYPE_E4M3, ScalarType::kE4M3},
               {PTXGEN_TYPE_E5M2, ScalarType::kE5M2},
               {PTXGEN_TYPE_TF32, ScalarType::kTF32},
               {PTXGEN_TYPE_S8, ScalarType::kS8},
               {PTXGEN_TYPE_U8, ScalarType::kU8},
               {PTXGEN_TYPE_S32, ScalarType::kS32}};
  for (const auto& type : types) {
    ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_F16);
    c.input_type = type.c;
    c.b_input_type = type.c;
    c.output_type = type.c;
    c.bias_type = type.c;
    absl::StatusOr<gemm::GemmProblem> p = ProblemOf(c);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->element, type.element);
    EXPECT_EQ(p->b_element, std::nullopt);
    EXPECT_EQ(p->output, type.element);
    EXPECT_EQ(p->bias_type, type.element);
  }
}

TEST(ProblemOf, BOfAnotherTypeIsBElement) {
  ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_E4M3);
  c.b_input_type = PTXGEN_TYPE_E5M2;
  absl::StatusOr<gemm::GemmProblem> p = ProblemOf(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->element, ScalarType::kE4M3);
  EXPECT_EQ(p->b_element, ScalarType::kE5M2);
}

TEST(ProblemOf, ScalingFastAccumulationAndAmaxAreTheProblems) {
  ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_E4M3);
  absl::StatusOr<gemm::GemmProblem> plain = ProblemOf(c);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->scaling, gemm::GemmScaling::kNone);
  EXPECT_FALSE(plain->fast_accumulation);
  EXPECT_FALSE(plain->record_amax);
  EXPECT_EQ(plain->output, ScalarType::kBF16);  // Init's default for fp8

  c.scaling = PTXGEN_SCALING_TENSOR;
  c.fast_accumulation = 1;
  c.record_amax = 1;
  c.output_type = PTXGEN_TYPE_E4M3;
  absl::StatusOr<gemm::GemmProblem> p = ProblemOf(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scaling, gemm::GemmScaling::kTensor);
  EXPECT_TRUE(p->fast_accumulation);
  EXPECT_TRUE(p->record_amax);
  EXPECT_EQ(p->output, ScalarType::kE4M3);
}

TEST(ProblemOf, GroupingAndExpectedMAreTheProblems) {
  ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_BF16);
  EXPECT_EQ(c.grouping, PTXGEN_GROUPING_NONE);
  EXPECT_EQ(c.expected_m, 0);
  absl::StatusOr<gemm::GemmProblem> plain = ProblemOf(c);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->grouping, gemm::Grouping::kNone);
  EXPECT_EQ(plain->expected_m, 0);

  const struct {
    ptxgenGrouping_t c;
    gemm::Grouping grouping;
  } groupings[] = {{PTXGEN_GROUPING_CONTIGUOUS, gemm::Grouping::kContiguous},
                   {PTXGEN_GROUPING_MASKED, gemm::Grouping::kMasked}};
  for (const auto& grouping : groupings) {
    c.grouping = grouping.c;
    c.batch = 8;
    c.expected_m = 16;
    c.stride_b = 300 * 64;
    c.bias = PTXGEN_BIAS_N;
    c.stride_bias = 256;
    absl::StatusOr<gemm::GemmProblem> p = ProblemOf(c);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->grouping, grouping.grouping);
    EXPECT_EQ(p->batch, 8);
    EXPECT_EQ(p->expected_m, 16);
    EXPECT_EQ(p->stride_b, 300 * 64);
    EXPECT_EQ(p->stride_bias, 256);
    EXPECT_EQ(p->bias, gemm::BiasAlong::kN);
  }
}

// An int stored in grouping outside ptxgenGrouping_t is refused naming the
// field, the enumeration and its values.
TEST(ProblemOf, RefusesAGroupingOutsideItsEnumeration) {
  for (const int stored : {3, -1, 0x5a5a5a5a}) {
    ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_BF16);
    c.grouping = static_cast<ptxgenGrouping_t>(stored);
    absl::StatusOr<gemm::GemmProblem> p = ProblemOf(c);
    ASSERT_FALSE(p.ok()) << stored;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(
        p.status().message(),
        absl::StrCat("ptxgenGemmProblem_t.grouping: ", stored,
                     " is not a ptxgenGrouping_t (PTXGEN_GROUPING_NONE=0, "
                     "PTXGEN_GROUPING_CONTIGUOUS=1, "
                     "PTXGEN_GROUPING_MASKED=2)"));
  }
}

TEST(DefaultOutputType, IsTheLibrarysDefaultAndKeepsUnknownValues) {
  EXPECT_EQ(DefaultOutputType(PTXGEN_TYPE_BF16), PTXGEN_TYPE_BF16);
  EXPECT_EQ(DefaultOutputType(PTXGEN_TYPE_E5M2), PTXGEN_TYPE_BF16);
  EXPECT_EQ(DefaultOutputType(PTXGEN_TYPE_TF32), PTXGEN_TYPE_F32);
  EXPECT_EQ(DefaultOutputType(PTXGEN_TYPE_U8), PTXGEN_TYPE_S32);
  EXPECT_EQ(DefaultOutputType(static_cast<ptxgenDataType_t>(42)),
            static_cast<ptxgenDataType_t>(42));
}

// A handle for the entry points that take one, destroyed with the test.
class Handle {
 public:
  Handle() { EXPECT_EQ(ptxgenCreate(&handle_), PTXGEN_STATUS_SUCCESS); }
  ~Handle() { ptxgenDestroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ptxgenHandle_t get() const { return handle_; }
  std::string message() const { return ptxgenGetLastErrorMessage(handle_); }

 private:
  ptxgenHandle_t handle_ = nullptr;
};

// The repro: C's span with beta = 0 and ldc = 2^63-1 was
// -9223372036854775807. C is not read, so it spans nothing.
TEST(ptxgenGemmGetSpans, CSpansNothingWithBetaZero) {
  const Handle handle;
  ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_F16);
  c.batch = 2;
  c.ldc = INT64_MAX;
  ptxgenGemmSpans_t spans{};
  ASSERT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans), PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.c, 0);
  EXPECT_EQ(spans.d, 2 * 128 * 256);
}

// The repro: stride_bias = 2^63-1 gave a negative bias span. The
// bias stride is bounded as every batch stride is, below 2^40 bytes.
TEST(ptxgenGemmGetSpans, RefusesABiasStridePast2To40Bytes) {
  const Handle handle;
  ptxgenGemmProblem_t c = Initialized(PTXGEN_TYPE_F16);
  c.batch = 2;
  c.bias = PTXGEN_BIAS_N;
  c.stride_bias = INT64_MAX;
  ptxgenGemmSpans_t spans{};
  EXPECT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(handle.message().find("stride_bias=9223372036854775807"),
            std::string::npos)
      << handle.message();
  EXPECT_NE(handle.message().find("below 2^40 bytes"), std::string::npos)
      << handle.message();
}

// Contiguous: A and D are one matrix each of every group's rows (m their
// total), B one [n, k] per group, the bias one n-vector per group.
TEST(ptxgenGemmGetSpans, AContiguousGroupedProblemsAAndDAreOneMatrix) {
  const Handle handle;
  ptxgenGemmProblem_t c;
  ASSERT_EQ(ptxgenGemmProblemInit(&c, 1000, 256, 128, PTXGEN_TYPE_BF16),
            PTXGEN_STATUS_SUCCESS);
  c.grouping = PTXGEN_GROUPING_CONTIGUOUS;
  c.batch = 8;
  c.bias = PTXGEN_BIAS_N;
  c.stride_bias = 256;
  ptxgenGemmSpans_t spans{};
  ASSERT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans), PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.a, 1000 * 128);
  EXPECT_EQ(spans.b, 8 * 256 * 128);
  EXPECT_EQ(spans.c, 0);
  EXPECT_EQ(spans.d, 1000 * 256);
  EXPECT_EQ(spans.bias, 8 * 256);
  // B stored [groups, k, n] (torch._grouped_mm's mat_b): the same span.
  c.b_major = PTXGEN_MAJOR_MN;
  ASSERT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans), PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.b, 8 * 128 * 256);
}

// Masked: A and D hold m rows of room per group.
TEST(ptxgenGemmGetSpans, AMaskedGroupedProblemsAAndDAreOnePerGroup) {
  const Handle handle;
  ptxgenGemmProblem_t c;
  ASSERT_EQ(ptxgenGemmProblemInit(&c, 64, 256, 128, PTXGEN_TYPE_BF16),
            PTXGEN_STATUS_SUCCESS);
  c.grouping = PTXGEN_GROUPING_MASKED;
  c.batch = 4;
  c.expected_m = 8;
  ptxgenGemmSpans_t spans{};
  ASSERT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans), PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.a, 4 * 64 * 128);
  EXPECT_EQ(spans.b, 4 * 256 * 128);
  EXPECT_EQ(spans.d, 4 * 64 * 256);
  EXPECT_EQ(spans.bias, 0);
}

// The grouped rules reach a C caller through the problem's checks.
TEST(ptxgenGemmGetSpans, RefusesGroupedProblemsBreakingTheirRules) {
  const Handle handle;
  const struct {
    const char* name;
    void (*change)(ptxgenGemmProblem_t&);
    const char* rule;
  } refused[] = {
      {"expected_m past m", [](ptxgenGemmProblem_t& c) { c.expected_m = 1001; },
       "expected_m=1001 is outside 0..m (1000)"},
      {"a contiguous A batched",
       [](ptxgenGemmProblem_t& c) { c.stride_a = 1000 * 128; },
       "stride_a, stride_c and stride_d must be 0"},
      {"expected_m without grouping",
       [](ptxgenGemmProblem_t& c) {
         c.grouping = PTXGEN_GROUPING_NONE;
         c.expected_m = 16;
       },
       "expected_m is a grouped GEMM's planning hint"},
  };
  for (const auto& r : refused) {
    ptxgenGemmProblem_t c;
    ASSERT_EQ(ptxgenGemmProblemInit(&c, 1000, 256, 128, PTXGEN_TYPE_BF16),
              PTXGEN_STATUS_SUCCESS);
    c.grouping = PTXGEN_GROUPING_CONTIGUOUS;
    c.batch = 8;
    r.change(c);
    ptxgenGemmSpans_t spans{};
    EXPECT_EQ(ptxgenGemmGetSpans(handle.get(), &c, &spans),
              PTXGEN_STATUS_INVALID_VALUE)
        << r.name;
    EXPECT_NE(handle.message().find(r.rule), std::string::npos)
        << r.name << ": " << handle.message();
  }
}

// The header's contract: m, n and k are each 1..2^31-1 and the type one of
// ptxgenDataType_t; anything else is refused and the struct left as it was.
TEST(ptxgenGemmProblemInit, RefusesSizesAndTypesOutsideTheirRanges) {
  const struct {
    int64_t m, n, k;
    int type;
  } refused[] = {{64, 64, 64, 99},
                 {64, 64, 64, -1},
                 {-5, 64, 64, 0},
                 {64, 0, 64, 0},
                 {64, 64, int64_t{1} << 31, 0}};
  for (const auto& c : refused) {
    ptxgenGemmProblem_t problem = Initialized(PTXGEN_TYPE_BF16);
    const ptxgenGemmProblem_t before = problem;
    EXPECT_EQ(ptxgenGemmProblemInit(&problem, c.m, c.n, c.k,
                                    static_cast<ptxgenDataType_t>(c.type)),
              PTXGEN_STATUS_INVALID_VALUE)
        << c.m << "x" << c.n << "x" << c.k << " type " << c.type;
    EXPECT_EQ(problem.m, before.m);
    EXPECT_EQ(problem.input_type, before.input_type);
  }
  ptxgenGemmProblem_t largest;
  EXPECT_EQ(ptxgenGemmProblemInit(&largest, (int64_t{1} << 31) - 1, 1, 1,
                                  PTXGEN_TYPE_U8),
            PTXGEN_STATUS_SUCCESS);
}

// A pointer whose first word is not its kind's is refused and never freed:
// what a destroyed object shows where its memory was not reused. (A real
// use after destroy reads freed memory, undefined behaviour that the
// sanitizers stop, so these stand-ins are live memory of another kind.)
TEST(ptxgenObjects, APointerToAnotherKindIsRefusedNotUsed) {
  const Handle handle;
  const ptxgenPlan_t not_a_plan = reinterpret_cast<ptxgenPlan_t>(handle.get());
  ptxgenKernelInfo_t info{};
  EXPECT_EQ(ptxgenPlanGetKernelInfo(not_a_plan, &info),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenPlanDestroy(not_a_plan), PTXGEN_STATUS_INVALID_VALUE);
  const ptxgenGemm_t not_a_gemm = reinterpret_cast<ptxgenGemm_t>(handle.get());
  EXPECT_EQ(ptxgenGemmGetKernelInfo(not_a_gemm, &info),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenGemmRun(handle.get(), not_a_gemm, nullptr, nullptr, nullptr,
                          nullptr, nullptr, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(handle.message().find("gemm is not a live object: destroyed"),
            std::string::npos)
      << handle.message();
  EXPECT_EQ(ptxgenGemmDestroy(not_a_gemm), PTXGEN_STATUS_INVALID_VALUE);
  // The handle survived all of it.
  ptxgenGemmSpans_t spans{};
  const ptxgenGemmProblem_t problem = Initialized(PTXGEN_TYPE_F16);
  EXPECT_EQ(ptxgenGemmGetSpans(handle.get(), &problem, &spans),
            PTXGEN_STATUS_SUCCESS);
}

// A handle's word cleared, as ptxgenDestroy clears it: every entry refuses
// it (once, a destroyed handle deadlocked on its destroyed mutex).
TEST(ptxgenObjects, AClearedHandleIsRefusedByEveryEntry) {
  alignas(64) unsigned char cleared[256] = {};
  const ptxgenHandle_t handle = reinterpret_cast<ptxgenHandle_t>(cleared);
  const ptxgenGemmProblem_t problem = Initialized(PTXGEN_TYPE_F16);
  ptxgenGemmSpans_t spans{};
  ptxgenPlan_t plan = nullptr;
  ptxgenGemm_t gemm = nullptr;
  EXPECT_EQ(ptxgenGemmGetSpans(handle, &problem, &spans),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenPlanGemm(handle, &problem, nullptr, &plan),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenGemmPrepare(handle, &problem, &gemm),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenGemmRun(handle, gemm, nullptr, nullptr, nullptr, nullptr,
                          nullptr, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(ptxgenGetLastErrorMessage(handle))
                .find("the handle is not a live object"),
            std::string::npos);
  EXPECT_EQ(ptxgenDestroy(handle), PTXGEN_STATUS_INVALID_VALUE);
}

ptxgenAttentionProblem_t InitializedAttention() {
  ptxgenAttentionProblem_t problem;
  EXPECT_EQ(ptxgenAttentionProblemInit(&problem, 2, 8, 2, 256, 384, 128,
                                       PTXGEN_TYPE_BF16),
            PTXGEN_STATUS_SUCCESS);
  return problem;
}

// Init's problem is the packed BSHD one with the default scale: every
// other field as a zeroed struct has it, whatever was there before.
TEST(ptxgenAttentionProblemInit, IsThePackedProblemWithTheDefaultScale) {
  ptxgenAttentionProblem_t c;
  std::memset(&c, 0x5a, sizeof c);
  ASSERT_EQ(
      ptxgenAttentionProblemInit(&c, 2, 8, 2, 256, 384, 128, PTXGEN_TYPE_F16),
      PTXGEN_STATUS_SUCCESS);
  EXPECT_EQ(c.batch, 2);
  EXPECT_EQ(c.heads_q, 8);
  EXPECT_EQ(c.heads_kv, 2);
  EXPECT_EQ(c.seq_q, 256);
  EXPECT_EQ(c.seq_k, 384);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.element_type, PTXGEN_TYPE_F16);
  EXPECT_EQ(c.causal, 0);
  EXPECT_EQ(c.scale, 0.0f);
  EXPECT_EQ(c.layout, PTXGEN_ATTENTION_LAYOUT_BSHD);
  for (const ptxgenAttentionStrides_t& strides :
       {c.q_stride, c.k_stride, c.v_stride, c.o_stride}) {
    EXPECT_EQ(strides.batch, 0);
    EXPECT_EQ(strides.seq, 0);
    EXPECT_EQ(strides.head, 0);
  }
  EXPECT_EQ(c.variable_lengths, 0);
  EXPECT_EQ(c.total_q, 0);
  EXPECT_EQ(c.total_k, 0);
}

TEST(ptxgenAttentionProblemInit, RefusesSizesAndTypesOutsideTheirRanges) {
  const struct {
    int64_t batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
    int type;
  } refused[] = {
      {0, 8, 8, 64, 64, 64, 1},  {1, 8, 0, 64, 64, 64, 1},
      {1, 8, 8, -64, 64, 64, 1}, {1, 8, 8, 64, int64_t{1} << 31, 64, 1},
      {1, 8, 8, 64, 64, 64, 9},  {1, 8, 8, 64, 64, 64, -1}};
  for (const auto& r : refused) {
    ptxgenAttentionProblem_t problem = InitializedAttention();
    const ptxgenAttentionProblem_t before = problem;
    EXPECT_EQ(ptxgenAttentionProblemInit(
                  &problem, r.batch, r.heads_q, r.heads_kv, r.seq_q, r.seq_k,
                  r.head_dim, static_cast<ptxgenDataType_t>(r.type)),
              PTXGEN_STATUS_INVALID_VALUE)
        << r.batch << " " << r.heads_kv << " " << r.seq_q << " " << r.seq_k
        << " type " << r.type;
    EXPECT_EQ(problem.batch, before.batch);
    EXPECT_EQ(problem.heads_kv, before.heads_kv);
    EXPECT_EQ(problem.seq_k, before.seq_k);
    EXPECT_EQ(problem.element_type, before.element_type);
  }
  EXPECT_EQ(
      ptxgenAttentionProblemInit(nullptr, 1, 1, 1, 1, 1, 16, PTXGEN_TYPE_F16),
      PTXGEN_STATUS_INVALID_VALUE);
  // Init checks sizes and types only: an f32 element or an odd head_dim
  // is the problem's rules' to refuse, where the problem is used.
  ptxgenAttentionProblem_t largest;
  EXPECT_EQ(ptxgenAttentionProblemInit(&largest, (int64_t{1} << 31) - 1, 1, 1,
                                       1, 1, 7, PTXGEN_TYPE_F32),
            PTXGEN_STATUS_SUCCESS);
}

TEST(AttentionProblemOf, EachFieldIsTheProblems) {
  ptxgenAttentionProblem_t c = InitializedAttention();
  absl::StatusOr<attention::AttentionProblem> plain = AttentionProblemOf(c);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->batch, 2);
  EXPECT_EQ(plain->heads_q, 8);
  EXPECT_EQ(plain->heads_kv, 2);
  EXPECT_EQ(plain->seq_q, 256);
  EXPECT_EQ(plain->seq_k, 384);
  EXPECT_EQ(plain->head_dim, 128);
  EXPECT_EQ(plain->element, ScalarType::kBF16);
  EXPECT_FALSE(plain->causal);
  EXPECT_EQ(plain->scale, std::nullopt);
  EXPECT_EQ(plain->layout, attention::Layout::kBatchSeqHeadDim);
  EXPECT_FALSE(plain->variable_lengths);

  c.element_type = PTXGEN_TYPE_F16;
  c.causal = 1;
  c.scale = 0.25f;
  c.layout = PTXGEN_ATTENTION_LAYOUT_BHSD;
  c.q_stride = {1, 2, 3};
  c.k_stride = {4, 5, 6};
  c.v_stride = {7, 8, 9};
  c.o_stride = {10, 11, 12};
  c.variable_lengths = 1;
  c.total_q = 1000;
  c.total_k = 2000;
  absl::StatusOr<attention::AttentionProblem> p = AttentionProblemOf(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->element, ScalarType::kF16);
  EXPECT_TRUE(p->causal);
  EXPECT_EQ(p->scale, 0.25f);
  EXPECT_EQ(p->layout, attention::Layout::kBatchHeadSeqDim);
  const struct {
    const attention::Strides& strides;
    int64_t batch, seq, head;
  } strides[] = {{p->q_stride, 1, 2, 3},
                 {p->k_stride, 4, 5, 6},
                 {p->v_stride, 7, 8, 9},
                 {p->o_stride, 10, 11, 12}};
  for (const auto& s : strides) {
    EXPECT_EQ(s.strides.batch, s.batch);
    EXPECT_EQ(s.strides.seq, s.seq);
    EXPECT_EQ(s.strides.head, s.head);
  }
  EXPECT_TRUE(p->variable_lengths);
  EXPECT_EQ(p->total_q, 1000);
  EXPECT_EQ(p->total_k, 2000);
}

// 0 (either sign) is the C struct's default scale; any other value is
// passed on for the problem's rules, which refuse what is not finite and
// positive, so a NaN is refused rather than taken for the default.
TEST(AttentionProblemOf, ScaleZeroIsTheDefaultAndOthersArePassedOn) {
  ptxgenAttentionProblem_t c = InitializedAttention();
  c.scale = -0.0f;
  absl::StatusOr<attention::AttentionProblem> zero = AttentionProblemOf(c);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->scale, std::nullopt);
  for (const float scale : {-1.0f, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity()}) {
    c.scale = scale;
    absl::StatusOr<attention::AttentionProblem> p = AttentionProblemOf(c);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(p->scale.has_value()) << scale;
    EXPECT_TRUE(std::isnan(scale) ? std::isnan(*p->scale) : *p->scale == scale);
    EXPECT_FALSE(attention::ValidateAttentionProblem(*p).ok()) << scale;
  }
}

// Every int stored in an enumeration or flag field outside its values is
// refused naming the field and the legal values.
TEST(AttentionProblemOf, RefusesValuesOutsideTheirEnumerationsAndFlags) {
  const struct {
    void (*change)(ptxgenAttentionProblem_t&);
    const char* message;
  } refused[] = {
      {[](ptxgenAttentionProblem_t& c) {
         c.layout = static_cast<ptxgenAttentionLayout_t>(2);
       },
       "ptxgenAttentionProblem_t.layout: 2 is not a ptxgenAttentionLayout_t "
       "(PTXGEN_ATTENTION_LAYOUT_BSHD=0, PTXGEN_ATTENTION_LAYOUT_BHSD=1)"},
      {[](ptxgenAttentionProblem_t& c) {
         c.element_type = static_cast<ptxgenDataType_t>(-3);
       },
       "ptxgenAttentionProblem_t.element_type: -3 is not a ptxgenDataType_t "
       "(PTXGEN_TYPE_F16=0, "},
      {[](ptxgenAttentionProblem_t& c) { c.causal = 0x5a5a5a5a; },
       "ptxgenAttentionProblem_t.causal: 1515870810 is not 0 or 1"},
      {[](ptxgenAttentionProblem_t& c) { c.variable_lengths = -1; },
       "ptxgenAttentionProblem_t.variable_lengths: -1 is not 0 or 1"},
  };
  for (const auto& r : refused) {
    ptxgenAttentionProblem_t c = InitializedAttention();
    r.change(c);
    absl::StatusOr<attention::AttentionProblem> p = AttentionProblemOf(c);
    ASSERT_FALSE(p.ok()) << r.message;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(r.message), std::string::npos)
        << p.status().message();
  }
}

// Packed BSHD: Q and O [batch, seq_q, heads_q, dim], K and V [batch,
// seq_k, heads_kv, dim], the LSE [batch, heads_q, seq_q]; BHSD spans the
// same; variable lengths span the totals, the LSE [heads_q, total_q].
TEST(ptxgenAttentionGetSpans, SpansEachTensorAsStored) {
  const Handle handle;
  ptxgenAttentionProblem_t c = InitializedAttention();
  ptxgenAttentionSpans_t spans{};
  ASSERT_EQ(ptxgenAttentionGetSpans(handle.get(), &c, &spans),
            PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(handle.message(), "");
  EXPECT_EQ(spans.q, 2 * 256 * 8 * 128);
  EXPECT_EQ(spans.k, 2 * 384 * 2 * 128);
  EXPECT_EQ(spans.v, spans.k);
  EXPECT_EQ(spans.o, spans.q);
  EXPECT_EQ(spans.lse, 2 * 8 * 256);

  c.layout = PTXGEN_ATTENTION_LAYOUT_BHSD;
  c.k_stride.seq = 136;  // padded rows: the padding carries outward
  ASSERT_EQ(ptxgenAttentionGetSpans(handle.get(), &c, &spans),
            PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.q, 2 * 8 * 256 * 128);
  EXPECT_EQ(spans.k, (2 * 2 * 384 - 1) * 136 + 128);

  ptxgenAttentionProblem_t varlen = InitializedAttention();
  varlen.variable_lengths = 1;
  varlen.total_q = 300;
  varlen.total_k = 500;
  ASSERT_EQ(ptxgenAttentionGetSpans(handle.get(), &varlen, &spans),
            PTXGEN_STATUS_SUCCESS)
      << handle.message();
  EXPECT_EQ(spans.q, 300 * 8 * 128);
  EXPECT_EQ(spans.k, 500 * 2 * 128);
  EXPECT_EQ(spans.lse, 8 * 300);
}

// The attention layer's rules reach a C caller in its words, naming the
// entry point, before any device is looked for.
TEST(ptxgenAttentionGetSpans, RefusesProblemsBreakingTheirRules) {
  const Handle handle;
  const struct {
    void (*change)(ptxgenAttentionProblem_t&);
    const char* rule;
  } refused[] = {
      {[](ptxgenAttentionProblem_t& c) { c.element_type = PTXGEN_TYPE_F32; },
       "attention: element must be f16 or bf16, not f32"},
      {[](ptxgenAttentionProblem_t& c) { c.head_dim = 72; },
       "attention: head_dim=72 must be a multiple of 16 and at most 256"},
      {[](ptxgenAttentionProblem_t& c) { c.heads_kv = 3; },
       "attention: heads_q=8 must be a multiple of heads_kv=3"},
      {[](ptxgenAttentionProblem_t& c) { c.scale = -0.5f; },
       "attention: scale=-0.5 must be finite and positive"},
      {[](ptxgenAttentionProblem_t& c) {
         c.variable_lengths = 1;
         c.total_q = c.total_k = 100;
         c.layout = PTXGEN_ATTENTION_LAYOUT_BHSD;
       },
       "attention: variable lengths store Q, K, V and O [total, heads, "
       "dim]"},
      {[](ptxgenAttentionProblem_t& c) { c.total_q = 100; },
       "attention: total_q and total_k are the packed rows of variable "
       "lengths"},
      {[](ptxgenAttentionProblem_t& c) { c.q_stride.seq = 100; },
       "attention: q_stride.seq=100 is less than the span of the heads "
       "and head_dim inside it"},
      {[](ptxgenAttentionProblem_t& c) { c.batch = 0; },
       "attention: batch=0 is outside 1..2147483647"},
  };
  for (const auto& r : refused) {
    ptxgenAttentionProblem_t c = InitializedAttention();
    r.change(c);
    ptxgenAttentionSpans_t spans{};
    EXPECT_EQ(ptxgenAttentionGetSpans(handle.get(), &c, &spans),
              PTXGEN_STATUS_INVALID_VALUE)
        << r.rule;
    EXPECT_NE(handle.message().find(
                  absl::StrCat("ptxgenAttentionGetSpans: ", r.rule)),
              std::string::npos)
        << handle.message();
    ptxgenAttention_t attention = reinterpret_cast<ptxgenAttention_t>(&c);
    EXPECT_EQ(ptxgenAttentionPrepare(handle.get(), &c, &attention),
              PTXGEN_STATUS_INVALID_VALUE)
        << r.rule;
    EXPECT_EQ(attention, nullptr);
    EXPECT_NE(
        handle.message().find(absl::StrCat("ptxgenAttentionPrepare: ", r.rule)),
        std::string::npos)
        << handle.message();
  }
}

TEST(ptxgenAttention, RefusesNullArguments) {
  const Handle handle;
  const ptxgenAttentionProblem_t problem = InitializedAttention();
  ptxgenAttentionSpans_t spans{};
  EXPECT_EQ(ptxgenAttentionGetSpans(handle.get(), nullptr, &spans),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(handle.message(), "ptxgenAttentionGetSpans: problem is NULL");
  EXPECT_EQ(ptxgenAttentionGetSpans(handle.get(), &problem, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(handle.message(), "ptxgenAttentionGetSpans: spans is NULL");
  EXPECT_EQ(ptxgenAttentionGetSpans(nullptr, &problem, &spans),
            PTXGEN_STATUS_INVALID_VALUE);
  ptxgenAttention_t attention = nullptr;
  EXPECT_EQ(ptxgenAttentionPrepare(handle.get(), nullptr, &attention),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(handle.message(), "ptxgenAttentionPrepare: problem is NULL");
  EXPECT_EQ(ptxgenAttentionPrepare(handle.get(), &problem, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(handle.message(), "ptxgenAttentionPrepare: attention is NULL");
  EXPECT_EQ(ptxgenAttentionPrepare(nullptr, &problem, &attention),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenAttentionRun(handle.get(), nullptr, nullptr, nullptr, nullptr,
                               nullptr, nullptr, nullptr, nullptr, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(handle.message(), "ptxgenAttentionRun: attention is NULL");
  ptxgenKernelInfo_t info{};
  EXPECT_EQ(ptxgenAttentionGetKernelInfo(nullptr, &info),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenAttentionDestroy(nullptr), PTXGEN_STATUS_SUCCESS);
}

// As for GEMMs: a pointer whose first word is not an attention's is
// refused by every attention entry, never used or freed.
TEST(ptxgenObjects, APointerToAnotherKindIsNoAttention) {
  const Handle handle;
  const ptxgenAttention_t not_an_attention =
      reinterpret_cast<ptxgenAttention_t>(handle.get());
  ptxgenKernelInfo_t info{};
  EXPECT_EQ(ptxgenAttentionGetKernelInfo(not_an_attention, &info),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(
      ptxgenAttentionRun(handle.get(), not_an_attention, nullptr, nullptr,
                         nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
      PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_NE(handle.message().find("ptxgenAttentionRun: attention is not a "
                                  "live object: destroyed"),
            std::string::npos)
      << handle.message();
  EXPECT_EQ(ptxgenAttentionDestroy(not_an_attention),
            PTXGEN_STATUS_INVALID_VALUE);
  const ptxgenGemm_t not_a_gemm = reinterpret_cast<ptxgenGemm_t>(handle.get());
  EXPECT_EQ(ptxgenGemmDestroy(not_a_gemm), PTXGEN_STATUS_INVALID_VALUE);

  alignas(64) unsigned char cleared[256] = {};
  const ptxgenHandle_t dead = reinterpret_cast<ptxgenHandle_t>(cleared);
  const ptxgenAttentionProblem_t problem = InitializedAttention();
  ptxgenAttentionSpans_t spans{};
  ptxgenAttention_t attention = nullptr;
  EXPECT_EQ(ptxgenAttentionGetSpans(dead, &problem, &spans),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenAttentionPrepare(dead, &problem, &attention),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenAttentionRun(dead, attention, nullptr, nullptr, nullptr,
                               nullptr, nullptr, nullptr, nullptr, nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
}

TEST(ptxgenGetScalingByName, ReadsEachCanonicalName) {
  const struct {
    const char* name;
    ptxgenScaling_t scaling;
  } names[] = {{"none", PTXGEN_SCALING_NONE},
               {"tensor", PTXGEN_SCALING_TENSOR},
               {"block", PTXGEN_SCALING_BLOCK}};
  for (const auto& named : names) {
    ptxgenScaling_t scaling = static_cast<ptxgenScaling_t>(-1);
    EXPECT_EQ(ptxgenGetScalingByName(named.name, &scaling),
              PTXGEN_STATUS_SUCCESS)
        << named.name;
    EXPECT_EQ(scaling, named.scaling) << named.name;
  }
}

// "NONE" once passed a check that "none" failed and was read as no scaling
// later: every spelling but the canonical one is refused.
TEST(ptxgenGetScalingByName, RefusesOtherSpellingsAndNull) {
  for (const char* name : {"NONE", "None", "Tensor", "BLOCK", " none", "none ",
                           "", "per_tensor"}) {
    ptxgenScaling_t scaling = PTXGEN_SCALING_BLOCK;
    EXPECT_EQ(ptxgenGetScalingByName(name, &scaling),
              PTXGEN_STATUS_INVALID_VALUE)
        << '"' << name << '"';
    EXPECT_EQ(scaling, PTXGEN_SCALING_BLOCK) << '"' << name << '"';
  }
  ptxgenScaling_t scaling = PTXGEN_SCALING_NONE;
  EXPECT_EQ(ptxgenGetScalingByName(nullptr, &scaling),
            PTXGEN_STATUS_INVALID_VALUE);
  EXPECT_EQ(ptxgenGetScalingByName("none", nullptr),
            PTXGEN_STATUS_INVALID_VALUE);
}

}  // namespace
}  // namespace ptxgen::capi
