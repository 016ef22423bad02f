#include "ptxgen/ptx/matrix_descriptor.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::ptx {
namespace {

// Bit positions of the descriptor fields (PTX ISA, "Matrix Descriptor").
constexpr int kStartAddressBit = 0;
constexpr int kLeadingOffsetBit = 16;
constexpr int kStrideOffsetBit = 32;
constexpr int kBaseOffsetBit = 49;
constexpr int kSwizzleBit = 62;
// Byte fields are stored >> 4 in 14 bits, so they address up to 2^18 bytes.
constexpr uint64_t kFieldMask = 0x3FFF;
constexpr uint32_t kByteFieldLimit = 1u << 18;

// A core matrix is 8 rows of 16 bytes.
constexpr int kCoreMatrixRows = 8;
constexpr int kCoreMatrixRowBytes = 16;
constexpr int kCoreMatrixBytes = kCoreMatrixRows * kCoreMatrixRowBytes;

uint64_t SwizzleCode(Swizzle swizzle) {
  switch (swizzle) {
    case Swizzle::kNone:
      return 0;
    case Swizzle::k128B:
      return 1;
    case Swizzle::k64B:
      return 2;
    case Swizzle::k32B:
      return 3;
  }
  return 0;
}

Swizzle SwizzleFromCode(uint64_t code) {
  switch (code) {
    case 1:
      return Swizzle::k128B;
    case 2:
      return Swizzle::k64B;
    case 3:
      return Swizzle::k32B;
    default:
      return Swizzle::kNone;
  }
}

absl::Status CheckByteField(const char* field, uint32_t bytes) {
  if (bytes % 16 != 0 || bytes >= kByteFieldLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matrix descriptor: ", field, " must be a multiple of 16 below 2^18 (",
        kByteFieldLimit, "), not ", bytes));
  }
  return absl::OkStatus();
}

absl::Status Untileable(const SharedTile& tile, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(
      "shared tile ", tile.mn_extent, "x", tile.k_extent, " ",
      PtxName(tile.type), " ", tile.major == MajorOrder::kK ? "K" : "MN",
      "-major ", SwizzleName(tile.swizzle), ": ", rule));
}

// Refuses a tile past the descriptor's reach; `size` says how large it is.
absl::Status BeyondReach(const SharedTile& tile, const std::string& size) {
  return Untileable(tile,
                    absl::StrCat("the tile takes ", size,
                                 ", but a matrix descriptor addresses only the "
                                 "first ",
                                 kByteFieldLimit, " bytes of shared memory"));
}

int SpanBytes(Swizzle swizzle) {
  return swizzle == Swizzle::kNone ? kCoreMatrixRowBytes
                                   : SwizzleBytes(swizzle);
}

// Leading (K-direction) and stride (MN-direction) byte offsets between core
// matrices or swizzle patterns, as the hardware reads them for each layout.
// Swizzled K-major tiles never step along K inside one instruction (its K is
// 32 bytes, within one pattern row): the leading offset is unused there and
// set to 16 bytes, the conventional placeholder.
void SetDescriptorOffsets(const SharedTile& tile, TileLayout& layout) {
  const bool swizzled = tile.swizzle != Swizzle::kNone;
  uint32_t& leading = layout.descriptor.leading_byte_offset;
  uint32_t& stride = layout.descriptor.stride_byte_offset;
  if (tile.major == MajorOrder::kK) {
    leading = swizzled ? 16 : layout.column_bytes;
    stride = swizzled ? kCoreMatrixRows * layout.span_bytes : kCoreMatrixBytes;
  } else {
    // MN-major swaps the roles: without swizzle the leading offset steps K
    // (next 8 rows) and the stride steps MN (next column); with a swizzle
    // the leading offset steps MN columns and the stride steps 8 K rows.
    leading = swizzled ? layout.column_bytes : kCoreMatrixBytes;
    stride =
        swizzled ? kCoreMatrixRows * layout.span_bytes : layout.column_bytes;
  }
}

}  // namespace

bool MatrixDescriptor::operator==(const MatrixDescriptor& other) const {
  return start_address == other.start_address &&
         leading_byte_offset == other.leading_byte_offset &&
         stride_byte_offset == other.stride_byte_offset &&
         base_offset == other.base_offset && swizzle == other.swizzle;
}

