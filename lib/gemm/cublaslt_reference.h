#ifndef PTXGEN_LIB_GEMM_CUBLASLT_REFERENCE_H_
#define PTXGEN_LIB_GEMM_CUBLASLT_REFERENCE_H_

// One cuBLASLt matmul, described in ptxgen's terms: the reference for the
// GEMMs ptxgen is about to support (either operand major, leading
// dimensions, strided batches, alpha/beta with C, a bias and an activation).
// Used by the GPU tests and the benchmark; cuBLASLt is loaded at run time
// (cublaslt_library.h), so nothing here needs a GPU until Run.
//
//   LtGemm g = PackedLtGemm(m, n, k, ScalarType::kBF16, ScalarType::kBF16);
//   g.bias = LtGemm::Bias::kAlongN;
//   g.activation = LtGemm::Activation::kGelu;
//   absl::StatusOr<PreparedLtGemm> p = PreparedLtGemm::Create(g,
//   workspace_size); absl::Status s = p->Run(a, b, 0, d, bias, stream,
//   workspace, workspace_size);
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
#include "lib/gemm/cublaslt_library.h"
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
// The products accumulate in f32 (CUBLAS_COMPUTE_32F); alpha and beta are
// f32. With beta == 0, C is not read at all (c_type, ldc, stride_c and the
// C pointer are ignored).
//
// Types: A and B f16, bf16 or f32 (the same); C and D the same type, that
// of the inputs or f32. e4m3, e5m2, s8 are refused as not supported yet.
//
// Bias: kAlongN adds bias[j] to every D[i][j] (one value per column of D, a
// vector of n elements of bias_type == d_type), before the activation.
// kAlongM (one value per row) has no cuBLASLt epilogue in this mapping and
// is refused (see ToCublasLt).
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
};

// An LtGemm with packed leading dimensions (each row as long as it is) and
// packed batch strides; C, D and the bias of type `output`.
LtGemm PackedLtGemm(int64_t m, int64_t n, int64_t k, ptx::ScalarType input,
                    ptx::ScalarType output, bool a_k_major = true,
                    bool b_k_major = true, int batch = 1);

// A short name: "64x128x32 bf16->f32 A:K B:MN ld=40,136,128,128 batch=2
// alpha=1 beta=0.5 bias=n gelu".
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
//   C, D       col-major n x m, ld ldc / ldd (D's layout for C when beta == 0)
//   bias       CUBLASLT_EPILOGUE_*BIAS adds a vector of M' = n values, one
//              per row of D^T, i.e. per column of D: ptxgen's kAlongN
//   pointers   A' <- b, B' <- a, C <- c (d when beta == 0), D <- d
struct CublasLtCall {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  uint64_t m = 0, n = 0, k = 0;  // M', N', K
  CublasLtLayout a, b, c, d;     // of A' (ptxgen's B), B' (ptxgen's A), C, D
  cublasComputeType_t compute_type = CUBLAS_COMPUTE_32F;
  cudaDataType scale_type = CUDA_R_32F;
  float alpha = 1, beta = 0;
  bool reads_c = false;  // beta != 0
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool uses_bias = false;  // the epilogue reads a bias vector of M' values
  cudaDataType bias_type = CUDA_R_16F;
  int64_t bias_batch_stride = 0;
};

// The translation, refusing what cannot be expressed: InvalidArgument for a
// size, leading dimension, stride or enumeration out of range (m, n, k and
// the leading dimensions in 1..2^31-1, each leading dimension at least its
// row; batch strides in 0..2^32, stride_d at least one D, (m-1)*ldd + n, so
// that batches of D do not overlap); Unimplemented, by name, for types not
// supported yet or not supported together, and for a bias along m.
absl::StatusOr<CublasLtCall> ToCublasLt(const LtGemm& gemm);

// The cudaDataType of a ptxgen type; Unimplemented for those not supported.
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
  // pointer, a workspace too small, or C and D one buffer with different
  // layouts (cuBLASLt computes in place only with ldc == ldd and stride_c ==
  // stride_d). Thread-safe (calls are serialized while they enqueue); calls
  // in flight at once on different streams need workspaces of their own.
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
                         CUstream stream, void* workspace,
                         size_t workspace_bytes);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_CUBLASLT_REFERENCE_H_
