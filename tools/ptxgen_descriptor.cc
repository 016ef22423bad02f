// `ptxgen descriptor`: the shared-memory tile layout wgmma reads through a
// matrix descriptor, and the descriptor itself, encoded or decoded.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/ptx/tma.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

// The flags that describe a tile; --decode takes none of them.
const std::vector<std::string>& TileFlagNames() {
  static const std::vector<std::string>* const names =
      new std::vector<std::string>{"type", "rows", "k", "major", "swizzle"};
  return *names;
}

std::string Hex64(uint64_t value) { return absl::StrFormat("0x%016x", value); }

std::string FieldsText(const ptx::MatrixDescriptor& fields) {
  return absl::StrCat(
      "  start_address: ", fields.start_address, " bytes (bits 0-13)\n",
      "  leading_byte_offset: ", fields.leading_byte_offset,
      " bytes (bits 16-29)\n",
      "  stride_byte_offset: ", fields.stride_byte_offset,
      " bytes (bits 32-45)\n", "  base_offset: ", fields.base_offset,
      " (bits 49-51)\n", "  swizzle: ", ptx::SwizzleName(fields.swizzle),
      " (bits 62-63)\n");
}

// "0x" and 1 to 16 hex digits. Malformed input is a usage error; so is a
// missing "0x", which would read decimal-looking digits as hex.
absl::StatusOr<uint64_t> ParseDescriptor(absl::string_view text) {
  absl::string_view digits = text;
  const bool prefixed =
      absl::ConsumePrefix(&digits, "0x") || absl::ConsumePrefix(&digits, "0X");
  bool hex = prefixed && !digits.empty() && digits.size() <= 16;
  for (char c : digits) {
    hex = hex && absl::ascii_isxdigit(static_cast<unsigned char>(c));
  }
  uint64_t value = 0;
  if (!hex || !absl::SimpleHexAtoi(digits, &value)) {
    return cli::UsageError(absl::StrCat(
        "--decode=", text, " is not a 64-bit hex value (e.g. --decode=0x",
        "4000004000010000)"));
  }
  return value;
}

absl::StatusOr<std::string> Decode(const cli::ParsedFlags& flags) {
  for (const std::string& flag : TileFlagNames()) {
    if (flags.Has(flag)) {
      return cli::UsageError(
          absl::StrCat("--decode reads a descriptor, not a tile: --", flag,
                       " does not apply to it"));
    }
  }
  absl::StatusOr<uint64_t> value = ParseDescriptor(flags.Text("decode"));
  if (!value.ok()) return value.status();
  const ptx::MatrixDescriptor fields = ptx::DecodeMatrixDescriptor(*value);
  std::string text =
      absl::StrCat("descriptor: ", Hex64(*value), "\n", FieldsText(fields));
  // Re-encoding keeps only the fields: what differs sits in bits the
  // hardware reserves.
  absl::StatusOr<uint64_t> fields_only = ptx::EncodeMatrixDescriptor(fields);
  if (fields_only.ok() && *fields_only != *value) {
    absl::StrAppend(
        &text, "  reserved bits set: ", Hex64(*fields_only ^ *value), "\n");
  }
  return text;
}

absl::StatusOr<ptx::SharedTile> TileFromFlags(const cli::ParsedFlags& flags) {
  absl::StatusOr<ptx::ScalarType> type = cli::ScalarTypeValue(flags, "type");
  if (!type.ok()) return type.status();
  absl::StatusOr<ptx::Swizzle> swizzle =
      ptx::ParseSwizzle(flags.Text("swizzle"));
  if (!swizzle.ok()) return swizzle.status();
  ptx::SharedTile tile;
  tile.type = *type;
  tile.mn_extent = flags.Integer("rows");
  tile.k_extent = flags.Integer("k");
  tile.major =
      flags.Text("major") == "mn" ? ptx::MajorOrder::kMN : ptx::MajorOrder::kK;
  tile.swizzle = *swizzle;
  return tile;
}

