#include "lib/testing/cublaslt_reference.h"

#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ptxgen::gemm {
namespace {

using ptx::IsFp8;
using ptx::ScalarType;

// Sizes and leading dimensions stay below 2^31, so that extents such as
// (m - 1) * ldd + n are computed in 64 bits without overflow.
constexpr int64_t kMaxExtent = (int64_t{1} << 31) - 1;
// Batch strides, likewise: stride * (2^31 - 1) fits in 64 bits.
constexpr int64_t kMaxStride = int64_t{1} << 32;
// The alignment the algorithm is chosen for and Run insists on.
constexpr uint64_t kAlignment = 16;

constexpr absl::string_view kPrefix = "cuBLASLt reference: ";

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(kPrefix, why));
}

absl::Status Unsupported(absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(kPrefix, why));
}

absl::string_view StatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "an unknown status";
}

// Internal, naming the call (and the attribute it set, if any).
absl::Status Check(cublasStatus_t status, absl::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(kPrefix, call, " returned ",
                                          static_cast<int>(status), " (",
                                          StatusName(status), ")"));
}

bool IsInput(ScalarType type) {
  switch (type) {
    case ScalarType::kF16:
    case ScalarType::kBF16:
    case ScalarType::kF32:
    case ScalarType::kTF32:
    case ScalarType::kE4M3:
    case ScalarType::kE5M2:
    case ScalarType::kS8:
      return true;
    default:
      return false;
  }
}

// What the inputs make of the call (see LtGemm's Types).
enum class Family { kFloat, kTf32, kFp8, kInt8 };

// The types of the call, once checked.
struct Types {
  Family family = Family::kFloat;
  ScalarType c = ScalarType::kF16;     // of cuBLASLt's C layout
  ScalarType bias = ScalarType::kF16;  // of the bias vector, if any
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType scale = CUDA_R_32F;
};

absl::string_view Name(ScalarType type) { return ptx::PtxName(type); }

// The inputs' family, refusing inputs cuBLASLt does not multiply (together).
absl::StatusOr<Family> InputFamily(const LtGemm& gemm) {
  for (const auto& [name, type] :
       {std::pair<const char*, ScalarType>{"a_type", gemm.a_type},
        {"b_type", gemm.b_type}}) {
    if (type == ScalarType::kU8) {
      return Unsupported(absl::StrCat(
          name, " u8 is not supported: cuBLASLt's integer GEMMs take s8"));
    }
    if (!IsInput(type)) {
      return Unsupported(absl::StrCat(
          name, " ", Name(type),
          " is not an input type (f16, bf16, f32, tf32, e4m3, e5m2, s8)"));
    }
  }
  if (IsFp8(gemm.a_type) && IsFp8(gemm.b_type)) {
    if (gemm.a_type == ScalarType::kE5M2 && gemm.b_type == ScalarType::kE5M2) {
      return Unsupported(
          "a_type and b_type are both e5m2: cuBLASLt's fp8 GEMMs take e4m3 "
          "x e4m3, e4m3 x e5m2 or e5m2 x e4m3");
    }
    return Family::kFp8;
  }
  if (gemm.a_type != gemm.b_type) {
    return Unsupported(absl::StrCat(
        "a_type ", Name(gemm.a_type), " and b_type ", Name(gemm.b_type),
        " differ: cuBLASLt mixes input types only for fp8 (e4m3 with e5m2)"));
  }
  switch (gemm.a_type) {
    case ScalarType::kTF32:
      return Family::kTf32;
    case ScalarType::kS8:
      return Family::kInt8;
    default:
      return Family::kFloat;
  }
}

// cuBLASLt's fp8 and int8 kernels read A' transposed and B' not ("TN"),
// i.e. ptxgen's A and B both K-major.
absl::Status CheckKMajor(const LtGemm& gemm, absl::string_view inputs,
                         absl::string_view kernels) {
  for (const auto& [name, k_major] :
       {std::pair<const char*, bool>{"A", gemm.a_k_major},
        {"B", gemm.b_k_major}}) {
    if (!k_major) {
      return Unsupported(absl::StrCat(name, " is MN-major: ", inputs,
                                      " inputs must be K-major (A [m,k], "
                                      "B [n,k]), as cuBLASLt's ",
                                      kernels,
                                      " kernels take only its \"TN\" layout"));
    }
  }
  return absl::OkStatus();
}

// C read in D's type (every family but an fp8 D).
absl::Status CheckCIsD(const LtGemm& gemm, absl::string_view compute) {
  if (gemm.beta == 0 || gemm.c_type == gemm.d_type) return absl::OkStatus();
  return Unsupported(absl::StrCat(
      "c_type ", Name(gemm.c_type), " differs from d_type ", Name(gemm.d_type),
      ": with ", compute, " compute cuBLASLt reads C in D's type"));
}

