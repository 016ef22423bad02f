// The wgmma shared-memory matrix descriptor and the tile layouts it reads.
#include "ptxgen/ptx/matrix_descriptor.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

TEST(MatrixDescriptorTest, KnownValueForA128ByteSwizzledKMajorTile) {
  MatrixDescriptor fields;
  fields.leading_byte_offset = 16;
  fields.stride_byte_offset = 1024;
  fields.swizzle = Swizzle::k128B;
  EXPECT_EQ(*EncodeMatrixDescriptor(fields), 0x4000004000010000ull);
  fields.start_address = 0x400;
  fields.swizzle = Swizzle::k32B;
  EXPECT_EQ(*EncodeMatrixDescriptor(fields), 0xC000004000010040ull);
}

// Found by the descriptor fuzzer: a value outside the enum was encoded as
// "no swizzle", a descriptor that would not decode back to its fields.
TEST(MatrixDescriptorTest, AnUnknownSwizzleIsRefusedNotEncodedAsNone) {
  MatrixDescriptor fields;
  fields.swizzle = static_cast<Swizzle>(7);
  const absl::StatusOr<uint64_t> encoded = EncodeMatrixDescriptor(fields);
  ASSERT_FALSE(encoded.ok());
  EXPECT_TRUE(
      absl::StrContains(encoded.status().message(), "unknown swizzle 7"));
}

TEST(MatrixDescriptorTest, EncodeDecodeRoundTrip) {
  std::mt19937 random(7);
  const Swizzle swizzles[] = {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B,
                              Swizzle::k128B};
  for (int i = 0; i < 1000; ++i) {
    MatrixDescriptor fields;
    fields.start_address = (random() % (1 << 14)) * 16;
    fields.leading_byte_offset = (random() % (1 << 14)) * 16;
    fields.stride_byte_offset = (random() % (1 << 14)) * 16;
    fields.base_offset = random() % 8;
    fields.swizzle = swizzles[random() % 4];
    absl::StatusOr<uint64_t> encoded = EncodeMatrixDescriptor(fields);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    EXPECT_EQ(DecodeMatrixDescriptor(*encoded), fields);
  }
}

TEST(MatrixDescriptorTest, FieldsOutsideTheEncodingAreRefused) {
  MatrixDescriptor fields;
  fields.start_address = 8;
  EXPECT_EQ(EncodeMatrixDescriptor(fields).status().message(),
            "matrix descriptor: start address must be a multiple of 16 below "
            "2^18 (262144), not 8");
  fields.start_address = 0;
  fields.stride_byte_offset = 1 << 18;
  EXPECT_EQ(EncodeMatrixDescriptor(fields).status().message(),
            "matrix descriptor: stride byte offset must be a multiple of 16 "
            "below 2^18 (262144), not 262144");
  fields.stride_byte_offset = 0;
  fields.base_offset = 8;
  EXPECT_EQ(EncodeMatrixDescriptor(fields).status().message(),
            "matrix descriptor: base offset must be in 0..7, not 8");
}

TEST(MatrixDescriptorTest, AddressFieldExpressionMasksAndShifts) {
  EXPECT_EQ(DescriptorAddressFieldExpression("smem + 64"),
            "((unsigned long long)(((smem + 64) & 0x3ffff) >> 4) << 0)");
}

TEST(MatrixDescriptorTest, AddressDeltaMovesTheStartAddressField) {
  MatrixDescriptor at_0x400;
  at_0x400.start_address = 0x400;
  MatrixDescriptor at_0x460 = at_0x400;
  at_0x460.start_address = 0x460;
  EXPECT_EQ(*EncodeMatrixDescriptor(at_0x400) + DescriptorAddressDelta(0x60),
            *EncodeMatrixDescriptor(at_0x460));
}

struct LayoutCase {
  SharedTile tile;
  int span, columns, column_bytes, leading, stride, alignment, box_inner;
};

SharedTile Tile(ScalarType type, int mn, int k, MajorOrder major,
                Swizzle swizzle) {
  return SharedTile{type, mn, k, major, swizzle};
}