// One TMA box per column, or several where a column has more rows than a
// box may span. Rounded up by division alone: rows + 255 could wrap.
std::string TmaBoxText(const ptx::TileLayout& layout) {
  const int boxes_per_column =
      layout.rows / ptx::kMaxTensorBoxExtent +
      (layout.rows % ptx::kMaxTensorBoxExtent != 0 ? 1 : 0);
  return absl::StrCat("tma_box: ", layout.box_inner_elements, " x ",
                      std::min(layout.rows, ptx::kMaxTensorBoxExtent),
                      " elements (inner x rows), ",
                      boxes_per_column == 1
                          ? std::string("one box")
                          : absl::StrCat(boxes_per_column, " boxes"),
                      " per column\n");
}

std::string LayoutText(const ptx::SharedTile& tile,
                       const ptx::TileLayout& layout, uint64_t descriptor) {
  return absl::StrCat(
      "tile: ", tile.mn_extent, " (M or N) x ", tile.k_extent, " (K) ",
      ptx::PtxName(tile.type), ", ",
      tile.major == ptx::MajorOrder::kK ? "K" : "MN", "-major, swizzle ",
      ptx::SwizzleName(tile.swizzle), "\n", "span_bytes: ", layout.span_bytes,
      "\n", "columns: ", layout.columns, "\n", "rows: ", layout.rows, "\n",
      "column_bytes: ", layout.column_bytes, "\n",
      "tile_bytes: ", layout.tile_bytes, "\n",
      "alignment_bytes: ", layout.alignment_bytes, "\n", TmaBoxText(layout),
      "descriptor: ", Hex64(descriptor), "\n", FieldsText(layout.descriptor));
}

absl::StatusOr<std::string> RunDescriptor(const cli::ParsedFlags& flags) {
  if (flags.Has("decode")) return Decode(flags);
  absl::StatusOr<ptx::SharedTile> tile = TileFromFlags(flags);
  if (!tile.ok()) return tile.status();
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(*tile);
  if (!layout.ok()) return layout.status();
  absl::StatusOr<uint64_t> descriptor =
      ptx::EncodeMatrixDescriptor(layout->descriptor);
  if (!descriptor.ok()) return descriptor.status();
  return LayoutText(*tile, *layout, *descriptor);
}

std::vector<cli::Choice> SwizzleChoices() {
  std::vector<cli::Choice> choices;
  for (ptx::Swizzle swizzle : {ptx::Swizzle::kNone, ptx::Swizzle::k32B,
                               ptx::Swizzle::k64B, ptx::Swizzle::k128B}) {
    choices.push_back({std::string(ptx::SwizzleName(swizzle)), ""});
  }
  return choices;
}

}  // namespace

cli::Subcommand DescriptorSubcommand() {
  cli::Subcommand command;
  command.name = "descriptor";
  command.summary =
      "the shared-memory tile layout of a wgmma operand and its "
      "64-bit matrix descriptor; or decode a descriptor";
  command.description =
      "Derives how ptxgen lays out an operand tile in shared memory (the\n"
      "layout its TMA loads write) and the sm_90 matrix descriptor that lets\n"
      "wgmma read it: column span, columns, rows, byte sizes, alignment, the\n"
      "TMA box, then the descriptor value (start address 0; kernels add the\n"
      "tile's address) with its decoded fields.\n"
      "With --decode it decodes a raw descriptor value instead.";
  command.flags = {
      cli::ScalarTypeFlag("type", "The element type (a wgmma input type).",
                          "f16"),
      cli::IntegerFlag("rows", "N", "Rows of M (operand A) or N (operand B).",
                       "128"),
      cli::IntegerFlag("k", "N", "Elements of K.", "64"),
      cli::ChoiceFlag(
          "major", "ORDER",
          {{"k", "K is contiguous (A as [M][K], B as [N][K])"},
           {"mn", "M or N is contiguous (transposed; f16/bf16 only)"}},
          "Which dimension is contiguous in shared memory.", "k"),
      cli::ChoiceFlag("swizzle", "MODE", SwizzleChoices(),
                      "The shared-memory swizzle pattern.", "128B"),
      cli::TextFlag("decode", "0xHEX",
                    "Decode this descriptor value instead of describing a "
                    "tile; takes none of the flags above."),
  };
  command.examples = {
      "ptxgen descriptor --type=f16 --rows=128 --k=64 --major=k "
      "--swizzle=128B",
      "ptxgen descriptor --type=bf16 --rows=64 --k=64 --major=mn "
      "--swizzle=64B",
      "ptxgen descriptor --decode=0x4000004000010000",
  };
  command.run = RunDescriptor;
  return command;
}

}  // namespace ptxgen::tools
