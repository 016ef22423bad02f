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
//   (T* out, unsigned long long count, unsigned seed, float scale)
// that writes count elements, each a hash of (seed, index) alone (the same
// seed always gives the same data, whatever the launch shape). T is the
// element's storage and the values are:
//   f16, bf16 (unsigned short): uniform in [-scale, scale), rounded to
//     nearest;
//   e4m3, e5m2 (unsigned char): the same, rounded to nearest saturating
//     (satfinite: beyond the largest finite value, that value);
//   f32, tf32 (float): uniform in [-scale, scale); tf32 as f32 values, not
//     rounded to tf32 (the tensor cores read only their upper 19 bits);
//   s8 (unsigned char, two's complement): uniform in [-scale, scale]
//     rounded to the nearest integer (the two ends half as likely), for
//     scale in 0..127;
//   u8 (unsigned char): uniform in [0, scale] rounded to the nearest
//     integer (the ends half as likely), for scale in 0..255.
// The kernel does not check scale (FillRandom does). s32 is refused.
absl::StatusOr<std::string> RandomFillSource(ptx::ScalarType element);

// The name of the kernel in ByteFillSource().
std::string ByteFillKernelName();

// Source of an extern "C" kernel
//   (unsigned char* out, unsigned long long count, unsigned value)
// that sets count bytes to value's low byte: a memset of 8-bit elements in
// stream order, for any address and count (the driver's only 8-bit memset
// that ptxgen loads is synchronous).
std::string ByteFillSource();

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_FILL_KERNEL_H_
