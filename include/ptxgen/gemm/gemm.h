#ifndef PTXGEN_GEMM_GEMM_H_
#define PTXGEN_GEMM_GEMM_H_

// The user-facing GEMM: C = A * B^T with A [m,k], B [n,k], C [m,n], all
// row-major, f16 or bf16 in and out, f32 accumulation.
//
//   absl::StatusOr<Gemm> gemm = Gemm::Prepare({m, n, k, ScalarType::kF16});
//   absl::Status run = gemm->Run(a, b, c, stream);
//
// Prepare picks a configuration (heuristic or autotuned), generates the
// kernel, compiles it (or fetches it from the kernel cache) and loads it
// into the current CUDA context (the primary context of device 0 when none
// is current), then plans its launch (PlanGemmLaunch, selection.h). Its
// source, PTX and resource usage stay inspectable.

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gemm {

struct GemmProblem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  ptx::ScalarType element = ptx::ScalarType::kF16;
};

// Sizes the kernels take: m, n, k in 1..2^31-1 (gen::kMaxGemmDimension);
// k a multiple of 8 (TMA reads rows of A and B that must start on 16-byte
// boundaries); f16/bf16.
absl::Status ValidateProblem(const GemmProblem& problem);

enum class Selection {
  kHeuristic,  // pick from the shape and the device, no timing
  kAutotune,   // time the candidates on the device once, remember the best
};

struct GemmOptions {
  std::optional<gen::GemmConfig> config;  // use exactly this configuration
  Selection selection = Selection::kHeuristic;
  compile::KernelCache* cache = nullptr;  // nullptr: KernelCache::Default()
};

class LoadedGemmKernel;
struct GemmWorkspace;

class Gemm {
 public:
  static absl::StatusOr<Gemm> Prepare(const GemmProblem& problem,
                                      const GemmOptions& options = {});

  // Computes C from device pointers (16-byte aligned) on `stream`.
  // A split-K or stream-K configuration keeps partial sums in a workspace
  // owned by this Gemm: calls on different streams must not overlap
  // (prepare one Gemm per stream instead).
  absl::Status Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                   CUstream stream) const;

  const GemmProblem& problem() const { return problem_; }
  const gen::GemmConfig& config() const;
  const gen::GeneratedGemm& generated() const;
  const compile::CompiledModule& compiled() const;

 private:
  Gemm(GemmProblem problem, gen::GemmGrid grid,
       std::shared_ptr<const LoadedGemmKernel> kernel,
       std::shared_ptr<const GemmWorkspace> workspace)
      : problem_(problem),
        grid_(grid),
        kernel_(std::move(kernel)),
        workspace_(std::move(workspace)) {}

  absl::Status Reduce(CUdeviceptr c, CUstream stream) const;

  GemmProblem problem_;
  gen::GemmGrid grid_;  // as PlanGemmLaunch accepted it
  std::shared_ptr<const LoadedGemmKernel> kernel_;
  std::shared_ptr<const GemmWorkspace> workspace_;  // split-K, stream-K
};

// Generates, compiles and loads one configuration into the current context
// (shared by every Gemm that uses it).
absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> LoadGemmKernel(
    const gen::GemmConfig& config, ptx::ScalarType element,
    compile::KernelCache& cache);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_GEMM_H_
