#ifndef PTXGEN_PTX_SCALAR_TYPE_H_
#define PTXGEN_PTX_SCALAR_TYPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::ptx {

// Element types that appear in Hopper matrix instructions.
enum class ScalarType {
  kF16,
  kBF16,
  kTF32,
  kE4M3,
  kE5M2,
  kS8,
  kU8,
  kF32,
  kS32,
};

// False for a value outside the enumeration (a cast).
bool IsKnownScalarType(ScalarType type);

// The PTX type suffix without the dot: "f16", "bf16", "e4m3", "s32";
// "unknown" for a value outside the enumeration.
absl::string_view PtxName(ScalarType type);

// Whether `type` is one of the 8-bit floats (e4m3, e5m2).
bool IsFp8(ScalarType type);
// Whether `type` is one of the 8-bit integers (s8, u8).
bool IsInt8(ScalarType type);

// Storage size of one element in bits (tf32 is stored in 32 bits).
int SizeInBits(ScalarType type);
inline int SizeInBytes(ScalarType type) { return SizeInBits(type) / 8; }

// Every PTX name ParseScalarType accepts, in declaration order.
std::vector<std::string> ScalarTypeNames();

// Parses the PTX name ("f16", "bf16", ...); the message lists the legal names.
absl::StatusOr<ScalarType> ParseScalarType(absl::string_view name);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_SCALAR_TYPE_H_
