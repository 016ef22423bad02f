#ifndef PTXGEN_GEMM_TARGET_H_
#define PTXGEN_GEMM_TARGET_H_

// The device a GEMM is chosen and planned for, as numbers: what the
// heuristic, the candidates and PlanGemm (plan.h) read of it.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ptxgen::gemm {

// The one architecture the GEMM kernels are generated for: wgmma,
// setmaxnreg and TMA multicast exist on no other.
inline constexpr char kGemmArch[] = "sm_90a";

// The SM counts a target may have: past any GPU made (a full GH100 has
// 144), and far inside the int arithmetic of grids and the heuristic.
inline constexpr int kMaxGemmTargetSms = 1024;

// The least shared memory a target may give a block: the 48 KiB every CUDA
// GPU gives without opting in.
inline constexpr int kMinGemmTargetSharedBytes = 48 * 1024;

// What choosing and planning a GEMM need to know of a device.
struct GemmTarget {
  std::string arch = kGemmArch;  // NVRTC's --gpu-architecture
  int sm_count = 0;
  // The most dynamic shared memory a block may opt in to
  // (runtime::DeviceProperties::max_shared_bytes_per_block_optin): the
  // rings of stages are as deep as it allows.
  int max_shared_bytes_per_block_optin = 0;

  // An H100 SXM or an H200: 132 SMs, 227 KiB (232448 bytes) of shared
  // memory per block.
  static GemmTarget H200();
};

// Refuses, naming the rule ("<family> target: ...", the kernels planned
// for it: "GEMM", "attention"): arch other than kGemmArch, sm_count outside
// 1..kMaxGemmTargetSms, less shared memory per block than
// kMinGemmTargetSharedBytes.
absl::Status ValidateGemmTarget(const GemmTarget& target,
                                absl::string_view family = "GEMM");

}  // namespace ptxgen::gemm

#endif  // PTXGEN_GEMM_TARGET_H_
