#ifndef PTXGEN_BASE_MEMORY_REGION_H_
#define PTXGEN_BASE_MEMORY_REGION_H_

// The bytes a strided tensor occupies in device memory, to tell before a
// launch whether an output shares memory with another operand: the kernel
// would then race on it (read what it overwrites, or write one element
// from two places). Plain arithmetic on addresses: no driver, no
// allocation, cheap enough for every Run.

#include <array>
#include <cstdint>
#include <string>

namespace ptxgen::base {

// A tensor as its kernel walks it: `run` contiguous elements of
// `element_bytes` each, repeated along up to three outer dimensions of
// `count` steps of `stride` elements (in any order; a count of 1 or a
// stride of 0 adds no bytes).
struct MemoryRegion {
  struct Dimension {
    int64_t count = 1;
    int64_t stride = 0;
  };
  uint64_t address = 0;  // of the first element
  int64_t element_bytes = 1;
  int64_t run = 0;  // 0: the region is empty
  std::array<Dimension, 3> outer = {};

  // `bytes` contiguous bytes from `address` (a scalar, a workspace).
  static MemoryRegion Bytes(uint64_t address, int64_t bytes) {
    return {address, 1, bytes, {}};
  }
};

// Whether two regions may share a byte, as far as can be told without
// walking every run: false when their address ranges are disjoint; true
// when both are dense (no gaps, so a shared range is shared memory), when
// one's first or last byte lies in the other, or when either's dimensions
// interleave (a stride shorter than what lies inside it) so that
// membership cannot be read off its strides. Views that interleave
// without touching (out as one column slice of a buffer, an input another)
// are told apart exactly when their first and last bytes say so.
bool MayShareMemory(const MemoryRegion& a, const MemoryRegion& b);

// Whether the two describe the same bytes walked the same way: an output
// that is an input in place (a GEMM's D = C).
bool SameRegion(const MemoryRegion& a, const MemoryRegion& b);

// An operand of a launch, the memory it occupies and whether the kernel
// writes it. `in_place_of`: the name of an operand this one may be exactly
// (SameRegion), an update in place (D of C); null for none.
struct OperandRegion {
  const char* name = "";
  MemoryRegion region;
  bool written = false;
  const char* in_place_of = nullptr;
};

// The first pair (output, other) of `operands` that may share memory
// (MayShareMemory), an output against every other operand, each pair of
// outputs once; a pair that is an update in place passes. Their indexes,
// or {-1, -1} when all are apart.
struct SharedPair {
  int output = -1;
  int other = -1;
};
SharedPair FirstSharedPair(const OperandRegion* operands, int count);

// What Run says of such a pair: "O (at 0x...) shares memory with Q (at
// 0x...): the kernel would race on it; give each output memory of its own".
std::string SharedPairText(const OperandRegion& output,
                           const OperandRegion& other);

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_MEMORY_REGION_H_
