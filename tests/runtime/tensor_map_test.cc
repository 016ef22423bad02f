// The tensor-map rules, checked without a driver: each rule of
// cuTensorMapEncodeTiled with its legal edges and the message for breaking it.

#include "ptxgen/runtime/tensor_map.h"

#include <cstdint>
#include <functional>
#include <string>

#include "gtest/gtest.h"

namespace ptxgen::runtime {
namespace {

using ptx::ScalarType;
using ptx::Swizzle;

// A 128 x 64 f16 matrix, row-major, read in 64 x 64 boxes with 128B swizzle:
// the A operand of a K-major GEMM tile.
TensorMapSpec Legal() {
  TensorMapSpec spec;
  spec.element = ScalarType::kF16;
  spec.global_address = 0x7f0000000000;
  spec.dims = {64, 128};
  spec.strides_bytes = {128};
  spec.box = {64, 64};
  spec.swizzle = Swizzle::k128B;
  return spec;
}

struct Case {
  std::string name;
  std::function<void(TensorMapSpec&)> change;
  std::string message;  // empty: legal; else the whole InvalidArgument message
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class TensorMapRuleTest : public testing::TestWithParam<Case> {};

TEST_P(TensorMapRuleTest, NamesTheBrokenRule) {
  const Case& c = GetParam();
  TensorMapSpec spec = Legal();
  c.change(spec);
  const absl::Status status = ValidateTensorMap(spec);
  if (c.message.empty()) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_EQ(status.message(), c.message);
  }
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

constexpr uint64_t k2To32 = uint64_t{1} << 32;
constexpr uint64_t k2To40 = uint64_t{1} << 40;

INSTANTIATE_TEST_SUITE_P(
    Legal, TensorMapRuleTest,
    testing::Values(
        Case{"Base", [](TensorMapSpec&) {}, ""},
        Case{"Rank1",
             [](TensorMapSpec& s) {
               s.dims = {1000};
               s.strides_bytes = {};
               s.box = {256};
               s.swizzle = Swizzle::kNone;
             },
             ""},
        Case{"Rank5",
             [](TensorMapSpec& s) {
               s.dims = {64, 2, 3, 4, 5};
               s.strides_bytes = {128, 256, 768, 3072};
               s.box = {64, 1, 1, 1, 1};
             },
             ""},
        Case{"DimOf2To32", [](TensorMapSpec& s) { s.dims[1] = k2To32; }, ""},
        Case{"DimOf1", [](TensorMapSpec& s) { s.dims[1] = 1; }, ""},
        Case{"StrideJustBelow2To40",
             [](TensorMapSpec& s) { s.strides_bytes[0] = k2To40 - 16; }, ""},
        Case{"StrideOf16", [](TensorMapSpec& s) { s.strides_bytes[0] = 16; },
             ""},
        Case{"BoxOf256", [](TensorMapSpec& s) { s.box[1] = 256; }, ""},
        Case{"BoxOf1", [](TensorMapSpec& s) { s.box[1] = 1; }, ""},
        Case{"BoxLargerThanTheTensor", [](TensorMapSpec& s) { s.box[1] = 200; },
             ""},
        Case{"InnerBoxOf256BytesWithoutSwizzle",
             [](TensorMapSpec& s) {
               s.swizzle = Swizzle::kNone;
               s.box[0] = 128;
             },
             ""},
        Case{"InnerBoxOf16Bytes", [](TensorMapSpec& s) { s.box[0] = 8; }, ""},
        Case{"InnerBoxFills32BSwizzle",
             [](TensorMapSpec& s) {
               s.swizzle = Swizzle::k32B;
               s.box[0] = 16;
             },
             ""},
        Case{"InnerBoxFills64BSwizzle",
             [](TensorMapSpec& s) {
               s.swizzle = Swizzle::k64B;
               s.box[0] = 32;
             },
             ""},
        Case{"Fp8InnerBoxFills128BSwizzle",
             [](TensorMapSpec& s) {
               s.element = ScalarType::kE4M3;
               s.box[0] = 128;
             },
             ""},
        Case{"Tf32InnerBoxFills128BSwizzle",
             [](TensorMapSpec& s) {
               s.element = ScalarType::kTF32;
               s.box[0] = 32;
             },
             ""},
        Case{"ElementStrides1To8",
             [](TensorMapSpec& s) {
               s.element_strides = {1, 8};
             },
             ""},
        Case{"L2Promotion256B",
             [](TensorMapSpec& s) { s.l2_promotion = L2Promotion::k256B; },
             ""}),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    Illegal, TensorMapRuleTest,
    testing::Values(
        Case{"Rank0",
             [](TensorMapSpec& s) {
               s.dims = {};
               s.strides_bytes = {};
               s.box = {};
             },
             "tensor map: rank must be 1..5 (got 0 dims)"},
        Case{"ElementOutsideTheEnumeration",
             [](TensorMapSpec& s) { s.element = static_cast<ScalarType>(42); },
             "tensor map: element 42 is not a ptxgen scalar type"},
        Case{"SwizzleOutsideTheEnumeration",
             [](TensorMapSpec& s) { s.swizzle = static_cast<Swizzle>(9); },
             "tensor map: swizzle 9 is not a swizzle mode"},
        Case{"PromotionOutsideTheEnumeration",
             [](TensorMapSpec& s) {
               s.l2_promotion = static_cast<L2Promotion>(7);
             },
             "tensor map: l2_promotion 7 is not an L2 promotion"},
        Case{"Rank6",
             [](TensorMapSpec& s) {
               s.dims = {64, 2, 2, 2, 2, 2};
               s.strides_bytes = {128, 256, 512, 1024, 2048};
               s.box = {64, 1, 1, 1, 1, 1};
             },
             "tensor map: rank must be 1..5 (got 6 dims)"},
        Case{"StrideForTheInnerDimension",
             [](TensorMapSpec& s) {
               s.strides_bytes = {2, 128};
             },
             "tensor map: rank 2 needs 1 strides_bytes (the strides of "
             "dims[1..]), got 2"},
        Case{"BoxRankDiffers", [](TensorMapSpec& s) { s.box = {64}; },
             "tensor map: box needs one entry per dimension (rank 2), got 1"},
        Case{"ElementStridesRankDiffers",
             [](TensorMapSpec& s) {
               s.element_strides = {1, 1, 1};
             },
             "tensor map: element_strides needs one entry per dimension (rank "
             "2) or none, got 3"},
        Case{"NullAddress", [](TensorMapSpec& s) { s.global_address = 0; },
             "tensor map: global_address is null"},
        Case{"AddressAlignedTo8",
             [](TensorMapSpec& s) { s.global_address = 0x7f0000000008; },
             "tensor map: global_address 0x7f0000000008 must be 16-byte "
             "aligned"},
        Case{"DimOf0", [](TensorMapSpec& s) { s.dims[1] = 0; },
             "tensor map: dims[1] = 0 must be in 1..2^32"},
        Case{"DimAbove2To32", [](TensorMapSpec& s) { s.dims[0] = k2To32 + 1; },
             "tensor map: dims[0] = 4294967297 must be in 1..2^32"},
        Case{"StrideNotAMultipleOf16",
             [](TensorMapSpec& s) { s.strides_bytes[0] = 136; },
             "tensor map: strides_bytes[0] = 136 must be a multiple of 16"},
        Case{"StrideOf8", [](TensorMapSpec& s) { s.strides_bytes[0] = 8; },
             "tensor map: strides_bytes[0] = 8 must be a multiple of 16"},
        Case{"StrideOf2To40",
             [](TensorMapSpec& s) { s.strides_bytes[0] = k2To40; },
             "tensor map: strides_bytes[0] = 1099511627776 must be below 2^40"},
        Case{"BoxOf0", [](TensorMapSpec& s) { s.box[1] = 0; },
             "tensor map: box[1] = 0 must be in 1..256"},
        Case{"BoxOf257", [](TensorMapSpec& s) { s.box[1] = 257; },
             "tensor map: box[1] = 257 must be in 1..256"},
        Case{"InnerBoxNotAMultipleOf16Bytes",
             [](TensorMapSpec& s) { s.box[0] = 12; },
             "tensor map: the inner box extent (box[0] = 12 x 2-byte f16 = 24 "
             "bytes) must be a multiple of 16 bytes"},
        Case{"InnerBoxOf8Bytes",
             [](TensorMapSpec& s) {
               s.element = ScalarType::kF32;
               s.box[0] = 2;
             },
             "tensor map: the inner box extent (box[0] = 2 x 4-byte f32 = 8 "
             "bytes) must be a multiple of 16 bytes"},
        Case{"InnerBoxBeyond128BSwizzle",
             [](TensorMapSpec& s) { s.box[0] = 128; },
             "tensor map: the inner box extent (box[0] = 128 x 2-byte f16 = "
             "256 bytes) must fit the 128B swizzle span"},
        Case{"InnerBoxBeyond64BSwizzle",
             [](TensorMapSpec& s) {
               s.swizzle = Swizzle::k64B;
               s.element = ScalarType::kBF16;
             },
             "tensor map: the inner box extent (box[0] = 64 x 2-byte bf16 = "
             "128 bytes) must fit the 64B swizzle span"},
        Case{"InnerBoxBeyond32BSwizzle",
             [](TensorMapSpec& s) {
               s.swizzle = Swizzle::k32B;
               s.element = ScalarType::kS8;
               s.box[0] = 48;
             },
             "tensor map: the inner box extent (box[0] = 48 x 1-byte s8 = 48 "
             "bytes) must fit the 32B swizzle span"},
        Case{"ElementStrideOf0",
             [](TensorMapSpec& s) {
               s.element_strides = {0, 1};
             },
             "tensor map: element_strides[0] = 0 must be in 1..8"},
        Case{"ElementStrideOf9",
             [](TensorMapSpec& s) {
               s.element_strides = {1, 9};
             },
             "tensor map: element_strides[1] = 9 must be in 1..8"}),
    CaseName);

TEST(TensorMap, MapsEveryElementTypeToWhatTmaCopies) {
  EXPECT_EQ(TensorMapDataType(ScalarType::kF16),
            CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  EXPECT_EQ(TensorMapDataType(ScalarType::kBF16),
            CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(TensorMapDataType(ScalarType::kTF32),
            CU_TENSOR_MAP_DATA_TYPE_TFLOAT32);
  EXPECT_EQ(TensorMapDataType(ScalarType::kF32),
            CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(TensorMapDataType(ScalarType::kS32), CU_TENSOR_MAP_DATA_TYPE_INT32);
  for (ScalarType byte : {ScalarType::kE4M3, ScalarType::kE5M2, ScalarType::kS8,
                          ScalarType::kU8}) {
    EXPECT_EQ(TensorMapDataType(byte), CU_TENSOR_MAP_DATA_TYPE_UINT8)
        << ptx::PtxName(byte);
  }
}

TEST(TensorMap, EncodeValidatesBeforeLookingForTheDriver) {
  TensorMapSpec spec = Legal();
  spec.box[1] = 300;
  const absl::StatusOr<CUtensorMap> map = EncodeTensorMap(spec);
  EXPECT_TRUE(absl::IsInvalidArgument(map.status())) << map.status();
  EXPECT_EQ(map.status().message(),
            "tensor map: box[1] = 300 must be in 1..256");
}

}  // namespace
}  // namespace ptxgen::runtime
