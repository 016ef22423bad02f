#ifndef PTXGEN_GEMM_GEMM_H_
#define PTXGEN_GEMM_GEMM_H_

// The user-facing GEMM, for each of `batch` problems:
//   D = act(alpha * op(A) * op(B) + beta * C + bias)
// with A [m,k] (K-major) or [k,m] (MN-major), B [n,k] (K-major) or [k,n]
// (MN-major), C and D [m,n] row-major, each with a leading dimension and a
// batch stride; f16, bf16, e4m3/e5m2 (fp8, K-major, optionally with
// per-tensor or block scales) or tf32 (f32 in memory, K-major) inputs with f32
// accumulation, D in f16, bf16, f32 or fp8; s8/u8 (K-major) inputs with
// exact s32 accumulation, D in s32 (the sums), s8 (alpha times the sums,
// saturated) or f16, bf16, f32. The original problem, C = A * B^T packed,
// is {m, n, k, element}.
//
//   absl::StatusOr<Gemm> gemm = Gemm::Prepare({m, n, k, ScalarType::kF16});
//   absl::Status run = gemm->Run(a, b, c, stream);
//
// Prepare plans the GEMM for the current device (PlanGemm, plan.h: the
// configuration, heuristic or autotuned; the kernel generated and compiled,
// or fetched from the kernel cache; the launch grid), loads the kernel into
// the current CUDA context (the primary context of device 0 when none is
// current; GemmOptions::device names another device) and re-plans the grid
// where the driver holds fewer clusters at once than the plan assumed. Its
// source, PTX and resource usage stay inspectable.
//
// Several devices, several contexts: a Gemm belongs to the context it was
// prepared in and runs only there. Compiled code is shared through the
// kernel cache; the loaded module (once per context, shared by that
// context's Gemms), the workspace and each Run's tensor maps are the
// context's own. Prepare and Run may be called from any threads at once,
// for any devices.
//
//   GemmOptions second_gpu;
//   second_gpu.device = 1;
//   absl::StatusOr<Gemm> on_1 = Gemm::Prepare(problem, second_gpu);
//   std::future<absl::StatusOr<Gemm>> later = Gemm::PrepareAsync(problem);
//   ...                                     // other work while it compiles
//   absl::StatusOr<Gemm> ready = later.get();
//
// Streams and CUDA graphs: Run only enqueues work on the stream it is
// given, so it may be captured into a graph. A split-K or stream-K Gemm
// prepared with GemmOptions::workspace = WorkspaceOwner::kCaller owns no
// memory: each run is given a workspace (as cuBLASLt's), and runs on
// several streams may overlap.
//
//   GemmOptions options;
//   options.workspace = WorkspaceOwner::kCaller;
//   absl::StatusOr<Gemm> shared = Gemm::Prepare(problem, options);
//   ...                              // workspace_bytes() of memory, or none
//   shared->Run(operands, CallerWorkspace{memory, bytes}, stream);

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/options.h"
#include "ptxgen/gemm/problem.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gemm {

// The device pointers of one Run. c may equal d (then C is read before D is
// written, element by element); c and bias are read only when the problem
// has them.
// scale_a and scale_b (one f32 each, 4-byte aligned) are read only with
// per-tensor scaling, when each launch's kernel reads them; scale_d too
// when D is e4m3 or e5m2. With block scaling they point to the arrays of
// StoredSpans' scale_a and scale_b floats. amax_d (one f32, 4-byte aligned) is
// written only with GemmProblem::record_amax.
struct GemmOperands {
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  CUdeviceptr c = 0;
  CUdeviceptr d = 0;
  CUdeviceptr bias = 0;
  CUdeviceptr scale_a = 0;
  CUdeviceptr scale_b = 0;
  CUdeviceptr scale_d = 0;
  CUdeviceptr amax_d = 0;
  // Grouped problems only (GemmProblem::grouping): `batch` int32 (4-byte
  // aligned), each group's cumulative row end (contiguous) or row count
  // (masked), read by the kernel.
  CUdeviceptr group_rows = 0;
};

// The alignment, in bytes, of a workspace given to Run (as cuBLASLt's).
inline constexpr int64_t kWorkspaceAlignment = 256;

// Device memory of the Gemm's context that one Run uses as its workspace:
// at least Gemm::workspace_bytes() bytes from `address`, which is
// kWorkspaceAlignment-aligned. A Gemm that needs none ignores it.
struct CallerWorkspace {
  CUdeviceptr address = 0;
  int64_t bytes = 0;
  // True when the memory is as Runs leave it: all zero before its first
  // Run, and given since only to Runs (of any Gemms) that completed one
  // after another. A Run leaves zero what the next needs zero (stream-K's
  // flags), so this one zeroes nothing first: a launch fewer. A workspace
  // kept per stream is zeroed once when allocated. False: it may hold
  // anything, and the flags are zeroed first (an async memset).
  bool zeroed = false;
};

// What Run refuses (InvalidArgument, naming both operands) of where the
// operands of `problem` lie: an output (D, amax_d, the workspace of
// `workspace_bytes` at `workspace`; 0: none) that may share memory with
// another operand the run uses, which the kernel would race on
// (base::MayShareMemory: views that interleave without touching pass).
// D may be C itself, the same memory walked the same way: an update in
// place. Operands the problem does not use are not looked at. Plain
// arithmetic: no driver call; Run checks it after the pointers' rules.
absl::Status CheckOutputsApart(const GemmProblem& problem,
                               const GemmOperands& operands,
                               CUdeviceptr workspace = 0,
                               int64_t workspace_bytes = 0);

