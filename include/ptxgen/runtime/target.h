#ifndef PTXGEN_RUNTIME_TARGET_H_
#define PTXGEN_RUNTIME_TARGET_H_

// The device kernels are generated and planned for, as numbers: what every
// kernel family's heuristic and planner read of it (GEMM, attention), and
// the NVRTC options every family's kernels compile with.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {

// The one architecture the kernels are generated for: wgmma, setmaxnreg
// and TMA multicast exist on no other.
inline constexpr char kKernelArch[] = "sm_90a";

// The SM counts a target may have: past any GPU made (a full GH100 has
// 144), and far inside the int arithmetic of grids and the heuristics.
inline constexpr int kMaxTargetSms = 1024;

// The least shared memory a target may give a block: the 48 KiB every CUDA
// GPU gives without opting in.
inline constexpr int kMinTargetSharedBytes = 48 * 1024;

// What choosing and planning a kernel need to know of a device.
struct KernelTarget {
  std::string arch = kKernelArch;  // NVRTC's --gpu-architecture
  int sm_count = 0;
  // The most dynamic shared memory a block may opt in to
  // (DeviceProperties::max_shared_bytes_per_block_optin): rings of stages
  // are as deep as it allows.
  int max_shared_bytes_per_block_optin = 0;

  // An H100 SXM or an H200: 132 SMs, 227 KiB (232448 bytes) of shared
  // memory per block.
  static KernelTarget H200();
};

// Refuses, naming the rule ("<family> target: ...", the kernels planned
// for it: "GEMM", "attention"): arch other than kKernelArch, sm_count
// outside 1..kMaxTargetSms, less shared memory per block than
// kMinTargetSharedBytes.
absl::Status ValidateKernelTarget(const KernelTarget& target,
                                  absl::string_view family);

// `device` as a target; refuses ("<family> target: device N (name): ...")
// one that cannot run kKernelArch code, in CheckArchSupported's words, or
// one ValidateKernelTarget refuses.
absl::StatusOr<KernelTarget> KernelTargetOf(const DeviceProperties& device,
                                            absl::string_view family);

// What every kernel compiles with: kKernelArch and "--minimal" (the same
// CUBIN, a shorter front end: bench/RESULTS.md, "Cold start"), then
// `nvrtc_flags`.
compile::CompileOptions KernelCompileOptions(
    const std::vector<std::string>& nvrtc_flags);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_TARGET_H_
