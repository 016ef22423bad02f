#include "ptxgen/runtime/target.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::runtime {
namespace {

absl::Status RefuseTarget(absl::string_view family, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(family, " target: ", rule));
}

}  // namespace

KernelTarget KernelTarget::H200() {
  KernelTarget target;
  target.sm_count = 132;
  target.max_shared_bytes_per_block_optin = 232448;  // 227 KiB
  return target;
}

absl::Status ValidateKernelTarget(const KernelTarget& target,
                                  absl::string_view family) {
  if (target.arch != kKernelArch) {
    return RefuseTarget(
        family, absl::StrCat("arch '", target.arch, "' is not one the ", family,
                             " kernels are generated for: only ", kKernelArch,
                             " has wgmma, setmaxnreg and TMA multicast"));
  }
  if (target.sm_count < 1 || target.sm_count > kMaxTargetSms) {
    return RefuseTarget(family, absl::StrCat("sm_count=", target.sm_count,
                                             " is outside 1..", kMaxTargetSms));
  }
  if (target.max_shared_bytes_per_block_optin < kMinTargetSharedBytes) {
    return RefuseTarget(family,
                        absl::StrCat("max_shared_bytes_per_block_optin=",
                                     target.max_shared_bytes_per_block_optin,
                                     " is below the ", kMinTargetSharedBytes,
                                     " bytes every CUDA GPU gives a block"));
  }
  return absl::OkStatus();
}

absl::StatusOr<KernelTarget> KernelTargetOf(const DeviceProperties& device,
                                            absl::string_view family) {
  if (absl::Status runs =
          CheckArchSupported(kKernelArch, device.cc_major, device.cc_minor);
      !runs.ok()) {
    return absl::Status(runs.code(),
                        absl::StrCat(family, " target: device ", device.ordinal,
                                     " (", device.name, "): ", runs.message()));
  }
  KernelTarget target;
  target.sm_count = device.sm_count;
  target.max_shared_bytes_per_block_optin =
      device.max_shared_bytes_per_block_optin;
  if (absl::Status valid = ValidateKernelTarget(target, family); !valid.ok()) {
    return valid;
  }
  return target;
}

compile::CompileOptions KernelCompileOptions(
    const std::vector<std::string>& nvrtc_flags) {
  compile::CompileOptions options;
  options.arch = kKernelArch;
  // The kernels need none of the runtime's declarations, which --minimal
  // leaves out of NVRTC's built-in header: the same CUBIN, a shorter front
  // end (bench/RESULTS.md, "Cold start").
  options.flags = {"--minimal"};
  options.flags.insert(options.flags.end(), nvrtc_flags.begin(),
                       nvrtc_flags.end());
  return options;
}

}  // namespace ptxgen::runtime
