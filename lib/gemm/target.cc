#include "ptxgen/gemm/target.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::gemm {
namespace {

absl::Status RefuseTarget(absl::string_view family, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(family, " target: ", rule));
}

}  // namespace

GemmTarget GemmTarget::H200() {
  GemmTarget target;
  target.sm_count = 132;
  target.max_shared_bytes_per_block_optin = 232448;  // 227 KiB
  return target;
}

absl::Status ValidateGemmTarget(const GemmTarget& target,
                                absl::string_view family) {
  if (target.arch != kGemmArch) {
    return RefuseTarget(
        family, absl::StrCat("arch '", target.arch, "' is not one the ", family,
                             " kernels are generated for: only ", kGemmArch,
                             " has wgmma, setmaxnreg and TMA multicast"));
  }
  if (target.sm_count < 1 || target.sm_count > kMaxGemmTargetSms) {
    return RefuseTarget(
        family, absl::StrCat("sm_count=", target.sm_count, " is outside 1..",
                             kMaxGemmTargetSms));
  }
  if (target.max_shared_bytes_per_block_optin < kMinGemmTargetSharedBytes) {
    return RefuseTarget(
        family, absl::StrCat("max_shared_bytes_per_block_optin=",
                             target.max_shared_bytes_per_block_optin,
                             " is below the ", kMinGemmTargetSharedBytes,
                             " bytes every CUDA GPU gives a block"));
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::gemm