absl::Status CheckBiasType(const LtGemm& gemm, ScalarType expected,
                           absl::string_view why) {
  if (gemm.bias == LtGemm::Bias::kNone || gemm.bias_type == expected) {
    return absl::OkStatus();
  }
  if (expected == gemm.d_type) {
    return Unsupported(absl::StrCat("bias_type ", Name(gemm.bias_type),
                                    " differs from d_type ", Name(gemm.d_type),
                                    ": cuBLASLt's bias has D's type"));
  }
  return Unsupported(absl::StrCat("bias_type ", Name(gemm.bias_type),
                                  " is not ", Name(expected), ": ", why));
}

// The scales and fast accumulation are fp8's.
absl::Status CheckNoFp8Options(const LtGemm& gemm) {
  for (const auto& [name, set] : {
           std::pair<const char*, bool>{"scale_a", gemm.scale_a},
           {"scale_b", gemm.scale_b},
           {"scale_d", gemm.scale_d},
           {"amax_d", gemm.amax_d},
           {"fast_accumulation", gemm.fast_accumulation},
       }) {
    if (set) {
      return Unsupported(absl::StrCat(
          name, " is for fp8 inputs (e4m3, e5m2), not ", Name(gemm.a_type)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Types> FloatTypes(const LtGemm& gemm, Family family) {
  Types types;
  types.family = family;
  if (family == Family::kTf32) {
    if (gemm.d_type != ScalarType::kF32) {
      return Unsupported(absl::StrCat(
          "tf32 inputs give f32 outputs, not d_type ", Name(gemm.d_type)));
    }
    types.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (gemm.d_type != gemm.a_type && gemm.d_type != ScalarType::kF32) {
    return Unsupported(
        absl::StrCat(Name(gemm.a_type), " inputs give ", Name(gemm.a_type),
                     " or f32 outputs, not d_type ", Name(gemm.d_type)));
  }
  for (const absl::Status& status :
       {CheckCIsD(gemm, "f32"), CheckBiasType(gemm, gemm.d_type, ""),
        CheckNoFp8Options(gemm)}) {
    if (!status.ok()) return status;
  }
  types.c = types.bias = gemm.d_type;
  return types;
}

absl::StatusOr<Types> Fp8Types(const LtGemm& gemm) {
  if (absl::Status major = CheckKMajor(gemm, "fp8", "fp8"); !major.ok()) {
    return major;
  }
  const bool mixed = gemm.a_type != gemm.b_type;
  const std::string inputs =
      absl::StrCat(Name(gemm.a_type), " x ", Name(gemm.b_type), " inputs");
  Types types;
  types.family = Family::kFp8;
  switch (gemm.d_type) {
    case ScalarType::kBF16:
    case ScalarType::kF16:
      types.c = types.bias = gemm.d_type;
      break;
    case ScalarType::kF32:
      types.c = ScalarType::kF32;
      types.bias = ScalarType::kBF16;
      break;
    case ScalarType::kE5M2:
      if (!mixed) {
        return Unsupported(absl::StrCat(
            inputs,
            " give bf16, f16, f32 or e4m3 outputs, not d_type e5m2 (cuBLASLt "
            "writes e5m2 only from e4m3 x e5m2 or e5m2 x e4m3)"));
      }
      [[fallthrough]];
    case ScalarType::kE4M3:
      if (gemm.c_type != ScalarType::kBF16 && gemm.c_type != ScalarType::kF16) {
        return Unsupported(absl::StrCat(
            "c_type ", Name(gemm.c_type),
            " is not bf16 or f16: cuBLASLt's C for an fp8 D is bf16 or f16 "
            "(its layout has that type even when beta == 0)"));
      }
      types.c = types.bias = gemm.c_type;
      break;
    default:
      return Unsupported(absl::StrCat(
          inputs, " give ",
          mixed ? "bf16, f16, f32, e4m3 or e5m2" : "bf16, f16, f32 or e4m3",
          " outputs, not d_type ", Name(gemm.d_type)));
  }
  if (!IsFp8(gemm.d_type)) {
    if (absl::Status c = CheckCIsD(gemm, "f32"); !c.ok()) return c;
    if (gemm.scale_d) {
      return Unsupported(
          absl::StrCat("scale_d is for an fp8 D (e4m3, e5m2), not d_type ",
                       Name(gemm.d_type)));
    }
  }
  if (absl::Status bias = CheckBiasType(
          gemm, types.bias,
          IsFp8(gemm.d_type)
              ? "with an fp8 D cuBLASLt's bias has C's type"
              : "with fp8 inputs and an f32 D cuBLASLt's bias is bf16");
      !bias.ok()) {
    return bias;
  }
  return types;
}

absl::StatusOr<Types> Int8Types(const LtGemm& gemm) {
  if (absl::Status major = CheckKMajor(gemm, "s8", "int8"); !major.ok()) {
    return major;
  }
  Types types;
  types.family = Family::kInt8;
  types.compute = CUBLAS_COMPUTE_32I;
  if (gemm.d_type == ScalarType::kS32) {
    types.scale = CUDA_R_32I;
  } else if (gemm.d_type != ScalarType::kS8) {
    return Unsupported(absl::StrCat(
        "s8 inputs give s32 or s8 outputs, not d_type ", Name(gemm.d_type)));
  }
  for (const absl::Status& status :
       {CheckCIsD(gemm, "s32"), CheckNoFp8Options(gemm)}) {
    if (!status.ok()) return status;
  }
  types.c = types.bias = gemm.d_type;
  return types;
}

// Input and output types: known, supported, and supported together.
absl::StatusOr<Types> CheckTypes(const LtGemm& gemm) {
  const std::pair<const char*, ScalarType> named[] = {
      {"a_type", gemm.a_type},
      {"b_type", gemm.b_type},
      {"c_type", gemm.c_type},
      {"d_type", gemm.d_type},
      {"bias_type", gemm.bias_type}};
  for (const auto& [name, type] : named) {
    if (!ptx::IsKnownScalarType(type)) {
      return Invalid(absl::StrCat(name, " ", static_cast<int>(type),
                                  " is not a ScalarType"));
    }
  }
  absl::StatusOr<Family> family = InputFamily(gemm);
  if (!family.ok()) return family.status();
  switch (*family) {
    case Family::kFloat:
    case Family::kTf32:
      return FloatTypes(gemm, *family);
    case Family::kFp8:
      return Fp8Types(gemm);
    case Family::kInt8:
      return Int8Types(gemm);
  }
  return Invalid("unknown family");
}

// alpha or beta as the int32 cuBLASLt takes with scale type CUDA_R_32I.
absl::StatusOr<int32_t> Int32Scalar(const char* name, float value) {
  // [-2^31, 2^31), and integral (a NaN is neither).
  if (value >= -2147483648.0f && value < 2147483648.0f &&
      std::nearbyint(value) == value) {
    return static_cast<int32_t>(value);
  }
  return Invalid(absl::StrCat(name, "=", value,
                              " is not an int32: with an s32 D cuBLASLt's "
                              "alpha and beta are int32"));
}

absl::Status CheckSize(const char* name, int64_t value) {
  if (value >= 1 && value <= kMaxExtent) return absl::OkStatus();
  return Invalid(absl::StrCat(name, "=", value, " is not in 1..", kMaxExtent));
}

// A leading dimension of rows holding `row` elements.
absl::Status CheckLd(const char* name, int64_t ld, int64_t row,
                     absl::string_view what) {
  if (ld >= row && ld <= kMaxExtent) return absl::OkStatus();
  return Invalid(absl::StrCat(name, "=", ld, " is not in ", row, "..",
                              kMaxExtent, " (", what, ")"));
}

absl::Status CheckStride(const char* name, int64_t stride, int64_t least) {
  if (stride >= least && stride <= kMaxStride) return absl::OkStatus();
  return Invalid(
      absl::StrCat(name, "=", stride, " is not in ", least, "..", kMaxStride));
}

absl::Status CheckShape(const LtGemm& gemm) {
  for (const absl::Status& status :
       {CheckSize("m", gemm.m), CheckSize("n", gemm.n),
        CheckSize("k", gemm.k)}) {
    if (!status.ok()) return status;
  }
  if (gemm.batch < 1) {
    return Invalid(absl::StrCat("batch=", gemm.batch, " is not at least 1"));
  }
  const bool reads_c = gemm.beta != 0;
  for (const absl::Status& status : {
           CheckLd(
               "lda", gemm.lda, gemm.a_k_major ? gemm.k : gemm.m,
               gemm.a_k_major ? "A is [m,k], K-major" : "A is [k,m], MN-major"),
           CheckLd(
               "ldb", gemm.ldb, gemm.b_k_major ? gemm.k : gemm.n,
               gemm.b_k_major ? "B is [n,k], K-major" : "B is [k,n], MN-major"),
           reads_c ? CheckLd("ldc", gemm.ldc, gemm.n, "C is [m,n]")
                   : absl::OkStatus(),
           CheckLd("ldd", gemm.ldd, gemm.n, "D is [m,n]"),
       }) {
    if (!status.ok()) return status;
  }
  if (gemm.batch == 1) return absl::OkStatus();
  const int64_t d_extent = (gemm.m - 1) * gemm.ldd + gemm.n;
  for (const absl::Status& status : {
           CheckStride("stride_a", gemm.stride_a, 0),
           CheckStride("stride_b", gemm.stride_b, 0),
           reads_c ? CheckStride("stride_c", gemm.stride_c, 0)
                   : absl::OkStatus(),
           CheckStride("stride_bias", gemm.stride_bias, 0),
       }) {
    if (!status.ok()) return status;
  }
  if (gemm.stride_d < d_extent || gemm.stride_d > kMaxStride) {
    return Invalid(absl::StrCat(
        "stride_d=", gemm.stride_d, " is not in ", d_extent, "..", kMaxStride,
        " (batches of D would overlap: one spans (m-1)*ldd+n = ", d_extent,
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<cublasLtEpilogue_t> Epilogue(const LtGemm& gemm) {
  bool bias = false;
  switch (gemm.bias) {
    case LtGemm::Bias::kNone:
      break;
    case LtGemm::Bias::kAlongN:
      bias = true;
      break;
    case LtGemm::Bias::kAlongM:
      return Unsupported(
          "a bias along m (one value per row of D) has no cuBLASLt epilogue: "
          "cuBLASLt computes D^T column-major, and its bias (one value per "
          "row of D^T) runs along n; use Bias::kAlongN or add it separately");
    default:
      return Invalid(absl::StrCat("bias ", static_cast<int>(gemm.bias),
                                  " is not an LtGemm::Bias"));
  }
  switch (gemm.activation) {
    case LtGemm::Activation::kNone:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case LtGemm::Activation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case LtGemm::Activation::kGelu:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  return Invalid(absl::StrCat("activation ", static_cast<int>(gemm.activation),
                              " is not an LtGemm::Activation"));
}

// A row-major matrix of `rows` rows of `row` elements with pitch `ld` is a
// column-major `row` x `rows` matrix with that ld.
CublasLtLayout RowMajor(cudaDataType type, int64_t rows, int64_t row,
                        int64_t ld, int batch, int64_t stride) {
  CublasLtLayout layout;
  layout.type = type;
  layout.rows = static_cast<uint64_t>(row);
  layout.cols = static_cast<uint64_t>(rows);
  layout.ld = ld;
  layout.batch_count = batch;
  layout.batch_stride = batch > 1 ? stride : 0;
  return layout;
}

const char* Major(bool k_major) { return k_major ? "K" : "MN"; }

const char* BiasName(LtGemm::Bias bias) {
  switch (bias) {
    case LtGemm::Bias::kNone:
      return "none";
    case LtGemm::Bias::kAlongM:
      return "m";
    case LtGemm::Bias::kAlongN:
      return "n";
  }
  return "?";
}

const char* ActivationName(LtGemm::Activation activation) {
  switch (activation) {
    case LtGemm::Activation::kNone:
      return "";
    case LtGemm::Activation::kRelu:
      return " relu";
    case LtGemm::Activation::kGelu:
      return " gelu";
  }
  return " ?";
}

}  // namespace

LtGemm PackedLtGemm(int64_t m, int64_t n, int64_t k, ScalarType input,
                    ScalarType output, bool a_k_major, bool b_k_major,
                    int batch) {
  LtGemm gemm;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.a_type = gemm.b_type = input;
  gemm.c_type = gemm.d_type = gemm.bias_type = output;
  if (IsFp8(output)) {
    gemm.c_type = gemm.bias_type = ScalarType::kBF16;
  } else if (IsFp8(input) && output == ScalarType::kF32) {
    gemm.bias_type = ScalarType::kBF16;
  }
  gemm.a_k_major = a_k_major;
  gemm.b_k_major = b_k_major;
  gemm.lda = a_k_major ? k : m;
  gemm.ldb = b_k_major ? k : n;
  gemm.ldc = gemm.ldd = n;
  gemm.batch = batch;
  gemm.stride_a = m * k;
  gemm.stride_b = n * k;
  gemm.stride_c = gemm.stride_d = m * n;
  gemm.stride_bias = n;
  return gemm;
}

std::string DescribeLtGemm(const LtGemm& gemm) {
  std::string text = absl::StrCat(
      gemm.m, "x", gemm.n, "x", gemm.k, " ", ptx::PtxName(gemm.a_type),
      gemm.a_type == gemm.b_type ? ""
                                 : absl::StrCat("*", ptx::PtxName(gemm.b_type)),
      "->", ptx::PtxName(gemm.d_type));
  // An fp8 D's C has a type of its own, read or not.
  if (IsFp8(gemm.d_type) && gemm.c_type != gemm.d_type) {
    absl::StrAppend(&text, "(C ", ptx::PtxName(gemm.c_type), ")");
  }
  absl::StrAppend(&text, " A:", Major(gemm.a_k_major),
                  " B:", Major(gemm.b_k_major), " ld=", gemm.lda, ",", gemm.ldb,
                  ",", gemm.ldc, ",", gemm.ldd);
  if (gemm.batch != 1) absl::StrAppend(&text, " batch=", gemm.batch);
  absl::StrAppend(&text, " alpha=", gemm.alpha, " beta=", gemm.beta);
  if (gemm.bias != LtGemm::Bias::kNone) {
    absl::StrAppend(&text, " bias=", BiasName(gemm.bias));
  }
  absl::StrAppend(&text, ActivationName(gemm.activation));
  std::string scales;
  for (const auto& [name, set] :
       {std::pair<const char*, bool>{"a", gemm.scale_a},
        {"b", gemm.scale_b},
        {"d", gemm.scale_d}}) {
    if (set) absl::StrAppend(&scales, scales.empty() ? "" : ",", name);
  }
  if (!scales.empty()) absl::StrAppend(&text, " scales=", scales);
  if (gemm.amax_d) absl::StrAppend(&text, " amax_d");
  if (gemm.fast_accumulation) absl::StrAppend(&text, " fast_accum");
  return text;
}

absl::StatusOr<cudaDataType> CudaDataType(ScalarType type) {
  switch (type) {
    case ScalarType::kF16:
      return CUDA_R_16F;
    case ScalarType::kBF16:
      return CUDA_R_16BF;
    case ScalarType::kTF32:  // f32 in memory; the compute type makes it tf32
    case ScalarType::kF32:
      return CUDA_R_32F;
    case ScalarType::kE4M3:
      return CUDA_R_8F_E4M3;
    case ScalarType::kE5M2:
      return CUDA_R_8F_E5M2;
    case ScalarType::kS8:
      return CUDA_R_8I;
    case ScalarType::kU8:
      return CUDA_R_8U;
    case ScalarType::kS32:
      return CUDA_R_32I;
  }
  return Invalid(
      absl::StrCat("type ", static_cast<int>(type), " is not a ScalarType"));
}

absl::StatusOr<CublasLtCall> ToCublasLt(const LtGemm& gemm) {
  absl::StatusOr<Types> types = CheckTypes(gemm);
  if (!types.ok()) return types.status();
  if (absl::Status shape = CheckShape(gemm); !shape.ok()) return shape;
  absl::StatusOr<cublasLtEpilogue_t> epilogue = Epilogue(gemm);
  if (!epilogue.ok()) return epilogue.status();
  if (types->family == Family::kInt8 &&
      *epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    return Unsupported(
        "s8 inputs take no bias and no activation: cuBLASLt's int8 kernels "
        "have only the default epilogue");
  }
  CublasLtCall call;
  if (types->scale == CUDA_R_32I) {
    absl::StatusOr<int32_t> alpha = Int32Scalar("alpha", gemm.alpha);
    if (!alpha.ok()) return alpha.status();
    absl::StatusOr<int32_t> beta = Int32Scalar("beta", gemm.beta);
    if (!beta.ok()) return beta.status();
    call.alpha_int = *alpha;
    call.beta_int = *beta;
  }
  // CheckTypes admitted only known types, which CudaDataType maps.
  const cudaDataType a_type = *CudaDataType(gemm.a_type);
  const cudaDataType b_type = *CudaDataType(gemm.b_type);
  const cudaDataType c_type = *CudaDataType(types->c);
  const cudaDataType d_type = *CudaDataType(gemm.d_type);

  call.m = static_cast<uint64_t>(gemm.n);
  call.n = static_cast<uint64_t>(gemm.m);
  call.k = static_cast<uint64_t>(gemm.k);
  // A' is ptxgen's B: [n,k] K-major is col-major k x n, transposed to n x k;
  // [k,n] MN-major is col-major n x k as it is.
  call.transa = gemm.b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  call.a = RowMajor(b_type, gemm.b_k_major ? gemm.n : gemm.k,
                    gemm.b_k_major ? gemm.k : gemm.n, gemm.ldb, gemm.batch,
                    gemm.stride_b);
  // B' is ptxgen's A: [m,k] K-major is col-major k x m, which is op(B') as
  // it is; [k,m] MN-major is col-major m x k, transposed to k x m.
  call.transb = gemm.a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  call.b = RowMajor(a_type, gemm.a_k_major ? gemm.m : gemm.k,
                    gemm.a_k_major ? gemm.k : gemm.m, gemm.lda, gemm.batch,
                    gemm.stride_a);
  call.d =
      RowMajor(d_type, gemm.m, gemm.n, gemm.ldd, gemm.batch, gemm.stride_d);
  call.reads_c = gemm.beta != 0;
  call.c = call.reads_c ? RowMajor(c_type, gemm.m, gemm.n, gemm.ldc, gemm.batch,
                                   gemm.stride_c)
                        : call.d;
  call.c.type = c_type;  // an fp8 D's C has its own type even when unread
  call.compute_type = types->compute;
  call.scale_type = types->scale;
  call.alpha = gemm.alpha;
  call.beta = gemm.beta;
  call.epilogue = *epilogue;
  call.uses_bias = gemm.bias == LtGemm::Bias::kAlongN;
  call.bias_type = *CudaDataType(types->bias);
  call.bias_batch_stride =
      call.uses_bias && gemm.batch > 1 ? gemm.stride_bias : 0;
  // cuBLASLt's A' is ptxgen's B, and B' ptxgen's A.
  call.a_scale = gemm.scale_b;
  call.b_scale = gemm.scale_a;
  call.d_scale = gemm.scale_d;
  call.amax_d = gemm.amax_d;
  call.sets_fast_accum = types->family == Family::kFp8;
  call.fast_accum = gemm.fast_accumulation;
  return call;
}

// One of the descriptor's scale pointers: whether the call has it, where it
// goes, and which of Run's LtScales it is.
struct ScalePointer {
  bool used;
  cublasLtMatmulDescAttributes_t attribute;
  const char* attribute_name;
  const char* name;   // in LtScales
  const char* field;  // in LtGemm
  CUdeviceptr LtScales::*pointer;
};

std::array<ScalePointer, 4> ScalePointers(const CublasLtCall& call) {
  // cuBLASLt's A' is ptxgen's B, and B' ptxgen's A.
  return {{
      {call.b_scale, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, "B_SCALE_POINTER",
       "a", "scale_a", &LtScales::a},
      {call.a_scale, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, "A_SCALE_POINTER",
       "b", "scale_b", &LtScales::b},
      {call.d_scale, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, "D_SCALE_POINTER",
       "d", "scale_d", &LtScales::d},
      {call.amax_d, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, "AMAX_D_POINTER",
       "amax_d", "amax_d", &LtScales::amax_d},
  }};
}

// What a PreparedLtGemm owns; destroying it destroys the descriptors.
struct PreparedLtGemm::State {
  CublasLtLibrary lt;
  LtGemm gemm;
  CublasLtCall call;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  size_t workspace_bytes = 0;
  // Run sets the bias and scale pointers in `desc` just before its call.
  mutable absl::Mutex mutex;

  ~State() {
    for (cublasLtMatrixLayout_t layout : {a, b, c, d}) {
      if (layout != nullptr) lt.matrix_layout_destroy(layout);
    }
    if (desc != nullptr) lt.matmul_desc_destroy(desc);
  }

  template <typename Value>
  absl::Status SetDesc(cublasLtMatmulDescAttributes_t attribute,
                       const char* name, const Value& value) const {
    return Check(
        lt.matmul_desc_set_attribute(desc, attribute, &value, sizeof(value)),
        absl::StrCat("cublasLtMatmulDescSetAttribute(", name, ")"));
  }

  absl::Status MakeLayout(const CublasLtLayout& layout, const char* which,
                          cublasLtMatrixLayout_t& made) {
    const std::string call_name =
        absl::StrCat("cublasLtMatrixLayoutCreate(", which, ")");
    if (absl::Status created =
            Check(lt.matrix_layout_create(&made, layout.type, layout.rows,
                                          layout.cols, layout.ld),
                  call_name);
        !created.ok()) {
      made = nullptr;
      return created;
    }
    if (layout.batch_count == 1) return absl::OkStatus();
    for (const auto& [attribute, name, value, size] : {
             std::tuple<cublasLtMatrixLayoutAttribute_t, const char*,
                        const void*, size_t>{CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                             "BATCH_COUNT", &layout.batch_count,
                                             sizeof(layout.batch_count)},
             {CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
              "STRIDED_BATCH_OFFSET", &layout.batch_stride,
              sizeof(layout.batch_stride)},
         }) {
      if (absl::Status set = Check(
              lt.matrix_layout_set_attribute(made, attribute, value, size),
              absl::StrCat("cublasLtMatrixLayoutSetAttribute(", which, ", ",
                           name, ")"));
          !set.ok()) {
        return set;
      }
    }
    return absl::OkStatus();
  }

  absl::Status MakeDescriptors() {
    if (absl::Status created = Check(
            lt.matmul_desc_create(&desc, call.compute_type, call.scale_type),
            "cublasLtMatmulDescCreate");
        !created.ok()) {
      desc = nullptr;
      return created;
    }
    const int32_t transa = call.transa, transb = call.transb;
    const uint32_t epilogue = call.epilogue;
    for (const absl::Status& set : {
             SetDesc(CUBLASLT_MATMUL_DESC_TRANSA, "TRANSA", transa),
             SetDesc(CUBLASLT_MATMUL_DESC_TRANSB, "TRANSB", transb),
             SetDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, "EPILOGUE", epilogue),
         }) {
      if (!set.ok()) return set;
    }
    if (call.uses_bias) {
      const int32_t bias_type = call.bias_type;
      // The heuristic reads the bias pointer's alignment, not its data: a
      // stand-in aligned to exactly what Run accepts.
      const void* placeholder = reinterpret_cast<const void*>(kAlignment);
      for (const absl::Status& set : {
               SetDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, "BIAS_DATA_TYPE",
                       bias_type),
               SetDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, "BIAS_POINTER",
                       placeholder),
               call.bias_batch_stride != 0
                   ? SetDesc(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                             "BIAS_BATCH_STRIDE", call.bias_batch_stride)
                   : absl::OkStatus(),
           }) {
        if (!set.ok()) return set;
      }
    }
    if (call.sets_fast_accum) {
      const int8_t fast_accum = call.fast_accum ? 1 : 0;
      if (absl::Status set = SetDesc(CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                     "FAST_ACCUM", fast_accum);
          !set.ok()) {
        return set;
      }
    }
    // The scales the heuristic is to know of; like the bias, stand-ins,
    // which Run replaces with its pointers.
    for (const ScalePointer& scale : ScalePointers(call)) {
      if (!scale.used) continue;
      const void* placeholder = reinterpret_cast<const void*>(kAlignment);
      if (absl::Status set =
              SetDesc(scale.attribute, scale.attribute_name, placeholder);
          !set.ok()) {
        return set;
      }
    }
    for (const absl::Status& made :
         {MakeLayout(call.a, "A", a), MakeLayout(call.b, "B", b),
          MakeLayout(call.c, "C", c), MakeLayout(call.d, "D", d)}) {
      if (!made.ok()) return made;
    }
    return absl::OkStatus();
  }

  absl::Status ChooseAlgorithm(size_t max_workspace_bytes) {
    cublasLtMatmulPreference_t preference = nullptr;
    if (absl::Status created = Check(lt.preference_create(&preference),
                                     "cublasLtMatmulPreferenceCreate");
        !created.ok()) {
      return created;
    }
    absl::Status chosen = ChooseWith(preference, max_workspace_bytes);
    lt.preference_destroy(preference);
    return chosen;
  }

  absl::Status ChooseWith(cublasLtMatmulPreference_t preference,
                          size_t max_workspace_bytes) {
    const uint64_t workspace = max_workspace_bytes;
    const uint32_t alignment = kAlignment;
    for (const auto& [attribute, name, value, size] : {
             std::tuple<cublasLtMatmulPreferenceAttributes_t, const char*,
                        const void*, size_t>{
                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                 "MAX_WORKSPACE_BYTES", &workspace, sizeof(workspace)},
             {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
              "MIN_ALIGNMENT_A_BYTES", &alignment, sizeof(alignment)},
             {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
              "MIN_ALIGNMENT_B_BYTES", &alignment, sizeof(alignment)},
             {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
              "MIN_ALIGNMENT_C_BYTES", &alignment, sizeof(alignment)},
             {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
              "MIN_ALIGNMENT_D_BYTES", &alignment, sizeof(alignment)},
         }) {
      if (absl::Status set = Check(
              lt.preference_set_attribute(preference, attribute, value, size),
              absl::StrCat("cublasLtMatmulPreferenceSetAttribute(", name, ")"));
          !set.ok()) {
        return set;
      }
    }
    cublasLtMatmulHeuristicResult_t result = {};
    int found = 0;
    const cublasStatus_t status = lt.algo_get_heuristic(
        lt.handle, desc, a, b, c, d, preference, 1, &result, &found);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
        (status == CUBLAS_STATUS_SUCCESS &&
         (found < 1 || result.state != CUBLAS_STATUS_SUCCESS))) {
      return Unsupported(absl::StrCat(
          "cuBLASLt has no algorithm for ", DescribeLtGemm(gemm),
          " within a workspace of ", max_workspace_bytes,
          " bytes (cublasLtMatmulAlgoGetHeuristic returned ", found,
          " algorithms, status ", static_cast<int>(status), ")"));
    }
    if (absl::Status checked = Check(status, "cublasLtMatmulAlgoGetHeuristic");
        !checked.ok()) {
      return checked;
    }
    algo = result.algo;
    workspace_bytes = result.workspaceSize;
    return absl::OkStatus();
  }
};

absl::StatusOr<PreparedLtGemm> PreparedLtGemm::Create(
    const LtGemm& gemm, size_t max_workspace_bytes) {
  // A problem is refused as such, whether or not cuBLASLt is there.
  if (absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm); !call.ok()) {
    return call.status();
  }
  // Loaded on first use (thread-safe) and kept for the process, handle too.
  static const absl::StatusOr<CublasLtLibrary>* const library =
      new absl::StatusOr<CublasLtLibrary>(LoadCublasLt(kCublasLtLibrary));
  if (!library->ok()) return library->status();
  return Create(**library, gemm, max_workspace_bytes);
}

absl::StatusOr<PreparedLtGemm> PreparedLtGemm::Create(
    const CublasLtLibrary& library, const LtGemm& gemm,
    size_t max_workspace_bytes) {
  absl::StatusOr<CublasLtCall> call = ToCublasLt(gemm);
  if (!call.ok()) return call.status();
  auto state = std::make_unique<State>();
  state->lt = library;
  state->gemm = gemm;
  state->call = *call;
  // On failure `state` goes, and with it whatever was created.
  if (absl::Status made = state->MakeDescriptors(); !made.ok()) return made;
  if (absl::Status chosen = state->ChooseAlgorithm(max_workspace_bytes);
      !chosen.ok()) {
    return chosen;
  }
  return PreparedLtGemm(std::move(state));
}

PreparedLtGemm::PreparedLtGemm(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
PreparedLtGemm::PreparedLtGemm(PreparedLtGemm&&) noexcept = default;
PreparedLtGemm& PreparedLtGemm::operator=(PreparedLtGemm&&) noexcept = default;
PreparedLtGemm::~PreparedLtGemm() = default;

const LtGemm& PreparedLtGemm::gemm() const { return state_->gemm; }
const CublasLtCall& PreparedLtGemm::call() const { return state_->call; }
size_t PreparedLtGemm::workspace_bytes() const {
  return state_->workspace_bytes;
}

absl::Status PreparedLtGemm::Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                                 CUdeviceptr d, CUdeviceptr bias,
                                 CUstream stream, void* workspace,
                                 size_t workspace_bytes) const {
  return Run(a, b, c, d, bias, LtScales{}, stream, workspace, workspace_bytes);
}

absl::Status PreparedLtGemm::Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                                 CUdeviceptr d, CUdeviceptr bias,
                                 const LtScales& scales, CUstream stream,
                                 void* workspace,
                                 size_t workspace_bytes) const {
  const State& state = *state_;
  const CublasLtCall& call = state.call;
  if (!call.reads_c) c = d;  // not read; cuBLASLt still wants a C
  // Except beside an fp8 D, whose C layout has another type: there an
  // unread C is null, as in cuBLASLt's own fp8 sample (D's pointer under
  // C's layout is refused as an invalid value).
  const bool unread_fp8_c = !call.reads_c && (call.d.type == CUDA_R_8F_E4M3 ||
                                              call.d.type == CUDA_R_8F_E5M2);
  const std::pair<const char*, CUdeviceptr> pointers[] = {
      {"a", a}, {"b", b}, {"c", c}, {"d", d}, {"bias", bias}};
  // The bias, last, only when the epilogue reads it.
  for (int i = 0; i < (call.uses_bias ? 5 : 4); ++i) {
    const auto& [name, pointer] = pointers[i];
    if (pointer == 0) return Invalid(absl::StrCat(name, " is null"));
    if (pointer % kAlignment != 0) {
      return Invalid(absl::StrCat(name, "=0x", absl::Hex(pointer),
                                  " is not aligned to ", kAlignment, " bytes"));
    }
  }
  const std::array<ScalePointer, 4> scale_pointers = ScalePointers(call);
  for (const ScalePointer& scale : scale_pointers) {
    const CUdeviceptr pointer = scales.*scale.pointer;
    if (!scale.used) {
      if (pointer == 0) continue;
      return Invalid(
          absl::StrCat("scales.", scale.name, "=0x", absl::Hex(pointer),
                       " is given but the LtGemm has no ", scale.field,
                       " (its algorithm was chosen without)"));
    }
    if (pointer == 0) {
      return Invalid(absl::StrCat("scales.", scale.name,
                                  " is null but the LtGemm has ", scale.field));
    }
    if (pointer % sizeof(float) != 0) {
      return Invalid(absl::StrCat("scales.", scale.name, "=0x",
                                  absl::Hex(pointer), " is not aligned to ",
                                  sizeof(float), " bytes"));
    }
  }
  if (call.reads_c && c == d &&
      (call.c.type != call.d.type || call.c.ld != call.d.ld ||
       call.c.batch_stride != call.d.batch_stride)) {
    if (call.c.type != call.d.type) {
      return Invalid(absl::StrCat(
          "C and D are one buffer but c_type ", Name(state.gemm.c_type),
          " differs from d_type ", Name(state.gemm.d_type),
          ": cuBLASLt computes in place only with one layout"));
    }
    return Invalid(absl::StrCat(
        "C and D are one buffer but ldc=", call.c.ld,
        ", stride_c=", call.c.batch_stride, " differ from ldd=", call.d.ld,
        ", stride_d=", call.d.batch_stride,
        ": cuBLASLt computes in place only with one layout"));
  }
  if (workspace_bytes < state.workspace_bytes ||
      (state.workspace_bytes > 0 && workspace == nullptr)) {
    return Invalid(absl::StrCat("the algorithm needs a workspace of ",
                                state.workspace_bytes, " bytes, given ",
                                workspace == nullptr ? 0 : workspace_bytes));
  }
  absl::MutexLock lock(&state.mutex);
  if (call.uses_bias) {
    const void* pointer = reinterpret_cast<const void*>(bias);
    if (absl::Status set = state.SetDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                         "BIAS_POINTER", pointer);
        !set.ok()) {
      return set;
    }
  }
  for (const ScalePointer& scale : scale_pointers) {
    if (!scale.used) continue;
    const void* pointer = reinterpret_cast<const void*>(scales.*scale.pointer);
    if (absl::Status set =
            state.SetDesc(scale.attribute, scale.attribute_name, pointer);
        !set.ok()) {
      return set;
    }
  }
  // With scale type CUDA_R_32I (an s32 D) alpha and beta are int32.
  const bool int_scalars = call.scale_type == CUDA_R_32I;
  const void* alpha = int_scalars ? static_cast<const void*>(&call.alpha_int)
                                  : static_cast<const void*>(&call.alpha);
  const void* beta = int_scalars ? static_cast<const void*>(&call.beta_int)
                                 : static_cast<const void*>(&call.beta);
  return Check(
      state.lt.matmul(
          state.lt.handle, state.desc, alpha, reinterpret_cast<const void*>(b),
          state.a, reinterpret_cast<const void*>(a), state.b, beta,
          reinterpret_cast<const void*>(unread_fp8_c ? 0 : c), state.c,
          reinterpret_cast<void*>(d), state.d, &state.algo, workspace,
          workspace_bytes, reinterpret_cast<cudaStream_t>(stream)),
      "cublasLtMatmul");
}

absl::Status RunCublasLt(const LtGemm& gemm, CUdeviceptr a, CUdeviceptr b,
                         CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias,
                         const LtScales& scales, CUstream stream,
                         void* workspace, size_t workspace_bytes) {
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(gemm, workspace_bytes);
  if (!prepared.ok()) return prepared.status();
  return prepared->Run(a, b, c, d, bias, scales, stream, workspace,
                       workspace_bytes);
}

absl::Status RunCublasLt(const LtGemm& gemm, CUdeviceptr a, CUdeviceptr b,
                         CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias,
                         CUstream stream, void* workspace,
                         size_t workspace_bytes) {
  return RunCublasLt(gemm, a, b, c, d, bias, LtScales{}, stream, workspace,
                     workspace_bytes);
}

}  // namespace ptxgen::gemm
