// What each field of the C problem becomes in gemm::GemmProblem, including
// the ones no plan shows by itself (record_amax) and B's type, which the C
// struct always names and GemmProblem only where it differs.
#include "lib/capi/problem.h"

#include <cstdint>
#include <optional>
#include <string>

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
