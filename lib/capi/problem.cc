#include "lib/capi/problem.h"

#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::capi {
namespace {

// In C++ the header gives each enumeration int as its underlying type, so
// reading any stored int is defined behaviour and the check below sees it.
static_assert(std::is_same_v<std::underlying_type_t<ptxgenDataType_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<ptxgenMajor_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<ptxgenBias_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<ptxgenActivation_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<ptxgenScaling_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<ptxgenGrouping_t>, int>);
static_assert(
    std::is_same_v<std::underlying_type_t<ptxgenAttentionLayout_t>, int>);

// One value of a C enumeration: its number, its name, its meaning inside.
template <typename C, typename Value>
struct EnumValue {
  C c;
  const char* name;
  Value value;
};

// The C enumeration's values, named as the header names them.
template <typename C, typename Value, size_t N>
struct Enumeration {
  const char* name;
  std::array<EnumValue<C, Value>, N> values;
};

constexpr Enumeration<ptxgenDataType_t, ptx::ScalarType, 9> kDataTypes{
    "ptxgenDataType_t",
    {{{PTXGEN_TYPE_F16, "PTXGEN_TYPE_F16", ptx::ScalarType::kF16},
      {PTXGEN_TYPE_BF16, "PTXGEN_TYPE_BF16", ptx::ScalarType::kBF16},
      {PTXGEN_TYPE_F32, "PTXGEN_TYPE_F32", ptx::ScalarType::kF32},
      {PTXGEN_TYPE_E4M3, "PTXGEN_TYPE_E4M3", ptx::ScalarType::kE4M3},
      {PTXGEN_TYPE_E5M2, "PTXGEN_TYPE_E5M2", ptx::ScalarType::kE5M2},
      {PTXGEN_TYPE_TF32, "PTXGEN_TYPE_TF32", ptx::ScalarType::kTF32},
      {PTXGEN_TYPE_S8, "PTXGEN_TYPE_S8", ptx::ScalarType::kS8},
      {PTXGEN_TYPE_U8, "PTXGEN_TYPE_U8", ptx::ScalarType::kU8},
      {PTXGEN_TYPE_S32, "PTXGEN_TYPE_S32", ptx::ScalarType::kS32}}}};

constexpr Enumeration<ptxgenMajor_t, ptx::MajorOrder, 2> kMajors{
    "ptxgenMajor_t",
    {{{PTXGEN_MAJOR_K, "PTXGEN_MAJOR_K", ptx::MajorOrder::kK},
      {PTXGEN_MAJOR_MN, "PTXGEN_MAJOR_MN", ptx::MajorOrder::kMN}}}};

constexpr Enumeration<ptxgenBias_t, gemm::BiasAlong, 3> kBiases{
    "ptxgenBias_t",
    {{{PTXGEN_BIAS_NONE, "PTXGEN_BIAS_NONE", gemm::BiasAlong::kNone},
      {PTXGEN_BIAS_M, "PTXGEN_BIAS_M", gemm::BiasAlong::kM},
      {PTXGEN_BIAS_N, "PTXGEN_BIAS_N", gemm::BiasAlong::kN}}}};

constexpr Enumeration<ptxgenActivation_t, gemm::Activation, 5> kActivations{
    "ptxgenActivation_t",
    {{{PTXGEN_ACTIVATION_NONE, "PTXGEN_ACTIVATION_NONE",
       gemm::Activation::kNone},
      {PTXGEN_ACTIVATION_RELU, "PTXGEN_ACTIVATION_RELU",
       gemm::Activation::kRelu},
      {PTXGEN_ACTIVATION_GELU, "PTXGEN_ACTIVATION_GELU",
       gemm::Activation::kGelu},
      {PTXGEN_ACTIVATION_GELU_TANH, "PTXGEN_ACTIVATION_GELU_TANH",
       gemm::Activation::kGeluTanh},
      {PTXGEN_ACTIVATION_SILU, "PTXGEN_ACTIVATION_SILU",
       gemm::Activation::kSilu}}}};

constexpr Enumeration<ptxgenScaling_t, gemm::GemmScaling, 3> kScalings{
    "ptxgenScaling_t",
    {{{PTXGEN_SCALING_NONE, "PTXGEN_SCALING_NONE", gemm::GemmScaling::kNone},
      {PTXGEN_SCALING_TENSOR, "PTXGEN_SCALING_TENSOR",
       gemm::GemmScaling::kTensor},
      {PTXGEN_SCALING_BLOCK, "PTXGEN_SCALING_BLOCK",
       gemm::GemmScaling::kBlock}}}};

constexpr Enumeration<ptxgenGrouping_t, gemm::Grouping, 3> kGroupings{
    "ptxgenGrouping_t",
    {{{PTXGEN_GROUPING_NONE, "PTXGEN_GROUPING_NONE", gemm::Grouping::kNone},
      {PTXGEN_GROUPING_CONTIGUOUS, "PTXGEN_GROUPING_CONTIGUOUS",
       gemm::Grouping::kContiguous},
      {PTXGEN_GROUPING_MASKED, "PTXGEN_GROUPING_MASKED",
       gemm::Grouping::kMasked}}}};

constexpr Enumeration<ptxgenAttentionLayout_t, attention::Layout, 2>
    kAttentionLayouts{
        "ptxgenAttentionLayout_t",
        {{{PTXGEN_ATTENTION_LAYOUT_BSHD, "PTXGEN_ATTENTION_LAYOUT_BSHD",
           attention::Layout::kBatchSeqHeadDim},
          {PTXGEN_ATTENTION_LAYOUT_BHSD, "PTXGEN_ATTENTION_LAYOUT_BHSD",
           attention::Layout::kBatchHeadSeqDim}}}};

// The structs whose fields the messages name.
constexpr char kGemmProblem[] = "ptxgenGemmProblem_t";
constexpr char kAttentionProblem[] = "ptxgenAttentionProblem_t";

// `field` of struct `owner`'s value, refused when it is none of the
// enumeration's: "ptxgenGemmProblem_t.activation: 42 is not a
// ptxgenActivation_t (PTXGEN_ACTIVATION_NONE=0, ...)".
template <typename C, typename Value, size_t N>
absl::Status Read(const char* owner, const char* field, C stored,
                  const Enumeration<C, Value, N>& enumeration, Value& value) {
  std::vector<std::string> legal;
  for (const EnumValue<C, Value>& candidate : enumeration.values) {
    if (candidate.c == stored) {
      value = candidate.value;
      return absl::OkStatus();
    }
    legal.push_back(
        absl::StrCat(candidate.name, "=", static_cast<int>(candidate.c)));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      owner, ".", field, ": ", static_cast<int>(stored), " is not a ",
      enumeration.name, " (", absl::StrJoin(legal, ", "), ")"));
}

