#ifndef PTXGEN_GEN_FILL_KERNEL_H_
#define PTXGEN_GEN_FILL_KERNEL_H_

// Device-side test data: filling large operands on the GPU is far faster
// than generating them on the host and copying them over.

#include <string>

#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::gen {

// The name of the kernel in RandomFillSource(element).
std::string RandomFillKernelName(ptx::ScalarType element);

// Source of an extern "C" kernel
//   (unsigned short* out, unsigned long long count, unsigned seed, float scale)
// that writes count f16 or bf16 values uniform in [-scale, scale), each a
// hash of (seed, index): the same seed always gives the same data.
absl::StatusOr<std::string> RandomFillSource(ptx::ScalarType element);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_FILL_KERNEL_H_
