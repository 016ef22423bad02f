#include "ptxgen/runtime/tensor_map.h"

#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/tma.h"

namespace ptxgen::runtime {
namespace {

constexpr uint64_t kMaxDim = ptx::kMaxTensorDimension;
constexpr uint64_t kStrideLimit = ptx::kTensorStrideLimitBytes;
constexpr uint64_t kAlignment = ptx::kTensorGlobalAlignmentBytes;
constexpr uint32_t kMaxElementStride = 8;

absl::Status Illegal(absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("tensor map: ", rule));
}

absl::Status ValidateRank(const TensorMapSpec& spec) {
  const size_t rank = spec.dims.size();
  if (rank < ptx::kMinTensorRank || rank > ptx::kMaxTensorRank) {
    return Illegal(absl::StrCat("rank must be ", ptx::kMinTensorRank, "..",
                                ptx::kMaxTensorRank, " (got ", rank, " dims)"));
  }
  if (spec.strides_bytes.size() != rank - 1) {
    return Illegal(
        absl::StrCat("rank ", rank, " needs ", rank - 1,
                     " strides_bytes (the strides of dims[1..]), got ",
                     spec.strides_bytes.size()));
  }
  if (spec.box.size() != rank) {
    return Illegal(absl::StrCat("box needs one entry per dimension (rank ",
                                rank, "), got ", spec.box.size()));
  }
  if (!spec.element_strides.empty() && spec.element_strides.size() != rank) {
    return Illegal(
        absl::StrCat("element_strides needs one entry per dimension (rank ",
                     rank, ") or none, got ", spec.element_strides.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateGlobal(const TensorMapSpec& spec) {
  if (spec.global_address == 0) return Illegal("global_address is null");
  if (spec.global_address % kAlignment != 0) {
    return Illegal(absl::StrCat("global_address 0x",
                                absl::Hex(spec.global_address),
                                " must be 16-byte aligned"));
  }
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    if (spec.dims[i] < 1 || spec.dims[i] > kMaxDim) {
      return Illegal(absl::StrCat("dims[", i, "] = ", spec.dims[i],
                                  " must be in 1..2^32"));
    }
  }
  for (size_t i = 0; i < spec.strides_bytes.size(); ++i) {
    const uint64_t stride = spec.strides_bytes[i];
    if (stride % kAlignment != 0) {
      return Illegal(absl::StrCat("strides_bytes[", i, "] = ", stride,
                                  " must be a multiple of 16"));
    }
    if (stride >= kStrideLimit) {
      return Illegal(absl::StrCat("strides_bytes[", i, "] = ", stride,
                                  " must be below 2^40"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateBox(const TensorMapSpec& spec) {
  for (size_t i = 0; i < spec.box.size(); ++i) {
    if (spec.box[i] < 1 || spec.box[i] > uint32_t{ptx::kMaxTensorBoxExtent}) {
      return Illegal(absl::StrCat("box[", i, "] = ", spec.box[i],
                                  " must be in 1..", ptx::kMaxTensorBoxExtent));
    }
  }
  const int element_bytes = ptx::SizeInBytes(spec.element);
  const uint64_t inner_bytes = uint64_t{spec.box[0]} * element_bytes;
  const std::string inner = absl::StrCat(
      "the inner box extent (box[0] = ", spec.box[0], " x ", element_bytes,
      "-byte ", ptx::PtxName(spec.element), " = ", inner_bytes, " bytes)");
  if (inner_bytes % kAlignment != 0) {
    return Illegal(absl::StrCat(inner, " must be a multiple of 16 bytes"));
  }
  const int span = ptx::SwizzleBytes(spec.swizzle);
  if (span != 0 && inner_bytes > static_cast<uint64_t>(span)) {
    return Illegal(absl::StrCat(inner, " must fit the ",
                                ptx::SwizzleName(spec.swizzle),
                                " swizzle span"));
  }
  for (size_t i = 0; i < spec.element_strides.size(); ++i) {
    const uint32_t stride = spec.element_strides[i];
    if (stride < 1 || stride > kMaxElementStride) {
      return Illegal(absl::StrCat("element_strides[", i, "] = ", stride,
                                  " must be in 1..8"));
    }
  }
  return absl::OkStatus();
}

CUtensorMapSwizzle ToDriver(ptx::Swizzle swizzle) {
  switch (swizzle) {
    case ptx::Swizzle::kNone:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case ptx::Swizzle::k32B:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case ptx::Swizzle::k64B:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case ptx::Swizzle::k128B:
      return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

CUtensorMapL2promotion ToDriver(L2Promotion promotion) {
  switch (promotion) {
    case L2Promotion::kNone:
      return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case L2Promotion::k64B:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case L2Promotion::k128B:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case L2Promotion::k256B:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

}  // namespace

CUtensorMapDataType TensorMapDataType(ptx::ScalarType element) {
  switch (element) {
    case ptx::ScalarType::kF16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case ptx::ScalarType::kBF16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case ptx::ScalarType::kTF32:
      return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    case ptx::ScalarType::kF32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case ptx::ScalarType::kS32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case ptx::ScalarType::kE4M3:
    case ptx::ScalarType::kE5M2:
    case ptx::ScalarType::kS8:
    case ptx::ScalarType::kU8:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

// Values outside the enumerations (casts) would be encoded as something
// else without a word.
absl::Status ValidateEnumerations(const TensorMapSpec& spec) {
  if (!ptx::IsKnownScalarType(spec.element)) {
    return Illegal(absl::StrCat("element ", static_cast<int>(spec.element),
                                " is not a ptxgen scalar type"));
  }
  if (!ptx::IsKnownSwizzle(spec.swizzle)) {
    return Illegal(absl::StrCat("swizzle ", static_cast<int>(spec.swizzle),
                                " is not a swizzle mode"));
  }
  const int promotion = static_cast<int>(spec.l2_promotion);
  if (promotion < static_cast<int>(L2Promotion::kNone) ||
      promotion > static_cast<int>(L2Promotion::k256B)) {
    return Illegal(
        absl::StrCat("l2_promotion ", promotion, " is not an L2 promotion"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTensorMap(const TensorMapSpec& spec) {
  if (absl::Status known = ValidateEnumerations(spec); !known.ok())
    return known;
  if (absl::Status rank = ValidateRank(spec); !rank.ok()) return rank;
  if (absl::Status global = ValidateGlobal(spec); !global.ok()) return global;
  return ValidateBox(spec);
}

absl::StatusOr<CUtensorMap> EncodeTensorMap(const TensorMapSpec& spec) {
  if (absl::Status valid = ValidateTensorMap(spec); !valid.ok()) return valid;
  absl::StatusOr<const Driver*> driver = Driver::Get();
  if (!driver.ok()) return driver.status();
  const std::vector<uint32_t> element_strides =
      spec.element_strides.empty() ? std::vector<uint32_t>(spec.box.size(), 1)
                                   : spec.element_strides;
  CUtensorMap map;
  if (absl::Status status = (*driver)->Check(
          (*driver)->cuTensorMapEncodeTiled(
              &map, TensorMapDataType(spec.element), spec.dims.size(),
              reinterpret_cast<void*>(spec.global_address), spec.dims.data(),
              spec.strides_bytes.data(), spec.box.data(),
              element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
              ToDriver(spec.swizzle), ToDriver(spec.l2_promotion),
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled");
      !status.ok()) {
    return status;
  }
  return map;
}

}  // namespace ptxgen::runtime
