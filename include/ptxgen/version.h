#ifndef PTXGEN_VERSION_H_
#define PTXGEN_VERSION_H_

namespace ptxgen {

// Part of every kernel-cache key and autotuning record: a new version never
// reuses binaries or choices made by an older one.
inline constexpr char kVersion[] = "0.1.0";

}  // namespace ptxgen

#endif  // PTXGEN_VERSION_H_
