#ifndef PTXGEN_LIB_TESTING_CUBLASLT_REFERENCE_H_
#define PTXGEN_LIB_TESTING_CUBLASLT_REFERENCE_H_

// One cuBLASLt matmul, described in ptxgen's terms: the reference for the
// GEMMs ptxgen is about to support (either operand major, leading
// dimensions, strided batches, alpha/beta with C, a bias and an activation;
// f16, bf16, f32, tf32, fp8 with per-tensor scales, and int8). Used by the
// GPU tests and the benchmark; cuBLASLt is loaded at run time
// (cublaslt_library.h), so nothing here needs a GPU until Run.
//
//   LtGemm g = PackedLtGemm(m, n, k, ScalarType::kBF16, ScalarType::kBF16);
//   g.bias = LtGemm::Bias::kAlongN;
//   g.activation = LtGemm::Activation::kGelu;
//   absl::StatusOr<PreparedLtGemm> p = PreparedLtGemm::Create(g,
//   workspace_size); absl::Status s = p->Run(a, b, 0, d, bias, stream,
//   workspace, workspace_size);
//
//   LtGemm f = PackedLtGemm(m, n, k, ScalarType::kE4M3, ScalarType::kBF16);
//   f.scale_a = f.scale_b = true;  // Run is given both scales
//   ... PreparedLtGemm::Create(f, ...) ... ->Run(a, b, 0, d, 0,
//   LtScales{scale_a, scale_b}, stream, workspace, workspace_size);
//
// Nothing throws: a problem cuBLASLt (or this mapping) cannot express is
// refused by name before any call, and a failing cuBLASLt call is an
// absl::Status naming the function and the status it returned.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cublasLt.h"
#include "cuda.h"
#include "lib/testing/cublaslt_library.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gemm {

// D = act(alpha * A * B^T + beta * C + bias), per batch, in ptxgen's
// row-major convention (sizes, leading dimensions and strides in elements):
//   D[i][j] = act(alpha * sum_l A(i,l) B(j,l) + beta * C[i][j] + bias[j])
//   A(i,l) = a[i*lda + l] when a_k_major ([m,k]), else a[l*lda + i] ([k,m]);
//   B(j,l) = b[j*ldb + l] when b_k_major ([n,k]), else b[l*ldb + j] ([k,n]);
//   C[i][j] = c[i*ldc + j], D[i][j] = d[i*ldd + j] ([m,n]).
// Batch i reads a + i*stride_a, b + i*stride_b, c + i*stride_c, bias +
// i*stride_bias and writes d + i*stride_d (strides only matter when
// batch > 1; a stride 0 of an input reuses one matrix for every batch).
// The products accumulate in f32 (s32 for int8); alpha and beta are f32
// (int32 for an s32 D, see Types). With beta == 0, C is not read at all
// (ldc, stride_c and the C pointer are ignored, and c_type too except for an
// fp8 D, where it is the type of cuBLASLt's C layout either way).
//
// Types (a_type x b_type -> d_type; C is of d_type and the bias of d_type
// unless said otherwise; anything else is refused, Unimplemented, by name):
//   f16 x f16 -> f16 or f32; bf16 x bf16 -> bf16 or f32; f32 x f32 -> f32.
//     CUBLAS_COMPUTE_32F, f32 alpha/beta.
//   tf32 x tf32 -> f32: f32 data in memory (every matrix CUDA_R_32F)
//     multiplied as tf32, CUBLAS_COMPUTE_32F_FAST_TF32, f32 alpha/beta.
//   fp8: e4m3 or e5m2 each (mixed allowed, not e5m2 x e5m2), A and B both
//     K-major (cuBLASLt's fp8 kernels take only its "TN" layout),
//     CUBLAS_COMPUTE_32F, f32 alpha/beta, as cuBLASLt's fp8 table has it:
//       -> bf16 (C, bias bf16); -> f16 (C, bias f16); -> f32 (C f32, bias
//       bf16); -> e4m3, and -> e5m2 when exactly one input is e5m2: C and
//       bias of c_type, bf16 or f16 (C's layout has that type even when
//       beta == 0, so C and D are never one buffer when C is read).
//     Per-tensor scales (f32 scalars in device memory, see LtScales):
//       D[i][j] = scale_d * act(alpha * scale_a * scale_b * sum_l A B
//                               + beta * C[i][j] + bias[j])
//     with scale_d only for an fp8 D, and amax_d = max |act(...)| over every
//     element of D (before scale_d and the conversion to D's type).
//     fast_accumulation: cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM, the
//     tensor cores' partial sums not promoted to full f32 along k (faster,
//     less accurate).
//   int8: s8 x s8, A and B both K-major ("TN"), CUBLAS_COMPUTE_32I:
//       -> s32 (C s32): scale type CUDA_R_32I, alpha and beta passed as
//          int32 (InvalidArgument unless they are integers);
//       -> s8 (C s8): scale type CUDA_R_32F, f32 alpha/beta, the result
//          rounded to s8 (saturating, as cuBLASLt does).
//     No bias and no activation (cuBLASLt's int8 kernels have only the
//     default epilogue). u8 is refused: cuBLASLt multiplies s8 only.
//   scale_a, scale_b, amax_d and fast_accumulation are for fp8 inputs only,
//   scale_d for an fp8 D only.
//
// Bias: kAlongN adds bias[j] to every D[i][j] (one value per column of D, a
// vector of n elements of bias_type), before the activation. kAlongM (one
// value per row) has no cuBLASLt epilogue in this mapping and is refused
// (see ToCublasLt).
//
// Activation: kRelu is max(x, 0); kGelu is cuBLASLt's GELU, the tanh
// approximation 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), not the erf
// form: compare it with gelu_tanh.
struct LtGemm {
  enum class Bias { kNone, kAlongM, kAlongN };
  enum class Activation { kNone, kRelu, kGelu };