absl::StatusOr<uint64_t> EncodeMatrixDescriptor(
    const MatrixDescriptor& fields) {
  for (const auto& [name, bytes] :
       {std::pair<const char*, uint32_t>{"start address", fields.start_address},
        {"leading byte offset", fields.leading_byte_offset},
        {"stride byte offset", fields.stride_byte_offset}}) {
    if (absl::Status status = CheckByteField(name, bytes); !status.ok()) {
      return status;
    }
  }
  if (!IsKnownSwizzle(fields.swizzle)) {
    return absl::InvalidArgumentError(
        absl::StrCat("matrix descriptor: unknown swizzle ",
                     static_cast<int>(fields.swizzle)));
  }
  if (fields.base_offset < 0 || fields.base_offset > 7) {
    return absl::InvalidArgumentError(
        absl::StrCat("matrix descriptor: base offset must be in 0..7, not ",
                     fields.base_offset));
  }
  return (uint64_t{fields.start_address} >> 4) << kStartAddressBit |
         (uint64_t{fields.leading_byte_offset} >> 4) << kLeadingOffsetBit |
         (uint64_t{fields.stride_byte_offset} >> 4) << kStrideOffsetBit |
         uint64_t(fields.base_offset) << kBaseOffsetBit |
         SwizzleCode(fields.swizzle) << kSwizzleBit;
}

MatrixDescriptor DecodeMatrixDescriptor(uint64_t descriptor) {
  MatrixDescriptor fields;
  fields.start_address =
      static_cast<uint32_t>((descriptor >> kStartAddressBit) & kFieldMask) << 4;
  fields.leading_byte_offset =
      static_cast<uint32_t>((descriptor >> kLeadingOffsetBit) & kFieldMask)
      << 4;
  fields.stride_byte_offset =
      static_cast<uint32_t>((descriptor >> kStrideOffsetBit) & kFieldMask) << 4;
  fields.base_offset = static_cast<int>((descriptor >> kBaseOffsetBit) & 0x7);
  fields.swizzle = SwizzleFromCode((descriptor >> kSwizzleBit) & 0x3);
  return fields;
}

std::string DescriptorAddressFieldExpression(const std::string& address) {
  return absl::StrCat("((unsigned long long)(((", address, ") & 0x",
                      absl::Hex(kByteFieldLimit - 1), ") >> 4) << ",
                      kStartAddressBit, ")");
}

uint64_t DescriptorAddressDelta(uint32_t bytes) {
  return uint64_t{bytes >> 4} << kStartAddressBit;
}