// A C flag: 0 or 1, so that an uninitialized field is refused rather than
// read as true.
absl::Status ReadFlag(const char* owner, const char* field, int stored,
                      bool& value) {
  if (stored != 0 && stored != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(owner, ".", field, ": ", stored, " is not 0 or 1"));
  }
  value = stored == 1;
  return absl::OkStatus();
}

attention::Strides StridesOf(const ptxgenAttentionStrides_t& strides) {
  return {strides.batch, strides.seq, strides.head};
}

}  // namespace

absl::StatusOr<gemm::GemmProblem> ProblemOf(
    const ptxgenGemmProblem_t& problem) {
  gemm::GemmProblem p;
  p.m = problem.m;
  p.n = problem.n;
  p.k = problem.k;
  ptx::ScalarType output = ptx::ScalarType::kF16;
  ptx::ScalarType b_element = ptx::ScalarType::kF16;
  constexpr const char* kOwner = kGemmProblem;
  for (const absl::Status& read : {
           Read(kOwner, "input_type", problem.input_type, kDataTypes,
                p.element),
           Read(kOwner, "b_input_type", problem.b_input_type, kDataTypes,
                b_element),
           Read(kOwner, "output_type", problem.output_type, kDataTypes, output),
           Read(kOwner, "a_major", problem.a_major, kMajors, p.a_major),
           Read(kOwner, "b_major", problem.b_major, kMajors, p.b_major),
           Read(kOwner, "bias", problem.bias, kBiases, p.bias),
           Read(kOwner, "bias_type", problem.bias_type, kDataTypes,
                p.bias_type),
           Read(kOwner, "activation", problem.activation, kActivations,
                p.activation),
           Read(kOwner, "scaling", problem.scaling, kScalings, p.scaling),
           Read(kOwner, "grouping", problem.grouping, kGroupings, p.grouping),
           ReadFlag(kOwner, "fast_accumulation", problem.fast_accumulation,
                    p.fast_accumulation),
           ReadFlag(kOwner, "record_amax", problem.record_amax, p.record_amax),
       }) {
    if (!read.ok()) return read;
  }
  // The C struct always names B's type; GemmProblem names it only where it
  // differs, and refuses the mixes no kernel computes.
  if (b_element != p.element) p.b_element = b_element;
  p.output = output;
  p.lda = problem.lda;
  p.ldb = problem.ldb;
  p.ldc = problem.ldc;
  p.ldd = problem.ldd;
  p.batch = problem.batch;
  p.stride_a = problem.stride_a;
  p.stride_b = problem.stride_b;
  p.stride_c = problem.stride_c;
  p.stride_d = problem.stride_d;
  p.stride_bias = problem.stride_bias;
  p.alpha = problem.alpha;
  p.beta = problem.beta;
  p.expected_m = problem.expected_m;
  return p;
}

