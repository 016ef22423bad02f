// "MxNxK" text, as --block and --m/--n/--k style callers give it:
// gen::ParseDimensions and gen::WithTile, then ValidateGemmConfig of the
// tiled configuration (v1 and a warp-specialized one) for every element
// type. Invariants: the parsed sizes print back to text that parses to
// them; WithTile accepts exactly the parsed tiles whose sizes fit an int and
// stores them unchanged (no narrowing), touching no other field.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/gemm_config_util.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace {

using ptxgen::gen::GemmConfig;

bool FitsInt(int64_t value) {
  return value >= std::numeric_limits<int>::min() &&
         value <= std::numeric_limits<int>::max();
}

GemmConfig WarpSpecializedBase() {
  absl::StatusOr<GemmConfig> config = ptxgen::gen::ParseConfigName(
      "ws 128x256x64 s4 c2 w1 m2 tma g8 sk persistent");
  FUZZ_CHECK(config.ok(), "the base configuration does not parse: ",
             config.status().message());
  return *config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GemmConfig* const kWarpSpecialized =
      new GemmConfig(WarpSpecializedBase());
  const absl::string_view text = ptxgen::fuzz::AsText(data, size);
  const absl::StatusOr<std::array<int64_t, 3>> sizes =
      ptxgen::gen::ParseDimensions(text);
  if (sizes.ok()) {
    const std::string printed =
        absl::StrCat((*sizes)[0], "x", (*sizes)[1], "x", (*sizes)[2]);
    const absl::StatusOr<std::array<int64_t, 3>> again =
        ptxgen::gen::ParseDimensions(printed);
    FUZZ_CHECK(again.ok() && *again == *sizes, "'", text, "' printed as '",
               printed, "' does not parse back");
  }
  for (const GemmConfig& base : {GemmConfig{}, *kWarpSpecialized}) {
    const absl::StatusOr<GemmConfig> tiled = ptxgen::gen::WithTile(base, text);
    const bool fits = sizes.ok() && FitsInt((*sizes)[0]) &&
                      FitsInt((*sizes)[1]) && FitsInt((*sizes)[2]);
    FUZZ_CHECK(tiled.ok() == fits, "WithTile('", text, "') ",
               tiled.ok() ? "accepted" : "refused",
               " a tile that ParseDimensions ", sizes.ok() ? "read" : "refused",
               fits ? " and that fits an int" : "");
    if (!tiled.ok()) continue;
    FUZZ_CHECK(tiled->block_m == (*sizes)[0] && tiled->block_n == (*sizes)[1] &&
                   tiled->block_k == (*sizes)[2],
               "WithTile('", text, "') stored ", tiled->block_m, "x",
               tiled->block_n, "x", tiled->block_k);
    GemmConfig expected = base;
    expected.block_m = tiled->block_m;
    expected.block_n = tiled->block_n;
    expected.block_k = tiled->block_k;
    FUZZ_CHECK(ptxgen::fuzz::SameFields(*tiled, expected),
               "WithTile changed more than the tile");
    for (ptxgen::ptx::ScalarType element :
         {ptxgen::ptx::ScalarType::kF16, ptxgen::ptx::ScalarType::kBF16,
          ptxgen::ptx::ScalarType::kTF32, ptxgen::ptx::ScalarType::kS8,
          ptxgen::ptx::ScalarType::kF32}) {
      const absl::Status valid =
          ptxgen::gen::ValidateGemmConfig(*tiled, element);
      if (!valid.ok()) continue;
      FUZZ_CHECK(ptxgen::gen::IsGemmElement(element), "a GEMM of ",
                 ptxgen::ptx::PtxName(element), " validated");
      FUZZ_CHECK(tiled->block_m >= 64 && tiled->block_m <= 256 &&
                     tiled->block_n >= 8 && tiled->block_n <= 256 &&
                     tiled->block_k > 0,
                 "tile ", text, " validated");
    }
  }
  return 0;
}