  int64_t m = 0, n = 0, k = 0;
  ptx::ScalarType a_type = ptx::ScalarType::kF16;
  ptx::ScalarType b_type = ptx::ScalarType::kF16;
  ptx::ScalarType c_type = ptx::ScalarType::kF16;
  ptx::ScalarType d_type = ptx::ScalarType::kF16;
  bool a_k_major = true, b_k_major = true;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  int64_t stride_bias = 0;
  float alpha = 1, beta = 0;
  Bias bias = Bias::kNone;
  ptx::ScalarType bias_type = ptx::ScalarType::kF16;
  Activation activation = Activation::kNone;
  // fp8 only. Which of LtScales' pointers Run is given: the algorithm is
  // chosen knowing which scales there are (computing an amax, say, may take
  // another kernel), while the pointers may change from call to call.
  bool scale_a = false;  // A(i,l) multiplied by *LtScales::a
  bool scale_b = false;  // B(j,l) multiplied by *LtScales::b
  bool scale_d = false;  // an fp8 D only: the result multiplied by *d
  bool amax_d = false;   // *LtScales::amax_d receives max |result|
  bool fast_accumulation = false;
};

// The per-tensor fp8 scales of one Run: device pointers to f32 scalars,
// 4-byte aligned, each given exactly when the LtGemm says so (0 otherwise).
// They are Run's arguments rather than LtGemm's because a PreparedLtGemm is
// made once and run in a loop, often with scales that change between calls
// (amax histories); Run sets them on the matmul descriptor while it holds
// the descriptor, as it does the bias pointer. cuBLASLt reads a, b and d
// and writes amax_d when the matmul runs on the stream.
struct LtScales {
  CUdeviceptr a = 0;       // ptxgen's A (cuBLASLt's B_SCALE_POINTER)
  CUdeviceptr b = 0;       // ptxgen's B (cuBLASLt's A_SCALE_POINTER)
  CUdeviceptr d = 0;       // D_SCALE_POINTER
  CUdeviceptr amax_d = 0;  // AMAX_D_POINTER, written
};

