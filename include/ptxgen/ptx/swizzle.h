#ifndef PTXGEN_PTX_SWIZZLE_H_
#define PTXGEN_PTX_SWIZZLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::ptx {

// Shared-memory swizzle modes. TMA writes tiles in these patterns and the
// wgmma matrix descriptor reads them back: both sides use this one enum.
enum class Swizzle { kNone, k32B, k64B, k128B };

// False for a value outside the enumeration (a cast).
bool IsKnownSwizzle(Swizzle swizzle);

// The pattern's span in bytes: 0 for none, else 32, 64 or 128.
int SwizzleBytes(Swizzle swizzle);

// "none", "32B", "64B", "128B"; "unknown" outside the enumeration.
absl::string_view SwizzleName(Swizzle swizzle);
absl::StatusOr<Swizzle> ParseSwizzle(absl::string_view name);

// Where byte `offset` of a swizzled region really lives: the 16-byte chunk
// bits [4, 4+b) are XORed with bits [7, 7+b), b = 1, 2, 3 for 32B, 64B,
// 128B. The region must be aligned to 8 x span bytes.
uint32_t SwizzleOffset(uint32_t offset, Swizzle swizzle);

// The same mapping as a C++ expression over an unsigned offset expression.
std::string SwizzleOffsetExpression(const std::string& offset, Swizzle swizzle);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_SWIZZLE_H_
