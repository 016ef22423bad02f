#include "ptxgen/ptx/swizzle.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::ptx {

bool IsKnownSwizzle(Swizzle swizzle) {
  return swizzle == Swizzle::kNone || SwizzleBytes(swizzle) != 0;
}

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
  return "unknown";  // a value outside the enumeration (a cast)
}

absl::StatusOr<Swizzle> ParseSwizzle(absl::string_view name) {
  for (Swizzle swizzle :
       {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
    if (SwizzleName(swizzle) == name) return swizzle;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown swizzle '", name, "' (known: none, 32B, 64B, 128B)"));
}

namespace {

// Bits of the 16-byte chunk index that the pattern XORs: 1, 2 or 3.
int ChunkBits(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::kNone:
      return 0;
    case Swizzle::k32B:
      return 1;
    case Swizzle::k64B:
      return 2;
    case Swizzle::k128B:
      return 3;
  }
  return 0;
}

}  // namespace

uint32_t SwizzleOffset(uint32_t offset, Swizzle swizzle) {
  const uint32_t mask = (1u << ChunkBits(swizzle)) - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

std::string SwizzleOffsetExpression(const std::string& offset,
                                    Swizzle swizzle) {
  if (swizzle == Swizzle::kNone) return offset;
  const uint32_t mask = (1u << ChunkBits(swizzle)) - 1;
  return absl::StrCat("((", offset, ") ^ ((((", offset, ") >> 7) & ", mask,
                      "u) << 4))");
}

}  // namespace ptxgen::ptx
