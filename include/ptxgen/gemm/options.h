#ifndef PTXGEN_GEMM_OPTIONS_H_
#define PTXGEN_GEMM_OPTIONS_H_

// What Gemm::Prepare (gemm.h) and PlanGemm (plan.h) may be told beyond the
// problem: apart from the Gemm, so that planning reads them without
// including the Gemm that calls it.

#include <optional>
#include <string>
#include <vector>

#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gemm {

// How Prepare chooses a configuration when none is given.
enum class Selection {
  kHeuristic,  // pick from the shape and the device, no timing
  kAutotune,   // time the candidates on the device once, remember the best
};

// Who gives the device memory of split-K's partial sums and stream-K's
// flags and partial sums (Gemm::workspace_bytes(); most GEMMs need none).
enum class WorkspaceOwner {
  // Prepare allocates it once (and zeroes stream-K's flags); Run uses it,
  // so the Gemm's runs on different streams must not overlap.
  kGemm,
  // Prepare allocates none: every Run of a Gemm that needs one is given
  // one (Run with a CallerWorkspace), so runs on several streams may
  // overlap, each with a workspace of its own, captured into CUDA graphs
  // or not.
  kCaller,
};

// What Prepare may be told beyond the problem.
struct GemmOptions {
  std::optional<gen::GemmConfig> config;  // use exactly this configuration
  Selection selection = Selection::kHeuristic;
  compile::KernelCache* cache = nullptr;  // nullptr: KernelCache::Default()
  // The device to prepare for, by ordinal (0 .. DeviceCount() - 1): the
  // Gemm is that device's primary context's, current for the duration of
  // Prepare only (the caller's own is restored). Unset: the calling
  // thread's current context, else device 0's primary context, then left
  // current. An ordinal that names no device is refused. PlanGemm ignores
  // it: it plans for a named target.
  std::optional<int> device;
  // Further NVRTC options for the kernel's compile, after
  // runtime::KernelCompileOptions' own (plan.h): "-lineinfo" for a profiler,
  // say. Flags that make ptxas serialize the kernel's wgmma or ignore its
  // setmaxnreg (--Ofast-compile, -G, -Xptxas=-O0) are refused once compiled:
  // such kernels ran 1.3x to 530x slower (bench/RESULTS.md, "Cold start"). Part
  // of the kernel cache's key. With Selection::kAutotune it is refused: the
  // autotuner times kernels compiled without them.
  std::vector<std::string> nvrtc_flags;
  // Who gives split-K's and stream-K's workspace (a value outside the
  // enumeration is refused).
  WorkspaceOwner workspace = WorkspaceOwner::kGemm;
};

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_OPTIONS_H_