TEST(TileLayoutTest, DerivesSpansAndOffsetsForEachLayout) {
  constexpr auto kK = MajorOrder::kK;
  constexpr auto kMN = MajorOrder::kMN;
  constexpr auto kF16 = ScalarType::kF16;
  const LayoutCase cases[] = {
      // K-major, swizzled: stride = one 8-row pattern, leading unused (16).
      {Tile(kF16, 128, 64, kK, Swizzle::k128B), 128, 1, 16384, 16, 1024, 1024,
       64},
      {Tile(kF16, 64, 32, kK, Swizzle::k64B), 64, 1, 4096, 16, 512, 512, 32},
      {Tile(kF16, 64, 16, kK, Swizzle::k32B), 32, 1, 2048, 16, 256, 256, 16},
      {Tile(ScalarType::kE4M3, 256, 128, kK, Swizzle::k128B), 128, 1, 32768, 16,
       1024, 1024, 128},
      {Tile(ScalarType::kTF32, 64, 64, kK, Swizzle::k128B), 128, 2, 8192, 16,
       1024, 1024, 32},
      // K-major, no swizzle: core matrices; leading steps K columns.
      {Tile(kF16, 64, 64, kK, Swizzle::kNone), 16, 8, 1024, 1024, 128, 16, 8},
      // MN-major, swizzled: leading steps MN columns, stride steps 8 K rows.
      {Tile(kF16, 64, 16, kMN, Swizzle::k128B), 128, 1, 2048, 2048, 1024, 1024,
       64},
      {Tile(ScalarType::kBF16, 256, 64, kMN, Swizzle::k64B), 64, 8, 4096, 4096,
       512, 512, 32},
      // MN-major, no swizzle: leading steps 8 K rows, stride steps MN columns.
      {Tile(kF16, 128, 16, kMN, Swizzle::kNone), 16, 16, 256, 128, 256, 16, 8},
  };
  for (const LayoutCase& c : cases) {
    absl::StatusOr<TileLayout> layout = DescribeTile(c.tile);
    ASSERT_TRUE(layout.ok()) << layout.status();
    SCOPED_TRACE(testing::Message()
                 << c.tile.mn_extent << "x" << c.tile.k_extent << " "
                 << SwizzleName(c.tile.swizzle));
    EXPECT_EQ(layout->span_bytes, c.span);
    EXPECT_EQ(layout->columns, c.columns);
    EXPECT_EQ(layout->column_bytes, c.column_bytes);
    EXPECT_EQ(layout->tile_bytes, c.columns * c.column_bytes);
    EXPECT_EQ(layout->descriptor.leading_byte_offset, c.leading);
    EXPECT_EQ(layout->descriptor.stride_byte_offset, c.stride);
    EXPECT_EQ(layout->descriptor.swizzle, c.tile.swizzle);
    EXPECT_EQ(layout->alignment_bytes, c.alignment);
    EXPECT_EQ(layout->box_inner_elements, c.box_inner);
  }
}

TEST(TileLayoutTest, RefusesTilesWgmmaCannotRead) {
  const std::pair<SharedTile, const char*> cases[] = {
      {Tile(ScalarType::kE4M3, 64, 32, MajorOrder::kMN, Swizzle::k128B),
       "shared tile 64x32 e4m3 MN-major 128B: only f16/bf16 tiles may be "
       "MN-major (wgmma transposes no other type)"},
      {Tile(ScalarType::kF16, 64, 48, MajorOrder::kK, Swizzle::k128B),
       "shared tile 64x48 f16 K-major 128B: the contiguous K extent (96 bytes) "
       "must be a multiple of the 128-byte span of this layout"},
      {Tile(ScalarType::kF16, 60, 64, MajorOrder::kK, Swizzle::k128B),
       "shared tile 60x64 f16 K-major 128B: the MN extent must be a multiple "
       "of 8 (the rows of a core matrix)"},
      {Tile(ScalarType::kF16, 64, 8, MajorOrder::kK, Swizzle::kNone),
       "shared tile 64x8 f16 K-major none: the K extent must be a multiple of "
       "the instruction K (16)"},
      {Tile(ScalarType::kF32, 64, 16, MajorOrder::kK, Swizzle::kNone),
       "shared tile 64x16 f32 K-major none: not a wgmma input type"},
      {Tile(ScalarType::kF16, 0, 16, MajorOrder::kK, Swizzle::kNone),
       "shared tile 0x16 f16 K-major none: extents must be positive"},
  };
  for (const auto& [tile, message] : cases) {
    EXPECT_EQ(DescribeTile(tile).status().message(), message);
  }
  // Values outside the enumerations (casts) are named, not divided by.
  EXPECT_EQ(DescribeTile(Tile(ScalarType::kF16, 64, 64, MajorOrder::kK,
                              static_cast<Swizzle>(7)))
                .status()
                .message(),
            "shared tile 64x64 f16 K-major unknown: unknown swizzle");
  EXPECT_EQ(DescribeTile(Tile(ScalarType::kE4M3, 64, 64,
                              static_cast<MajorOrder>(2), Swizzle::k128B))
                .status()
                .message(),
            "shared tile 64x64 e4m3 MN-major 128B: unknown major order");
  EXPECT_EQ(DescribeTile(Tile(static_cast<ScalarType>(42), 64, 64,
                              MajorOrder::kK, Swizzle::k128B))
                .status()
                .message(),
            "shared tile 64x64 unknown K-major 128B: not a wgmma input type");
  // Tiles beyond the descriptor's 2^18-byte reach, sizes that would wrap
  // 32-bit arithmetic included.
  EXPECT_EQ(DescribeTile(Tile(ScalarType::kF16, 16384, 16, MajorOrder::kK,
                              Swizzle::kNone))
                .status()
                .message(),
            "shared tile 16384x16 f16 K-major none: the tile takes 524288 "
            "bytes, but a matrix descriptor addresses only the first 262144 "
            "bytes of shared memory");
  for (const SharedTile& huge :
       {Tile(ScalarType::kF16, 64, 1 << 30, MajorOrder::kK, Swizzle::k128B),
        Tile(ScalarType::kF16, 2147483584, 64, MajorOrder::kMN,
             Swizzle::k128B)}) {
    const absl::Status status = DescribeTile(huge).status();
    EXPECT_NE(status.message().find("a matrix descriptor addresses only"),
              absl::string_view::npos)
        << status;
  }
}

