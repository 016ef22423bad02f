#ifndef PTXGEN_PTX_MATRIX_DESCRIPTOR_H_
#define PTXGEN_PTX_MATRIX_DESCRIPTOR_H_

// The sm_90 shared-memory matrix descriptor that wgmma reads its operands
// through, and the shared-memory tile layout ptxgen pairs it with.
// (Blackwell's tcgen05 descriptor is a different format.)

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"

namespace ptxgen::ptx {

// The fields of the 64-bit descriptor, in bytes (the encoding stores >> 4).
struct MatrixDescriptor {
  uint32_t start_address = 0;        // bits 0-13
  uint32_t leading_byte_offset = 0;  // bits 16-29
  uint32_t stride_byte_offset = 0;   // bits 32-45
  int base_offset = 0;               // bits 49-51: 0 for pattern-aligned tiles
  Swizzle swizzle = Swizzle::kNone;  // bits 62-63

  bool operator==(const MatrixDescriptor& other) const;
};

// Byte fields must be multiples of 16 below 2^18; base_offset in 0..7.
absl::StatusOr<uint64_t> EncodeMatrixDescriptor(const MatrixDescriptor& fields);
MatrixDescriptor DecodeMatrixDescriptor(uint64_t descriptor);

// A C++ expression for the descriptor's start-address field, given a C++
// expression for a 32-bit shared-memory byte address. Generated kernels OR it
// into a descriptor encoded with start_address 0.
std::string DescriptorAddressFieldExpression(const std::string& address);

// What to add to an encoded descriptor to move its start address `bytes`
// further (a multiple of 16, keeping the address below 2^18): the next
// instruction's operand inside the same tile.
uint64_t DescriptorAddressDelta(uint32_t bytes);

// Which dimension of an operand tile is contiguous in shared memory.
// kK: K-major (A as [M][K], B as [N][K]); kMN: MN-major (transposed).
enum class MajorOrder { kK, kMN };

// An operand tile in shared memory: mn_extent rows of M (for A) or N (for B)
// by k_extent elements of K.
//
// Layout (what ptxgen's TMA loads write): the contiguous dimension is cut
// into columns `span` bytes wide (span = the swizzle width, or 16 bytes
// without swizzle); each column holds the whole other dimension, row after
// row, and columns follow each other. With a swizzle, each group of 8 rows
// of a column is one swizzle pattern (8 x span bytes); without, each group of
// 8 rows is one 8x16-byte core matrix.
struct SharedTile {
  ScalarType type = ScalarType::kF16;
  int mn_extent = 0;
  int k_extent = 0;
  MajorOrder major = MajorOrder::kK;
  Swizzle swizzle = Swizzle::k128B;
};

// How to load and describe a SharedTile.
struct TileLayout {
  int span_bytes = 0;    // width of one column
  int columns = 0;       // columns across the contiguous dimension
  int rows = 0;          // rows per column (the other dimension)
  int column_bytes = 0;  // rows * span_bytes: stride between columns
  int tile_bytes = 0;
  int alignment_bytes = 0;  // the tile base must be aligned to this
  // One TMA box per column: box_inner elements (contiguous) x rows.
  int box_inner_elements = 0;
  // The descriptor for the tile's first instruction operand, start_address 0.
  MatrixDescriptor descriptor;
};

// Derives the layout and descriptor fields; refuses tiles wgmma cannot read
// (types without transpose in MN-major, extents off the core-matrix grid,
// offsets too large for the descriptor's fields).
absl::StatusOr<TileLayout> DescribeTile(const SharedTile& tile);

// Byte offset, from the tile base, of the operand that starts at row `mn`
// and K index `k` (multiples of 8 and of the instruction K). Adding it to the
// descriptor's start address selects that operand.
absl::StatusOr<uint32_t> TileOperandOffset(const SharedTile& tile, int mn,
                                           int k);

// Where element (mn, k) of the tile lives, in bytes from the tile base,
// swizzle applied: what a TMA load of the layout writes and what wgmma reads
// through the descriptor.
absl::StatusOr<uint32_t> TileElementOffset(const SharedTile& tile, int mn,
                                           int k);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_MATRIX_DESCRIPTOR_H_