// An LtGemm with packed leading dimensions (each row as long as it is) and
// packed batch strides; C, D and the bias of type `output`, except where
// cuBLASLt's fp8 table wants other types: for an fp8 `output`, C and the
// bias bf16; for fp8 inputs and an f32 `output`, the bias bf16.
LtGemm PackedLtGemm(int64_t m, int64_t n, int64_t k, ptx::ScalarType input,
                    ptx::ScalarType output, bool a_k_major = true,
                    bool b_k_major = true, int batch = 1);

// A short name: "64x128x32 bf16->f32 A:K B:MN ld=40,136,128,128 batch=2
// alpha=1 beta=0.5 bias=n gelu"; with fp8 "64x128x64 e4m3*e5m2->e4m3(C bf16)
// A:K B:K ld=64,64,128,128 alpha=1 beta=0 scales=a,b,d amax_d fast_accum".
std::string DescribeLtGemm(const LtGemm& gemm);

// One column-major cuBLASLt matrix layout.
struct CublasLtLayout {
  cudaDataType type = CUDA_R_16F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;  // 0 when batch_count == 1
};

// The cuBLASLt parameters of an LtGemm. cuBLASLt is column-major, and a
// row-major [m,n] D with pitch ldd is a column-major [n,m] matrix with ld
// ldd, i.e. D^T; so cuBLASLt computes D^T = op(B) op(A)^T:
//
//   cuBLASLt   ptxgen
//   M', N', K  n, m, k
//   A'         B: K-major  [n,k] -> col-major k x n, ld ldb, transa = T
//                 MN-major [k,n] -> col-major n x k, ld ldb, transa = N
//   B'         A: K-major  [m,k] -> col-major k x m, ld lda, transb = N
//                 MN-major [k,m] -> col-major m x k, ld lda, transb = T
//   C, D       col-major n x m, ld ldc / ldd (D's layout for C when beta == 0,
//              of c_type for an fp8 D)
//   bias       CUBLASLT_EPILOGUE_*BIAS adds a vector of M' = n values, one
//              per row of D^T, i.e. per column of D: ptxgen's kAlongN
//   pointers   A' <- b, B' <- a, C <- c (d when beta == 0), D <- d
//   scales     A_SCALE_POINTER <- LtScales::b, B_SCALE_POINTER <- ::a,
//              D_SCALE_POINTER <- ::d, AMAX_D_POINTER <- ::amax_d
// ptxgen's K-major A and B (cuBLASLt's "TN": transa = T, transb = N) are
// the layout cuBLASLt's fp8 and int8 kernels require.
struct CublasLtCall {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  uint64_t m = 0, n = 0, k = 0;  // M', N', K
  CublasLtLayout a, b, c, d;     // of A' (ptxgen's B), B' (ptxgen's A), C, D
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType scale_type = CUDA_R_32F;
  // What Run passes as alpha and beta: the floats, or with scale_type
  // CUDA_R_32I (an s32 D) the same values as int32.
  float alpha = 1, beta = 0;
  int32_t alpha_int = 1, beta_int = 0;
  bool reads_c = false;  // beta != 0
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool uses_bias = false;  // the epilogue reads a bias vector of M' values
  cudaDataType bias_type = CUDA_R_16F;
  int64_t bias_batch_stride = 0;
  // The scale pointers the descriptor holds, in cuBLASLt's roles: a_scale
  // is A's (ptxgen's scale_b), b_scale B's (ptxgen's scale_a).
  bool a_scale = false, b_scale = false, d_scale = false, amax_d = false;
  // fp8 inputs: CUBLASLT_MATMUL_DESC_FAST_ACCUM is set (to fast_accum);
  // otherwise it is left unset.
  bool sets_fast_accum = false;
  bool fast_accum = false;
};

