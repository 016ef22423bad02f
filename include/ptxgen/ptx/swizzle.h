#ifndef PTXGEN_PTX_SWIZZLE_H_
#define PTXGEN_PTX_SWIZZLE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::ptx {

// Shared-memory swizzle modes. TMA writes tiles in these patterns and the
// wgmma matrix descriptor reads them back: both sides use this one enum.
enum class Swizzle { kNone, k32B, k64B, k128B };

// The pattern's span in bytes: 0 for none, else 32, 64 or 128.
int SwizzleBytes(Swizzle swizzle);

// "none", "32B", "64B", "128B".
absl::string_view SwizzleName(Swizzle swizzle);
absl::StatusOr<Swizzle> ParseSwizzle(absl::string_view name);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_SWIZZLE_H_