absl::StatusOr<TileLayout> DescribeTile(const SharedTile& tile) {
  if (!IsKnownSwizzle(tile.swizzle)) return Untileable(tile, "unknown swizzle");
  if (tile.major != MajorOrder::kK && tile.major != MajorOrder::kMN) {
    return Untileable(tile, "unknown major order");
  }
  absl::StatusOr<int> instruction_k = WgmmaK(tile.type);
  if (!instruction_k.ok()) return Untileable(tile, "not a wgmma input type");
  if (tile.major == MajorOrder::kMN && !WgmmaSupportsTranspose(tile.type)) {
    return Untileable(tile,
                      "only f16/bf16 tiles may be MN-major (wgmma transposes "
                      "no other type)");
  }
  if (tile.mn_extent <= 0 || tile.k_extent <= 0) {
    return Untileable(tile, "extents must be positive");
  }
  if (tile.k_extent % *instruction_k != 0) {
    return Untileable(tile, absl::StrCat("the K extent must be a multiple of "
                                         "the instruction K (",
                                         *instruction_k, ")"));
  }
  const bool k_major = tile.major == MajorOrder::kK;
  const int element_bytes = SizeInBytes(tile.type);
  const int contiguous = k_major ? tile.k_extent : tile.mn_extent;
  // Each extent is checked alone first: two extents near 2^31 wrap their
  // byte count even in 64 bits. Past both checks every size below is at
  // most kByteFieldLimit, so int arithmetic holds it.
  const int largest = std::max(tile.mn_extent, tile.k_extent);
  if (largest > static_cast<int>(kByteFieldLimit)) {
    return BeyondReach(
        tile, absl::StrCat("more than ", kByteFieldLimit,
                           " bytes (an extent of ", largest, " elements)"));
  }
  const int64_t tile_bytes =
      int64_t{tile.mn_extent} * tile.k_extent * element_bytes;
  if (tile_bytes > kByteFieldLimit) {
    return BeyondReach(tile, absl::StrCat(tile_bytes, " bytes"));
  }
  TileLayout layout;
  layout.span_bytes = SpanBytes(tile.swizzle);
  layout.rows = k_major ? tile.mn_extent : tile.k_extent;
  if ((contiguous * element_bytes) % layout.span_bytes != 0) {
    return Untileable(
        tile, absl::StrCat("the contiguous ", k_major ? "K" : "MN", " extent (",
                           contiguous * element_bytes,
                           " bytes) must be a multiple of the ",
                           layout.span_bytes, "-byte span of this layout"));
  }
  if (layout.rows % kCoreMatrixRows != 0) {
    return Untileable(tile, absl::StrCat("the ", k_major ? "MN" : "K",
                                         " extent must be a multiple of 8 (the "
                                         "rows of a core matrix)"));
  }
  layout.columns = contiguous * element_bytes / layout.span_bytes;
  layout.column_bytes = layout.rows * layout.span_bytes;
  layout.tile_bytes = layout.columns * layout.column_bytes;
  layout.alignment_bytes = tile.swizzle == Swizzle::kNone
                               ? kCoreMatrixRowBytes
                               : kCoreMatrixRows * layout.span_bytes;
  layout.box_inner_elements = layout.span_bytes / element_bytes;
  layout.descriptor.swizzle = tile.swizzle;
  SetDescriptorOffsets(tile, layout);
  if (absl::StatusOr<uint64_t> encoded =
          EncodeMatrixDescriptor(layout.descriptor);
      !encoded.ok()) {
    return Untileable(tile, std::string(encoded.status().message()));
  }
  return layout;
}

namespace {

// The unswizzled byte offset of element (mn, k): columns of span bytes,
// rows of span bytes inside a column. For (mn, k) inside a tile DescribeTile
// accepts, every term is below the tile's 2^18 bytes: int cannot wrap.
uint32_t LinearOffset(const SharedTile& tile, const TileLayout& layout, int mn,
                      int k) {
  const bool k_major = tile.major == MajorOrder::kK;
  const int contiguous_bytes = (k_major ? k : mn) * SizeInBytes(tile.type);
  const int row = k_major ? mn : k;
  return static_cast<uint32_t>(
      contiguous_bytes / layout.span_bytes * layout.column_bytes +
      row * layout.span_bytes + contiguous_bytes % layout.span_bytes);
}

}  // namespace

absl::StatusOr<uint32_t> TileOperandOffset(const SharedTile& tile, int mn,
                                           int k) {
  absl::StatusOr<TileLayout> layout = DescribeTile(tile);
  if (!layout.ok()) return layout.status();
  const int instruction_k = *WgmmaK(tile.type);
  if (mn < 0 || mn >= tile.mn_extent || mn % kCoreMatrixRows != 0 || k < 0 ||
      k >= tile.k_extent || k % instruction_k != 0) {
    return Untileable(tile, absl::StrCat("operand origin (", mn, ", ", k,
                                         ") must lie in the tile on a multiple "
                                         "of 8 rows and of the instruction K"));
  }
  if (tile.major == MajorOrder::kMN &&
      (mn * SizeInBytes(tile.type)) % layout->span_bytes != 0) {
    return Untileable(
        tile, absl::StrCat(
                  "an MN-major operand must start on a column boundary (every ",
                  layout->span_bytes / SizeInBytes(tile.type), " elements)"));
  }
  return LinearOffset(tile, *layout, mn, k);
}

absl::StatusOr<uint32_t> TileElementOffset(const SharedTile& tile, int mn,
                                           int k) {
  absl::StatusOr<TileLayout> layout = DescribeTile(tile);
  if (!layout.ok()) return layout.status();
  if (mn < 0 || mn >= tile.mn_extent || k < 0 || k >= tile.k_extent) {
    return Untileable(
        tile, absl::StrCat("element (", mn, ", ", k, ") is outside the tile"));
  }
  return SwizzleOffset(LinearOffset(tile, *layout, mn, k), tile.swizzle);
}

}  // namespace ptxgen::ptx
