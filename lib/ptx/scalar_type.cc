#include "ptxgen/ptx/scalar_type.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptxgen::ptx {
namespace {

struct TypeInfo {
  ScalarType type;
  absl::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 9> kTypes = {{
    {ScalarType::kF16, "f16", 16},
    {ScalarType::kBF16, "bf16", 16},
    {ScalarType::kTF32, "tf32", 32},
    {ScalarType::kE4M3, "e4m3", 8},
    {ScalarType::kE5M2, "e5m2", 8},
    {ScalarType::kS8, "s8", 8},
    {ScalarType::kU8, "u8", 8},
    {ScalarType::kF32, "f32", 32},
    {ScalarType::kS32, "s32", 32},
}};

// The row of `type`; null for a value outside the enumeration (a cast).
const TypeInfo* Find(ScalarType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

bool IsFp8(ScalarType type) {
  return type == ScalarType::kE4M3 || type == ScalarType::kE5M2;
}

bool IsInt8(ScalarType type) {
  return type == ScalarType::kS8 || type == ScalarType::kU8;
}

bool IsKnownScalarType(ScalarType type) { return Find(type) != nullptr; }

absl::string_view PtxName(ScalarType type) {
  // An unknown value must not pass for a real type in a message.
  const TypeInfo* info = Find(type);
  return info != nullptr ? info->name : "unknown";
}

// An unknown value sizes as f16, so that no caller divides by zero.
int SizeInBits(ScalarType type) {
  const TypeInfo* info = Find(type);
  return (info != nullptr ? *info : kTypes[0]).bits;
}

std::vector<std::string> ScalarTypeNames() {
  std::vector<std::string> names;
  for (const TypeInfo& info : kTypes) names.emplace_back(info.name);
  return names;
}

absl::StatusOr<ScalarType> ParseScalarType(absl::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown element type '", name,
                   "' (known: ", absl::StrJoin(ScalarTypeNames(), ", "), ")"));
}

}  // namespace ptxgen::ptx
