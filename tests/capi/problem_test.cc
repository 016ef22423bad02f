// What each field of the C problem becomes in gemm::GemmProblem, including
// the ones no plan shows by itself (record_amax) and B's type, which the C
// struct always names and GemmProblem only where it differs.
#include "lib/capi/problem.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
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
