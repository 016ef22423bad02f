#include "ptxgen/ptx/swizzle.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {

int SwizzleBytes(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::kNone:
      return 0;
    case Swizzle::k32B:
      return 32;
    case Swizzle::k64B:
      return 64;
    case Swizzle::k128B:
      return 128;
  }
  return 0;
}

absl::string_view SwizzleName(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::kNone:
      return "none";
    case Swizzle::k32B:
      return "32B";
    case Swizzle::k64B:
      return "64B";
    case Swizzle::k128B:
      return "128B";
  }
  return "none";
}

absl::StatusOr<Swizzle> ParseSwizzle(absl::string_view name) {
  for (Swizzle swizzle :
       {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
    if (SwizzleName(swizzle) == name) return swizzle;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown swizzle '", name, "' (known: none, 32B, 64B, 128B)"));
}

}  // namespace ptxgen::ptx