// The translation, refusing what cannot be expressed: InvalidArgument for a
// size, leading dimension, stride or enumeration out of range (m, n, k and
// the leading dimensions in 1..2^31-1, each leading dimension at least its
// row; batch strides in 0..2^32, stride_d at least one D, (m-1)*ldd + n, so
// that batches of D do not overlap); Unimplemented, by name, for types not
// supported or not supported together (see LtGemm's Types), for an fp8 or
// int8 operand not K-major, for a bias along m, and for an epilogue or a
// scale the types do not take; InvalidArgument for an alpha or beta that is
// not an integer with an s32 D.
absl::StatusOr<CublasLtCall> ToCublasLt(const LtGemm& gemm);

// The cudaDataType of a ptxgen type (tf32 is stored as f32: CUDA_R_32F);
// InvalidArgument for a value outside the enumeration.
absl::StatusOr<cudaDataType> CudaDataType(ptx::ScalarType type);

// The workspace cuBLAS's documentation recommends for Hopper (32 MiB).
inline constexpr size_t kLtWorkspaceBytes = size_t{32} << 20;

// An LtGemm with its cuBLASLt descriptors, layouts and algorithm (from
// cublasLtMatmulAlgoGetHeuristic) made once, for calling in a loop.
// Destroying it destroys them; it may go once Run has returned (cuBLASLt
// keeps nothing of them past the call).
class PreparedLtGemm {
 public:
  // With the process's cuBLASLt (kCublasLtLibrary, loaded on first use,
  // FailedPrecondition when it cannot be). The algorithm is chosen for
  // pointers aligned to 16 bytes (Run refuses less) and a workspace of at
  // most `max_workspace_bytes`. Unimplemented when cuBLASLt has no algorithm
  // for the problem on the current device.
  static absl::StatusOr<PreparedLtGemm> Create(const LtGemm& gemm,
                                               size_t max_workspace_bytes);
  // With `library` (its handle and entry points are copied).
  static absl::StatusOr<PreparedLtGemm> Create(const CublasLtLibrary& library,
                                               const LtGemm& gemm,
                                               size_t max_workspace_bytes);

  // A moved-from PreparedLtGemm may only be assigned to or destroyed.
  PreparedLtGemm(PreparedLtGemm&&) noexcept;
  PreparedLtGemm& operator=(PreparedLtGemm&&) noexcept;
  ~PreparedLtGemm();

  // Enqueues the matmul on `stream` (device pointers in ptxgen's roles; c is
  // ignored when beta == 0, bias when there is none; `workspace` needs at
  // least workspace_bytes()). InvalidArgument for a null or misaligned
  // pointer, a workspace too small, C and D one buffer with different
  // layouts (cuBLASLt computes in place only with ldc == ldd, stride_c ==
  // stride_d and one type), or scales other than the LtGemm's (a scale it
  // has that is null or not 4-byte aligned, or one it has not that is
  // given). Thread-safe (calls are serialized while they enqueue and set
  // the bias and scale pointers); calls in flight at once on different
  // streams need workspaces of their own.
  absl::Status Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                   CUdeviceptr bias, const LtScales& scales, CUstream stream,
                   void* workspace, size_t workspace_bytes) const;
  // Without scales (LtScales{}).
  absl::Status Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                   CUdeviceptr bias, CUstream stream, void* workspace,
                   size_t workspace_bytes) const;

  const LtGemm& gemm() const;
  const CublasLtCall& call() const;
  // The workspace the chosen algorithm needs.
  size_t workspace_bytes() const;

 private:
  struct State;
  explicit PreparedLtGemm(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// PreparedLtGemm::Create(gemm, workspace_bytes) then Run, the descriptors
// destroyed on return: for a single call (it asks the heuristic every time;
// a timing loop keeps a PreparedLtGemm instead).
absl::Status RunCublasLt(const LtGemm& gemm, CUdeviceptr a, CUdeviceptr b,
                         CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias,
                         const LtScales& scales, CUstream stream,
                         void* workspace, size_t workspace_bytes);
absl::Status RunCublasLt(const LtGemm& gemm, CUdeviceptr a, CUdeviceptr b,
                         CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias,
                         CUstream stream, void* workspace,
                         size_t workspace_bytes);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_TESTING_CUBLASLT_REFERENCE_H_