// Two extents near 2^31 make a byte count that wraps even 64-bit arithmetic
// (2147483640^2 x 4 bytes is past 2^64): the tile is refused for its size
// before any product of them is formed, and so are offsets into it.
TEST(TileLayoutTest, ExtentsWhoseByteCountWouldWrapAreRefused) {
  const SharedTile hostile = Tile(ScalarType::kTF32, 2147483640, 2147483640,
                                  MajorOrder::kK, Swizzle::k32B);
  const std::string reach =
      "but a matrix descriptor addresses only the first 262144 bytes of "
      "shared memory";
  EXPECT_EQ(
      DescribeTile(hostile).status().message(),
      "shared tile 2147483640x2147483640 tf32 K-major 32B: the tile takes "
      "more than 262144 bytes (an extent of 2147483640 elements), " +
          reach);
  EXPECT_NE(TileOperandOffset(hostile, 8, 8).status().message().find(reach),
            absl::string_view::npos);
  EXPECT_NE(TileElementOffset(hostile, 8, 8).status().message().find(reach),
            absl::string_view::npos);
}

TEST(TileLayoutTest, OperandOffsets) {
  const SharedTile k_major =
      Tile(ScalarType::kF16, 128, 128, MajorOrder::kK, Swizzle::k128B);
  EXPECT_EQ(*TileOperandOffset(k_major, 64, 0), 64u * 128);
  EXPECT_EQ(*TileOperandOffset(k_major, 0, 16), 32u);
  EXPECT_EQ(*TileOperandOffset(k_major, 64, 48), 64u * 128 + 96);
  EXPECT_EQ(*TileOperandOffset(k_major, 0, 64), 128u * 128);  // next column
  const SharedTile core =
      Tile(ScalarType::kF16, 64, 32, MajorOrder::kK, Swizzle::kNone);
  EXPECT_EQ(*TileOperandOffset(core, 8, 16), 2u * 1024 + 8 * 16);
  const SharedTile mn_major =
      Tile(ScalarType::kF16, 128, 32, MajorOrder::kMN, Swizzle::k128B);
  EXPECT_EQ(*TileOperandOffset(mn_major, 64, 16), 32u * 128 + 16 * 128);
  EXPECT_FALSE(TileOperandOffset(mn_major, 8, 0).ok());  // mid-column
  EXPECT_FALSE(TileOperandOffset(k_major, 4, 0).ok());
  EXPECT_FALSE(TileOperandOffset(k_major, 0, 8).ok());
  EXPECT_FALSE(TileOperandOffset(k_major, 128, 0).ok());
}

TEST(TileLayoutTest, ElementOffsetsApplyTheSwizzle) {
  const SharedTile swizzled =
      Tile(ScalarType::kF16, 128, 64, MajorOrder::kK, Swizzle::k128B);
  // Row 1, 16-byte chunk 1: the chunk index is XORed with row 1 -> chunk 0.
  EXPECT_EQ(*TileElementOffset(swizzled, 1, 8), 128u);
  EXPECT_EQ(*TileElementOffset(swizzled, 0, 8), 16u);
  EXPECT_EQ(*TileElementOffset(swizzled, 7, 63), 7u * 128 + (7 ^ 7) * 16 + 14);
  const SharedTile plain =
      Tile(ScalarType::kF16, 64, 32, MajorOrder::kK, Swizzle::kNone);
  // Core matrices: 8 elements of a row, then the next row, then K columns.
  EXPECT_EQ(*TileElementOffset(plain, 3, 9), 1u * 1024 + 3 * 16 + 2);
  const SharedTile mn_major =
      Tile(ScalarType::kBF16, 64, 16, MajorOrder::kMN, Swizzle::k64B);
  EXPECT_EQ(*TileElementOffset(mn_major, 33, 2),
            SwizzleOffset(1 * 16 * 64 + 2 * 64 + 2, Swizzle::k64B));
  EXPECT_FALSE(TileElementOffset(plain, 64, 0).ok());
}

}  // namespace
}  // namespace ptxgen::ptx
