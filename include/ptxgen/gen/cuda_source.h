#ifndef PTXGEN_GEN_CUDA_SOURCE_H_
#define PTXGEN_GEN_CUDA_SOURCE_H_

// Small text helpers shared by the kernel generators.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::gen {

// Prefixes every non-empty line of `text` with `spaces` spaces.
std::string Indent(absl::string_view text, int spaces);

// The C++ type that carries a register of this class in generated sources.
// Generated code includes no headers, so these are built-in types only.
// Predicates travel as 0/1 in an unsigned (see ptx/statement.h).
const char* CxxTypeName(ptx::RegType type);

// A `__device__ __forceinline__` function whose body is the statement's
// inline asm, with one parameter per slot named by its role: read slots by
// value (arrays by const reference), written slots by reference.
absl::StatusOr<std::string> DeviceFunction(absl::string_view name,
                                           const ptx::Statement& statement);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_CUDA_SOURCE_H_