// Defined in gemm.cc and plan.h: what a Gemm holds.
class LoadedGemmKernel;
struct GemmPlan;
struct GemmWorkspace;
// Defined in lib/gemm: the preparation of a Gemm whose configuration is
// chosen, below the autotuner, which prepares its candidates with it, and
// below Prepare, which chooses (heuristic or autotuned) and then calls it.
class GemmPreparation;

// A prepared GEMM: its kernel loaded, its grid and workspace planned; Run
// launches it on device pointers. Copyable; copies share the kernel. A Gemm
// prepared in a context the caller created must be destroyed before it.
class Gemm {
 public:
  static absl::StatusOr<Gemm> Prepare(const GemmProblem& problem,
                                      const GemmOptions& options = {});

  // Prepare on a thread of its own (std::async), so that kernels a process
  // will need compile while it does something else: start several, collect
  // them when needed. It prepares in the calling thread's current context,
  // captured now (with none current, as Prepare would: options.device's
  // primary context, else device 0's), so the Gemm is the one a direct
  // call would give; the problem and the options are copied. options.cache
  // and the captured context must outlive the preparation; a future
  // dropped unread waits for it to finish. Never throws: when no thread can
  // start, the future holds ResourceExhausted at once.
  static std::future<absl::StatusOr<Gemm>> PrepareAsync(
      const GemmProblem& problem, const GemmOptions& options = {});

  // Computes D from device pointers (16-byte aligned) on `stream`, in the
  // Gemm's context. With another context current, or a stream of another
  // context, it is refused (FailedPrecondition, naming both); on a thread
  // with no context current the Gemm's is made current, and left so. An
  // operand the kernel cannot reach from its context (memory of another
  // device without peer access, or of another context) is refused
  // (InvalidArgument): a kernel would fault on it; so is an output sharing
  // memory with another operand (CheckOutputsApart), which it would race on.
  // It only enqueues work on `stream` (no allocation, no synchronization,
  // no module load; its checks are host-side queries), so a run may be
  // captured into a CUDA graph (cuStreamBeginCapture, any capture mode).
  // A split-K or stream-K configuration keeps partial sums in a workspace
  // (workspace_bytes()): with WorkspaceOwner::kGemm this Gemm's own, so
  // its runs on different streams must not overlap; with kCaller this
  // call is refused (InvalidArgument): give one to the Run below.
  absl::Status Run(const GemmOperands& operands, CUstream stream) const;
  // Run on the caller's workspace, whichever the owner: used by this run's
  // work on `stream` only, so runs on other streams, each given its own,
  // may overlap. Unless it is `zeroed`, stream-K's flags are zeroed on
  // `stream` first (an async memset), so the memory may differ, and hold
  // anything, every call. A Gemm that needs a workspace refuses
  // (InvalidArgument, naming the rule and workspace_bytes()) a null one,
  // one of fewer bytes, one not kWorkspaceAlignment-aligned, or one the
  // kernel cannot reach; one that needs none ignores it.
  absl::Status Run(const GemmOperands& operands,
                   const CallerWorkspace& workspace, CUstream stream) const;
  // The original problem's call: D is written at c; no C read, no bias.
  absl::Status Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                   CUstream stream) const;

  // The bytes of workspace a run needs: 0 but for split-K (split_k f32
  // slices of D) and stream-K (a slot of partial sums per CTA of the grid
  // Prepare planned), each after a flag region of 32 KiB.
  int64_t workspace_bytes() const;

  const GemmProblem& problem() const { return problem_; }
  const gen::GemmConfig& config() const;
  const gen::GeneratedGemm& generated() const;
  const compile::CompiledModule& compiled() const;
  // The ordinal of the device, and the context, the Gemm was prepared in
  // and runs in.
  int device() const { return device_; }
  CUcontext context() const { return context_; }

 private:
  Gemm(GemmProblem problem, gen::GemmGrid grid, CUcontext context, int device,
       std::shared_ptr<const LoadedGemmKernel> kernel,
       std::shared_ptr<const GemmWorkspace> workspace)
      : problem_(problem),
        grid_(grid),
        context_(context),
        device_(device),
        kernel_(std::move(kernel)),
        workspace_(std::move(workspace)) {}

  friend class GemmPreparation;

  // Run's refusals: the pointers, the context, the stream.
  absl::Status CheckRunsHere(const GemmOperands& operands,
                             CUstream stream) const;
  // A CallerWorkspace's refusals, before the driver is asked anything.
  absl::Status CheckCallerWorkspace(const CallerWorkspace& workspace) const;
  // Both Runs past their workspace: the launch on `given` (address 0
  // without one); the caller's (`callers`) is checked for reach, and its
  // stream-K flags zeroed unless it is `zeroed`.
  absl::Status Launch(const GemmOperands& operands,
                      const CallerWorkspace& given, bool callers,
                      CUstream stream) const;
  absl::Status Reduce(CUdeviceptr workspace, CUdeviceptr c,
                      CUstream stream) const;

  GemmProblem problem_;
  gen::GemmGrid grid_;  // as PlanGemmLaunch accepted it
  CUcontext context_;
  int device_;
  std::shared_ptr<const LoadedGemmKernel> kernel_;
  // Split-K and stream-K only: the size, the reduce kernel, the buffer
  // with WorkspaceOwner::kGemm.
  std::shared_ptr<const GemmWorkspace> workspace_;
};

// Loads the plan's kernel into the current context (the primary context of
// device 0 made current when none is), once per context and kernel
// identity (GemmPlan::kernel_identity): shared by every Gemm of that
// context. Asks the driver how many of its clusters fit at once.
absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> LoadGemmKernel(
    const GemmPlan& plan);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_GEMM_H_
