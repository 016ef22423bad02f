// The C API's problem struct, every field filled from the input (sizes,
// strides and enumerations mostly near the legal ones, sometimes any bits,
// floats any bits), through the entry points that read a problem without
// compiling: ptxgenGemmProblemInit, ptxgenGemmGetSpans, ptxgenPlanGemm where
// the problem or the target is refused, and ptxgenGetScalingByName.
// Invariants: nothing crashes; every status is SUCCESS or INVALID_VALUE, a
// refusal with a message; a SUCCESS span is non-negative and holds its
// matrices (D's m x n per batch, C's only when beta != 0, the bias's only
// with one, the scales' as the scaling says); ptxgenPlanGemm refuses what
// ptxgenGemmGetSpans refuses, with the same rule, and a target outside the
// header's ranges; only the three canonical scaling names are read.

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptxgen.h"

namespace {

// A count, leading dimension or stride: mostly small (the legal ones are),
// sometimes any int64_t.
int64_t Count(FuzzedDataProvider& data) {
  return data.ConsumeBool() ? data.ConsumeIntegralInRange<int64_t>(-2, 1024)
                            : data.ConsumeIntegral<int64_t>();
}

// An enumeration's value: mostly one of its own, sometimes any int.
template <typename Enum>
Enum Value(FuzzedDataProvider& data, int count) {
  return static_cast<Enum>(data.ConsumeBool()
                               ? data.ConsumeIntegralInRange<int>(-1, count)
                               : data.ConsumeIntegral<int>());
}

float Scalar(FuzzedDataProvider& data) {
  switch (data.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return 0.0f;
    case 1:
      return 1.0f;
    case 2:
      return data.ConsumeFloatingPoint<float>();
    default: {
      const uint32_t bits = data.ConsumeIntegral<uint32_t>();
      float value = 0;
      static_assert(sizeof value == sizeof bits);
      std::memcpy(&value, &bits, sizeof value);
      return value;
    }
  }
}

ptxgenGemmProblem_t Problem(FuzzedDataProvider& data) {
  ptxgenGemmProblem_t p{};
  p.m = Count(data);
  p.n = Count(data);
  p.k = Count(data);
  p.input_type = Value<ptxgenDataType_t>(data, 9);
  p.b_input_type =
      data.ConsumeBool() ? p.input_type : Value<ptxgenDataType_t>(data, 9);
  p.output_type = Value<ptxgenDataType_t>(data, 9);
  p.a_major = Value<ptxgenMajor_t>(data, 2);
  p.b_major = Value<ptxgenMajor_t>(data, 2);
  for (int64_t* field : {&p.lda, &p.ldb, &p.ldc, &p.ldd}) {
    *field = data.ConsumeBool() ? 0 : Count(data);
  }
  p.batch = data.ConsumeBool() ? 1 : Count(data);
  for (int64_t* field :
       {&p.stride_a, &p.stride_b, &p.stride_c, &p.stride_d, &p.stride_bias}) {
    *field = data.ConsumeBool() ? 0 : Count(data);
  }
  p.alpha = Scalar(data);
  p.beta = Scalar(data);
  p.bias = Value<ptxgenBias_t>(data, 3);
  p.bias_type = Value<ptxgenDataType_t>(data, 9);
  p.activation = Value<ptxgenActivation_t>(data, 5);
  p.scaling = Value<ptxgenScaling_t>(data, 3);
  p.fast_accumulation = data.ConsumeIntegralInRange<int>(-1, 2);
  p.record_amax = data.ConsumeIntegralInRange<int>(-1, 2);
  p.grouping = Value<ptxgenGrouping_t>(data, 3);
  p.expected_m = data.ConsumeBool() ? 0 : Count(data);
  return p;
}

// A refusal is INVALID_VALUE with a message naming the entry point.
void CheckRefusal(ptxgenHandle_t handle, ptxgenStatus_t status,
                  absl::string_view function) {
  FUZZ_CHECK(status == PTXGEN_STATUS_INVALID_VALUE, function, " returned ",
             ptxgenGetStatusName(status));
  const std::string message = ptxgenGetLastErrorMessage(handle);
  FUZZ_CHECK(absl::StartsWith(message, absl::StrCat(function, ": ")) &&
                 message.size() > function.size() + 2,
             "message: ", message);
}

void CheckSpans(const ptxgenGemmProblem_t& p, const ptxgenGemmSpans_t& s) {
  for (const int64_t span :
       {s.a, s.b, s.c, s.d, s.bias, s.scale_a, s.scale_b}) {
    FUZZ_CHECK(span >= 0, "a negative span: ", span);
  }
  // The elements of `matrices` matrices of rows x columns, in 128 bits: B
  // has one per matrix of the batch (or group); a contiguous grouped
  // GEMM's A, C and D are one matrix of every group's rows.
  auto elements = [](int64_t matrices, int64_t rows, int64_t columns) {
    return static_cast<__int128>(matrices) * rows * columns;
  };
  const int64_t rows_matrices =
      p.grouping == PTXGEN_GROUPING_CONTIGUOUS ? 1 : p.batch;
  FUZZ_CHECK(s.a >= elements(rows_matrices, p.m, p.k) &&
                 s.b >= elements(p.batch, p.n, p.k) &&
                 s.d >= elements(rows_matrices, p.m, p.n),
             "spans ", s.a, " ", s.b, " ", s.d, " below the matrices of ",
             p.batch, " x ", p.m, "x", p.n, "x", p.k);
  FUZZ_CHECK((s.c == 0) == (p.beta == 0.0f), "C spans ", s.c, " with beta ",
             p.beta);
  if (p.beta != 0.0f) {
    FUZZ_CHECK(s.c >= elements(rows_matrices, p.m, p.n), "C spans ", s.c);
  }
  FUZZ_CHECK((s.bias == 0) == (p.bias == PTXGEN_BIAS_NONE), "bias spans ",
             s.bias);
  const bool tensor = p.scaling == PTXGEN_SCALING_TENSOR;
  const bool block = p.scaling == PTXGEN_SCALING_BLOCK;
  FUZZ_CHECK(tensor  ? s.scale_a == 1 && s.scale_b == 1
             : block ? s.scale_a > 0 && s.scale_b > 0
                     : s.scale_a == 0 && s.scale_b == 0,
             "scale spans ", s.scale_a, " ", s.scale_b);
}

// What ptxgenGemmGetSpans refused, ptxgenPlanGemm refuses by the same rule,
// before it compiles anything.
void CheckPlanRefuses(ptxgenHandle_t handle, const ptxgenGemmProblem_t& p,
                      const ptxgenTarget_t* target, const std::string& rule) {
  ptxgenPlan_t plan = nullptr;
  CheckRefusal(handle, ptxgenPlanGemm(handle, &p, target, &plan),
               "ptxgenPlanGemm");
  FUZZ_CHECK(plan == nullptr, "a refused plan was made");
  if (!rule.empty()) {
    const std::string message = ptxgenGetLastErrorMessage(handle);
    FUZZ_CHECK(message == "ptxgenPlanGemm: " + rule, message, " vs ", rule);
  }
}

void CheckInit(FuzzedDataProvider& data) {
  const int64_t m = Count(data);
  const int64_t n = Count(data);
  const int64_t k = Count(data);
  const ptxgenDataType_t type = Value<ptxgenDataType_t>(data, 9);
  ptxgenGemmProblem_t p{};
  const ptxgenStatus_t status = ptxgenGemmProblemInit(&p, m, n, k, type);
  constexpr int64_t kMax = ptxgen::gen::kMaxGemmDimension;
  const bool in_range = m >= 1 && n >= 1 && k >= 1 && m <= kMax && n <= kMax &&
                        k <= kMax && type >= PTXGEN_TYPE_F16 &&
                        type <= PTXGEN_TYPE_S32;
  FUZZ_CHECK(status == (in_range ? PTXGEN_STATUS_SUCCESS
                                 : PTXGEN_STATUS_INVALID_VALUE),
             "Init ", m, "x", n, "x", k, " type ", static_cast<int>(type), ": ",
             ptxgenGetStatusName(status));
  FUZZ_CHECK(in_range ? p.m == m && p.input_type == type : p.m == 0,
             "Init wrote ", p.m);
}

void CheckScalingName(FuzzedDataProvider& data) {
  // As C reads it: up to the first NUL.
  const std::string name = data.ConsumeRandomLengthString(16).c_str();
  ptxgenScaling_t scaling = static_cast<ptxgenScaling_t>(-1);
  const ptxgenStatus_t status = ptxgenGetScalingByName(name.c_str(), &scaling);
  const bool canonical = name == "none" || name == "tensor" || name == "block";
  FUZZ_CHECK(status == (canonical ? PTXGEN_STATUS_SUCCESS
                                  : PTXGEN_STATUS_INVALID_VALUE),
             "'", name, "': ", ptxgenGetStatusName(status));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  static ptxgenHandle_t handle = [] {
    ptxgenHandle_t created = nullptr;
    if (ptxgenCreate(&created) != PTXGEN_STATUS_SUCCESS) std::abort();
    return created;
  }();
  FuzzedDataProvider data(bytes, size);
  CheckInit(data);
  CheckScalingName(data);
  const ptxgenGemmProblem_t problem = Problem(data);
  ptxgenTarget_t target{data.ConsumeIntegral<int>(),
                        data.ConsumeIntegral<int>()};
  ptxgenGemmSpans_t spans{};
  const ptxgenStatus_t status = ptxgenGemmGetSpans(handle, &problem, &spans);
  if (status == PTXGEN_STATUS_SUCCESS) {
    CheckSpans(problem, spans);
    // Outside the header's ranges the target is refused; inside them the
    // plan would compile, which is not this target's to do.
    if (target.sm_count < 1 ||
        target.sm_count > ptxgen::runtime::kMaxTargetSms ||
        target.max_shared_bytes_per_block_optin <
            ptxgen::runtime::kMinTargetSharedBytes) {
      CheckPlanRefuses(handle, problem, &target, "");
    }
    return 0;
  }
  CheckRefusal(handle, status, "ptxgenGemmGetSpans");
  const std::string message = ptxgenGetLastErrorMessage(handle);
  CheckPlanRefuses(handle, problem, nullptr,
                   message.substr(std::string("ptxgenGemmGetSpans: ").size()));
  return 0;
}
