// The shared-memory matrix descriptor and tile layout (ptx/matrix_descriptor.h,
// ptx/swizzle.h). Input (text), one request per line:
//   tile TYPE MN K MAJOR SWIZZLE [OP_MN OP_K [EL_MN EL_K]]
//        TYPE a PTX name or an integer (a cast enumerator); MAJOR K, MN or
//        an integer; SWIZZLE none, 32B, 64B, 128B or an integer
//   encode START LBO SBO BASE SWIZZLE [DELTA]
//   decode DESCRIPTOR (a 64-bit integer, decimal or 0x hex)
//   swizzle OFFSET SWIZZLE
// Invariants: DescribeTile's layout covers the tile exactly (columns x rows
// x span = the tile's bytes, within the descriptor's 2^18), its descriptor
// encodes; operand and element offsets lie inside the tile, aligned, and
// for small tiles every element has its own offset; Encode then Decode is
// the identity on accepted fields and Decode then Encode keeps every
// defined bit; the swizzle is an involution that stays in its pattern.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/ptx/wgmma.h"

namespace {

namespace ptx = ptxgen::ptx;
using ptxgen::fuzz::IntegerWord;
using Words = std::vector<absl::string_view>;

// The descriptor bits the format defines: 14-bit start, leading and stride
// fields, the 3-bit base offset and the 2-bit swizzle.
constexpr uint64_t kDefinedBits =
    0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;

ptx::ScalarType TypeWord(const Words& words, size_t index) {
  if (index < words.size()) {
    if (absl::StatusOr<ptx::ScalarType> type =
            ptx::ParseScalarType(words[index]);
        type.ok()) {
      return *type;
    }
  }
  return static_cast<ptx::ScalarType>(IntegerWord<int>(words, index, 0));
}

ptx::Swizzle SwizzleWord(const Words& words, size_t index) {
  if (index < words.size()) {
    if (absl::StatusOr<ptx::Swizzle> swizzle = ptx::ParseSwizzle(words[index]);
        swizzle.ok()) {
      return *swizzle;
    }
  }
  return static_cast<ptx::Swizzle>(IntegerWord<int>(words, index, 0));
}

ptx::MajorOrder MajorWord(const Words& words, size_t index) {
  if (index < words.size() && words[index] == "K") return ptx::MajorOrder::kK;
  if (index < words.size() && words[index] == "MN") return ptx::MajorOrder::kMN;
  return static_cast<ptx::MajorOrder>(IntegerWord<int>(words, index, 0));
}

uint64_t U64Word(const Words& words, size_t index) {
  uint64_t value = 0;
  if (index >= words.size()) return 0;
  absl::string_view word = words[index];
  if (absl::ConsumePrefix(&word, "0x")) {
    return absl::SimpleHexAtoi(word, &value) ? value : 0;
  }
  return absl::SimpleAtoi(word, &value) ? value : 0;
}

std::string Name(const ptx::SharedTile& tile) {
  return absl::StrCat("tile ", tile.mn_extent, "x", tile.k_extent, " ",
                      ptx::PtxName(tile.type), " ",
                      tile.major == ptx::MajorOrder::kK ? "K" : "MN", " ",
                      ptx::SwizzleName(tile.swizzle));
}

void CheckTile(const Words& words) {
  ptx::SharedTile tile;
  tile.type = TypeWord(words, 1);
  tile.mn_extent = IntegerWord<int>(words, 2, 0);
  tile.k_extent = IntegerWord<int>(words, 3, 0);
  tile.major = MajorWord(words, 4);
  tile.swizzle = SwizzleWord(words, 5);
  const absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  const int operand_mn = IntegerWord<int>(words, 6, 0);
  const int operand_k = IntegerWord<int>(words, 7, 0);
  const absl::StatusOr<uint32_t> operand =
      ptx::TileOperandOffset(tile, operand_mn, operand_k);
  const int element_mn = IntegerWord<int>(words, 8, 0);
  const int element_k = IntegerWord<int>(words, 9, 0);
  const absl::StatusOr<uint32_t> element =
      ptx::TileElementOffset(tile, element_mn, element_k);
  if (!layout.ok()) {
    FUZZ_CHECK(!operand.ok() && !element.ok(), Name(tile),
               ": offsets into a tile DescribeTile refuses");
    return;
  }
  const std::string name = Name(tile);
  FUZZ_CHECK(ptx::IsKnownScalarType(tile.type) &&
                 ptx::IsKnownSwizzle(tile.swizzle) &&
                 ptx::WgmmaK(tile.type).ok(),
             name, ": described a tile of an unknown type or swizzle");
  const int element_bytes = ptx::SizeInBytes(tile.type);
  const int64_t bytes = int64_t{tile.mn_extent} * tile.k_extent * element_bytes;
  FUZZ_CHECK(layout->tile_bytes == bytes && bytes > 0 && bytes <= (1 << 18),
             name, ": ", layout->tile_bytes, " tile bytes for ", bytes);
  FUZZ_CHECK(layout->span_bytes > 0 && layout->rows > 0 &&
                 layout->columns > 0 &&
                 layout->column_bytes == layout->rows * layout->span_bytes &&
                 int64_t{layout->columns} * layout->column_bytes == bytes,
             name, ": ", layout->columns, " columns of ", layout->rows,
             " rows of ", layout->span_bytes, " bytes");
  FUZZ_CHECK(layout->rows % 8 == 0 && layout->alignment_bytes > 0 &&
                 (layout->alignment_bytes & (layout->alignment_bytes - 1)) == 0,
             name, ": rows ", layout->rows, ", alignment ",
             layout->alignment_bytes);
  FUZZ_CHECK(layout->box_inner_elements * element_bytes == layout->span_bytes,
             name, ": a box of ", layout->box_inner_elements, " elements");
  const absl::StatusOr<uint64_t> encoded =
      ptx::EncodeMatrixDescriptor(layout->descriptor);
  FUZZ_CHECK(encoded.ok(), name, ": its descriptor does not encode");
  FUZZ_CHECK(ptx::DecodeMatrixDescriptor(*encoded) == layout->descriptor, name,
             ": its descriptor does not decode back");
  if (operand.ok()) {
    FUZZ_CHECK(*operand < bytes && *operand % 16 == 0, name, ": operand (",
               operand_mn, ", ", operand_k, ") at ", *operand);
  }
  if (element.ok()) {
    FUZZ_CHECK(
        *element % element_bytes == 0 && *element + element_bytes <= bytes,
        name, ": element (", element_mn, ", ", element_k, ") at ", *element);
  }
  // Small tiles: the element offsets are a permutation of the tile's slots.
  if (tile.mn_extent * tile.k_extent <= 2048) {
    std::vector<bool> taken(bytes / element_bytes, false);
    for (int mn = 0; mn < tile.mn_extent; ++mn) {
      for (int k = 0; k < tile.k_extent; ++k) {
        const absl::StatusOr<uint32_t> offset =
            ptx::TileElementOffset(tile, mn, k);
        FUZZ_CHECK(offset.ok() && *offset % element_bytes == 0 &&
                       *offset / element_bytes < taken.size() &&
                       !taken[*offset / element_bytes],
                   name, ": element (", mn, ", ", k,
                   ") has no slot of its own");
        taken[*offset / element_bytes] = true;
      }
    }
  }
}

void CheckEncode(const Words& words) {
  ptx::MatrixDescriptor fields;
  fields.start_address = IntegerWord<uint32_t>(words, 1, 0);
  fields.leading_byte_offset = IntegerWord<uint32_t>(words, 2, 0);
  fields.stride_byte_offset = IntegerWord<uint32_t>(words, 3, 0);
  fields.base_offset = IntegerWord<int>(words, 4, 0);
  fields.swizzle = SwizzleWord(words, 5);
  const absl::StatusOr<uint64_t> encoded = ptx::EncodeMatrixDescriptor(fields);
  if (!encoded.ok()) return;
  FUZZ_CHECK((*encoded & ~kDefinedBits) == 0, "encoded 0x", absl::Hex(*encoded),
             " sets undefined bits");
  const ptx::MatrixDescriptor decoded = ptx::DecodeMatrixDescriptor(*encoded);
  FUZZ_CHECK(decoded == fields, "fields ", fields.start_address, " ",
             fields.leading_byte_offset, " ", fields.stride_byte_offset, " ",
             fields.base_offset, " ", static_cast<int>(fields.swizzle),
             " encode to 0x", absl::Hex(*encoded), ", which decodes to ",
             decoded.start_address, " ", decoded.leading_byte_offset, " ",
             decoded.stride_byte_offset, " ", decoded.base_offset, " ",
             static_cast<int>(decoded.swizzle));
  const uint32_t delta = IntegerWord<uint32_t>(words, 6, 0);
  if (delta % 16 == 0 && uint64_t{fields.start_address} + delta < (1u << 18)) {
    const ptx::MatrixDescriptor moved = ptx::DecodeMatrixDescriptor(
        *encoded + ptx::DescriptorAddressDelta(delta));
    FUZZ_CHECK(moved.start_address == fields.start_address + delta &&
                   moved.leading_byte_offset == fields.leading_byte_offset &&
                   moved.stride_byte_offset == fields.stride_byte_offset,
               "moving start address ", fields.start_address, " by ", delta);
  }
}

void CheckDecode(const Words& words) {
  const uint64_t descriptor = U64Word(words, 1);
  const ptx::MatrixDescriptor fields = ptx::DecodeMatrixDescriptor(descriptor);
  const absl::StatusOr<uint64_t> encoded = ptx::EncodeMatrixDescriptor(fields);
  FUZZ_CHECK(encoded.ok(), "decoded fields of 0x", absl::Hex(descriptor),
             " do not encode: ", encoded.status().message());
  FUZZ_CHECK(*encoded == (descriptor & kDefinedBits), "0x",
             absl::Hex(descriptor), " decodes and encodes to 0x",
             absl::Hex(*encoded));
}

void CheckSwizzle(const Words& words) {
  const uint32_t offset = IntegerWord<uint32_t>(words, 1, 0);
  const ptx::Swizzle swizzle = SwizzleWord(words, 2);
  if (!ptx::IsKnownSwizzle(swizzle)) return;
  const uint32_t moved = ptx::SwizzleOffset(offset, swizzle);
  FUZZ_CHECK(ptx::SwizzleOffset(moved, swizzle) == offset, "swizzling ", offset,
             " twice with ", ptx::SwizzleName(swizzle), " gives ",
             ptx::SwizzleOffset(moved, swizzle));
  const uint32_t pattern =
      8u * static_cast<uint32_t>(swizzle == ptx::Swizzle::kNone
                                     ? 16
                                     : ptx::SwizzleBytes(swizzle));
  FUZZ_CHECK(moved / pattern == offset / pattern && moved % 16 == offset % 16,
             "swizzled ", offset, " to ", moved, " outside its pattern");
  if (swizzle == ptx::Swizzle::kNone) {
    FUZZ_CHECK(moved == offset, "no swizzle moved ", offset);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (absl::string_view line :
       ptxgen::fuzz::Lines(ptxgen::fuzz::AsText(data, size))) {
    const Words words = ptxgen::fuzz::Words(line);
    if (words.empty()) continue;
    if (words[0] == "tile") CheckTile(words);
    if (words[0] == "encode") CheckEncode(words);
    if (words[0] == "decode") CheckDecode(words);
    if (words[0] == "swizzle") CheckSwizzle(words);
  }
  return 0;
}
