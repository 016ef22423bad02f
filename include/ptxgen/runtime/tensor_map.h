#ifndef PTXGEN_RUNTIME_TENSOR_MAP_H_
#define PTXGEN_RUNTIME_TENSOR_MAP_H_

// TMA tensor maps (cuTensorMapEncodeTiled), validated before the driver sees
// them so that a bad map fails with the rule it breaks instead of a bare
// CUDA_ERROR_INVALID_VALUE.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// The granularity at which L2 fetches the map's lines from memory.
enum class L2Promotion { kNone, k64B, k128B, k256B };

// A tiled, non-interleaved tensor in global memory and the box one TMA copy
// moves. Every per-dimension list is innermost dimension first. Elements of
// a box outside the tensor are read as zeros and not written.
struct TensorMapSpec {
  ptx::ScalarType element = ptx::ScalarType::kF16;
  uint64_t global_address = 0;  // device address, 16-byte aligned
  std::vector<uint64_t> dims;   // elements per dimension; the rank is 1..5
  // Byte distance between consecutive indices of dims[1], dims[2], ...
  // (rank - 1 entries; the innermost dimension is dense).
  std::vector<uint64_t> strides_bytes;
  std::vector<uint32_t> box;  // elements per dimension of one copy
  // Step between the elements a copy takes, per dimension; empty means 1.
  std::vector<uint32_t> element_strides;
  // The shared-memory pattern the box is written in; the wgmma descriptor
  // that reads it back must name the same one.
  ptx::Swizzle swizzle = ptx::Swizzle::kNone;
  L2Promotion l2_promotion = L2Promotion::kNone;
};

// TMA moves bytes: 8-bit types travel as UINT8, tf32 as TFLOAT32.
CUtensorMapDataType TensorMapDataType(ptx::ScalarType element);

// Checks `spec` against cuTensorMapEncodeTiled's rules (rank 1..5; address
// 16-byte aligned; dims 1..2^32; strides multiples of 16 below 2^40; box
// 1..256 per dimension with its inner extent a multiple of 16 bytes and
// within the swizzle span; element strides 1..8). InvalidArgument names the
// broken rule. Pure: needs no driver.
absl::Status ValidateTensorMap(const TensorMapSpec& spec);

// Validates, then encodes through the driver. Pass the result to a kernel as
// a `const __grid_constant__` parameter.
absl::StatusOr<CUtensorMap> EncodeTensorMap(const TensorMapSpec& spec);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_TENSOR_MAP_H_
