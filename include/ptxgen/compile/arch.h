#ifndef PTXGEN_COMPILE_ARCH_H_
#define PTXGEN_COMPILE_ARCH_H_

// GPU architecture names as NVRTC and the driver spell them: "sm_90a" (a
// CUBIN for compute capability 9.0 with its architecture-specific
// features), "compute_80" (PTX), "sm_100f" (family-specific). One parser for
// the compiler's rule (a CUBIN needs a real architecture) and the runtime's
// (which devices run it).

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// An NVRTC architecture name taken apart: compute_XY (PTX) or sm_XY
// (CUBIN), with an optional feature suffix.
struct ArchName {
  bool is_ptx = false;  // compute_XY; sm_XY is a CUBIN
  int major = 0;
  int minor = 0;
  char variant = '\0';  // 'a' (architecture-specific), 'f' (family) or none
};

// InvalidArgument, naming the expected form, for anything but sm_XY or
// compute_XY (two or three digits) with an optional a or f suffix.
absl::StatusOr<ArchName> ParseArchName(absl::string_view name);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_ARCH_H_