absl::Status CheckInit(int64_t m, int64_t n, int64_t k, ptxgenDataType_t type) {
  for (const int64_t size : {m, n, k}) {
    if (size < 1 || size > gen::kMaxGemmDimension) {
      return absl::InvalidArgumentError(
          absl::StrCat("ptxgenGemmProblemInit: m, n and k are each 1..",
                       gen::kMaxGemmDimension, ", not ", size));
    }
  }
  ptx::ScalarType element = ptx::ScalarType::kF16;
  return Read(kGemmProblem, "input_type", type, kDataTypes, element);
}

ptxgenDataType_t DefaultOutputType(ptxgenDataType_t input) {
  ptx::ScalarType element = ptx::ScalarType::kF16;
  if (!Read(kGemmProblem, "input_type", input, kDataTypes, element).ok()) {
    return input;
  }
  const ptx::ScalarType output = gen::DefaultOutput(element);
  for (const EnumValue<ptxgenDataType_t, ptx::ScalarType>& candidate :
       kDataTypes.values) {
    if (candidate.value == output) return candidate.c;
  }
  return input;
}

ptxgenScaling_t ScalingOf(gemm::GemmScaling scaling) {
  for (const EnumValue<ptxgenScaling_t, gemm::GemmScaling>& candidate :
       kScalings.values) {
    if (candidate.value == scaling) return candidate.c;
  }
  return PTXGEN_SCALING_NONE;
}

absl::StatusOr<attention::AttentionProblem> AttentionProblemOf(
    const ptxgenAttentionProblem_t& problem) {
  attention::AttentionProblem p;
  constexpr const char* kOwner = kAttentionProblem;
  for (const absl::Status& read : {
           Read(kOwner, "element_type", problem.element_type, kDataTypes,
                p.element),
           Read(kOwner, "layout", problem.layout, kAttentionLayouts, p.layout),
           ReadFlag(kOwner, "causal", problem.causal, p.causal),
           ReadFlag(kOwner, "variable_lengths", problem.variable_lengths,
                    p.variable_lengths),
       }) {
    if (!read.ok()) return read;
  }
  p.batch = problem.batch;
  p.heads_q = problem.heads_q;
  p.heads_kv = problem.heads_kv;
  p.seq_q = problem.seq_q;
  p.seq_k = problem.seq_k;
  p.head_dim = problem.head_dim;
  // 0 (and -0) is the C struct's default; every other value, NaN
  // included, is the problem's to accept or refuse.
  if (problem.scale != 0.0f) p.scale = problem.scale;
  p.q_stride = StridesOf(problem.q_stride);
  p.k_stride = StridesOf(problem.k_stride);
  p.v_stride = StridesOf(problem.v_stride);
  p.o_stride = StridesOf(problem.o_stride);
  p.total_q = problem.total_q;
  p.total_k = problem.total_k;
  return p;
}

absl::Status CheckAttentionInit(int64_t batch, int64_t heads_q,
                                int64_t heads_kv, int64_t seq_q, int64_t seq_k,
                                int64_t head_dim, ptxgenDataType_t type) {
  for (const int64_t size :
       {batch, heads_q, heads_kv, seq_q, seq_k, head_dim}) {
    if (size < 1 || size > attention::kMaxAttentionDimension) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ptxgenAttentionProblemInit: batch, heads_q, heads_kv, seq_q, seq_k "
          "and head_dim are each 1..",
          attention::kMaxAttentionDimension, ", not ", size));
    }
  }
  ptx::ScalarType element = ptx::ScalarType::kF16;
  return Read(kAttentionProblem, "element_type", type, kDataTypes, element);
}

gemm::GemmTarget TargetOf(const ptxgenTarget_t* target) {
  gemm::GemmTarget converted = gemm::GemmTarget::H200();
  if (target == nullptr) return converted;
  converted.sm_count = target->sm_count;
  converted.max_shared_bytes_per_block_optin =
      target->max_shared_bytes_per_block_optin;
  return converted;
}

}  // namespace ptxgen::capi
