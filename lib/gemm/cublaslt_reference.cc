#include "lib/gemm/cublaslt_reference.h"

#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ptxgen::gemm {
namespace {

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

bool IsFloatInput(ScalarType type) {
  return type == ScalarType::kF16 || type == ScalarType::kBF16 ||
         type == ScalarType::kF32;
}

// Input and output types: known, supported, and supported together.
absl::Status CheckTypes(const LtGemm& gemm) {
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
  for (const auto& [name, type] : {named[0], named[1], named[3]}) {
    if (!IsFloatInput(type)) {
      return Unsupported(
          absl::StrCat(name, " ", ptx::PtxName(type),
                       " is not supported yet (f16, bf16, f32)"));
    }
  }
  if (gemm.a_type != gemm.b_type) {
    return Unsupported(absl::StrCat(
        "a_type ", ptx::PtxName(gemm.a_type), " and b_type ",
        ptx::PtxName(gemm.b_type),
        " differ: cuBLASLt mixes input types only for fp8, not supported yet"));
  }
  if (gemm.d_type != gemm.a_type && gemm.d_type != ScalarType::kF32) {
    return Unsupported(absl::StrCat(
        ptx::PtxName(gemm.a_type), " inputs give ", ptx::PtxName(gemm.a_type),
        " or f32 outputs, not d_type ", ptx::PtxName(gemm.d_type)));
  }
  if (gemm.beta != 0 && gemm.c_type != gemm.d_type) {
    return Unsupported(
        absl::StrCat("c_type ", ptx::PtxName(gemm.c_type),
                     " differs from d_type ", ptx::PtxName(gemm.d_type),
                     ": with f32 compute cuBLASLt reads C in D's type"));
  }
  if (gemm.bias != LtGemm::Bias::kNone && gemm.bias_type != gemm.d_type) {
    return Unsupported(absl::StrCat(
        "bias_type ", ptx::PtxName(gemm.bias_type), " differs from d_type ",
        ptx::PtxName(gemm.d_type), ": cuBLASLt's bias has D's type"));
  }
  return absl::OkStatus();
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
      "->", ptx::PtxName(gemm.d_type), " A:", Major(gemm.a_k_major),
      " B:", Major(gemm.b_k_major), " ld=", gemm.lda, ",", gemm.ldb, ",",
      gemm.ldc, ",", gemm.ldd);
  if (gemm.batch != 1) absl::StrAppend(&text, " batch=", gemm.batch);
  absl::StrAppend(&text, " alpha=", gemm.alpha, " beta=", gemm.beta);
  if (gemm.bias != LtGemm::Bias::kNone) {
    absl::StrAppend(&text, " bias=", BiasName(gemm.bias));
  }
  absl::StrAppend(&text, ActivationName(gemm.activation));
  return text;
}

absl::StatusOr<cudaDataType> CudaDataType(ScalarType type) {
  switch (type) {
    case ScalarType::kF16:
      return CUDA_R_16F;
    case ScalarType::kBF16:
      return CUDA_R_16BF;
    case ScalarType::kF32:
      return CUDA_R_32F;
    default:
      break;
  }
  return Unsupported(absl::StrCat(ptx::PtxName(type),
                                  " is not supported yet (f16, bf16, f32)"));
}

absl::StatusOr<CublasLtCall> ToCublasLt(const LtGemm& gemm) {
  if (absl::Status types = CheckTypes(gemm); !types.ok()) return types;
  if (absl::Status shape = CheckShape(gemm); !shape.ok()) return shape;
  absl::StatusOr<cublasLtEpilogue_t> epilogue = Epilogue(gemm);
  if (!epilogue.ok()) return epilogue.status();
  // CheckTypes admitted only types CudaDataType maps.
  const cudaDataType input = *CudaDataType(gemm.a_type);
  const cudaDataType output = *CudaDataType(gemm.d_type);

  CublasLtCall call;
  call.m = static_cast<uint64_t>(gemm.n);
  call.n = static_cast<uint64_t>(gemm.m);
  call.k = static_cast<uint64_t>(gemm.k);
  // A' is ptxgen's B: [n,k] K-major is col-major k x n, transposed to n x k;
  // [k,n] MN-major is col-major n x k as it is.
  call.transa = gemm.b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  call.a = RowMajor(input, gemm.b_k_major ? gemm.n : gemm.k,
                    gemm.b_k_major ? gemm.k : gemm.n, gemm.ldb, gemm.batch,
                    gemm.stride_b);
  // B' is ptxgen's A: [m,k] K-major is col-major k x m, which is op(B') as
  // it is; [k,m] MN-major is col-major m x k, transposed to k x m.
  call.transb = gemm.a_k_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  call.b = RowMajor(input, gemm.a_k_major ? gemm.m : gemm.k,
                    gemm.a_k_major ? gemm.k : gemm.m, gemm.lda, gemm.batch,
                    gemm.stride_a);
  call.d =
      RowMajor(output, gemm.m, gemm.n, gemm.ldd, gemm.batch, gemm.stride_d);
  call.reads_c = gemm.beta != 0;
  call.c = call.reads_c ? RowMajor(output, gemm.m, gemm.n, gemm.ldc, gemm.batch,
                                   gemm.stride_c)
                        : call.d;
  call.alpha = gemm.alpha;
  call.beta = gemm.beta;
  call.epilogue = *epilogue;
  call.uses_bias = gemm.bias == LtGemm::Bias::kAlongN;
  call.bias_type = output;
  call.bias_batch_stride =
      call.uses_bias && gemm.batch > 1 ? gemm.stride_bias : 0;
  return call;
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
  // Run sets the bias pointer in `desc` just before its call.
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
  const State& state = *state_;
  const CublasLtCall& call = state.call;
  if (!call.reads_c) c = d;  // not read; cuBLASLt still wants a C
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
  if (call.reads_c && c == d &&
      (call.c.ld != call.d.ld || call.c.batch_stride != call.d.batch_stride)) {
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
  return Check(state.lt.matmul(state.lt.handle, state.desc, &call.alpha,
                               reinterpret_cast<const void*>(b), state.a,
                               reinterpret_cast<const void*>(a), state.b,
                               &call.beta, reinterpret_cast<const void*>(c),
                               state.c, reinterpret_cast<void*>(d), state.d,
                               &state.algo, workspace, workspace_bytes,
                               reinterpret_cast<cudaStream_t>(stream)),
               "cublasLtMatmul");
}

absl::Status RunCublasLt(const LtGemm& gemm, CUdeviceptr a, CUdeviceptr b,
                         CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias,
                         CUstream stream, void* workspace,
                         size_t workspace_bytes) {
  absl::StatusOr<PreparedLtGemm> prepared =
      PreparedLtGemm::Create(gemm, workspace_bytes);
  if (!prepared.ok()) return prepared.status();
  return prepared->Run(a, b, c, d, bias, stream, workspace, workspace_bytes);
}

}  // namespace ptxgen::gemm
