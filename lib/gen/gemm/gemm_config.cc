// GEMM configurations: names and validation against the hardware budgets
// (tile_scheduler.cc plans their launch grids).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/gen/gemm/gemm_internal.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

// The checks below take the parts they judge and name the broken rule;
// ValidateGemmConfig puts the configuration's name before it.
absl::Status Rule(absl::string_view rule) {
  return absl::InvalidArgumentError(rule);
}

// A value outside an enumeration (a cast) is not read as one of its members.
absl::Status ValidateEnumerations(const GemmConfig& config) {
  const int schedule = static_cast<int>(config.schedule);
  const int epilogue = static_cast<int>(config.epilogue);
  const int tile_order = static_cast<int>(config.tile_order);
  if (config.schedule != GemmSchedule::kV1 &&
      !IsWarpSpecialized(config.schedule)) {
    return Rule(
        absl::StrCat("schedule ", schedule, " is neither v1, ws nor pp"));
  }
  if (config.epilogue != GemmEpilogue::kDirect &&
      config.epilogue != GemmEpilogue::kTmaStore) {
    return Rule(
        absl::StrCat("epilogue ", epilogue, " is neither direct nor tma"));
  }
  if (config.tile_order != TileOrder::kRaster &&
      config.tile_order != TileOrder::kHilbert) {
    return Rule(absl::StrCat("tile order ", tile_order,
                             " is neither raster nor hilbert"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTile(const GemmTileShape& tile, ptx::ScalarType element) {
  if (tile.block_m < 64 || tile.block_m > 256 || tile.block_m % 64 != 0) {
    return Rule(
        "block_m must be 64, 128, 192 or 256 (wgmma computes 64 rows at a "
        "time)");
  }
  if (!ptx::IsLegalWgmmaN(element, tile.block_n)) {
    return Rule(absl::StrCat("block_n must be a legal wgmma N (",
                             ptx::LegalWgmmaNText(element), ")"));
  }
  // Checked: a hostile block_k must not wrap into a legal row.
  int row_bytes = 0;
  if (__builtin_mul_overflow(tile.block_k, ptx::SizeInBytes(element),
                             &row_bytes) ||
      (row_bytes != 32 && row_bytes != 64 && row_bytes != 128)) {
    const int bytes = ptx::SizeInBytes(element);
    return Rule(absl::StrCat(
        "block_k must make a 32-, 64- or 128-byte row to match a swizzle span "
        "(",
        32 / bytes, ", ", 64 / bytes, " or ", 128 / bytes, " for ",
        ptx::PtxName(element), ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateV1(const GemmConfig& config) {
  if (config.stages != 1 || config.consumers != 1 || config.cluster_m != 1 ||
      config.mma_groups_in_flight != 0 || config.split_k != 1 ||
      config.stream_k || config.epilogue != GemmEpilogue::kDirect ||
      config.swap_ab) {
    return Rule(
        "schedule v1 is the seed: one stage, one warpgroup, no cluster, "
        "wait_group 0, direct epilogue, no split-K, stream-K or swap");
  }
  return absl::OkStatus();
}

// The warpgroups and the ring, against the tile they split and share.
absl::Status ValidatePipeline(const GemmPipelineShape& pipeline,
                              const GemmTileShape& tile,
                              GemmSchedule schedule) {
  if (pipeline.consumers != 1 && pipeline.consumers != 2 &&
      pipeline.consumers != 4) {
    return Rule("consumers must be 1, 2 or 4 warpgroups");
  }
  if (schedule == GemmSchedule::kWarpSpecialized &&
      tile.block_m % (64 * pipeline.consumers) != 0) {
    return Rule(
        "each consumer warpgroup needs a multiple of 64 rows (block_m / "
        "consumers)");
  }
  if (pipeline.stages < 1 || pipeline.stages > kMaxGemmStages) {
    return Rule(absl::StrCat("stages must be 1..", kMaxGemmStages));
  }
  if (pipeline.mma_groups_in_flight != 0 &&
      pipeline.mma_groups_in_flight != 1) {
    return Rule("wgmma groups in flight must be 0 or 1");
  }
  if (pipeline.mma_groups_in_flight == 1 && pipeline.stages < 2) {
    return Rule(
        "keeping a wgmma group in flight releases each stage one "
        "iteration late: it needs 2+ stages");
  }
  if (pipeline.cluster_m != 1 && pipeline.cluster_m != 2) {
    return Rule("cluster_m must be 1 or 2");
  }
  if (pipeline.cluster_m == 2 && tile.block_n % 16 != 0) {
    return Rule(
        "a 2-CTA cluster multicasts half of B each: block_n must be a "
        "multiple of 16");
  }
  return absl::OkStatus();
}

// The store strategy, against the columns of the tile it stores.
absl::Status ValidateEpilogue(const GemmEpilogueConfig& epilogue,
                              const GemmTileShape& tile) {
  if (epilogue.epilogue == GemmEpilogue::kTmaStore &&
      tile.block_n % kStoreChunkColumns != 0) {
    return Rule(absl::StrCat(
        "the TMA-store epilogue writes ", kStoreChunkColumns,
        "-column chunks: block_n must be a multiple of ", kStoreChunkColumns));
  }
  const int chunks = StoreChunkCount(tile);
  if (epilogue.store_chunks != 0 &&
      (epilogue.epilogue != GemmEpilogue::kTmaStore ||
       epilogue.store_chunks < 0 || epilogue.store_chunks >= chunks ||
       chunks % epilogue.store_chunks != 0)) {
    return Rule(
        absl::StrCat("e# (", kStoreChunkColumns,
                     "-column chunks staged per TMA-store pass) "
                     "needs the TMA-store epilogue and must divide the tile's ",
                     chunks,
                     " chunk(s) into 2 or "
                     "more passes; leave it out to stage them all"));
  }
  return absl::OkStatus();
}

absl::Status ValidateScheduler(const GemmSchedulerConfig& scheduler) {
  if (scheduler.tile_order == TileOrder::kRaster &&
      (scheduler.raster_group < 1 ||
       scheduler.raster_group > kMaxRasterGroup)) {
    return Rule(absl::StrCat("raster_group must be 1..", kMaxRasterGroup));
  }
  if (scheduler.split_k < 1 || scheduler.split_k > 16) {
    return Rule("split_k must be 1..16");
  }
  if (scheduler.split_k_in_cluster &&
      (scheduler.split_k < 2 || scheduler.split_k > kMaxPortableClusterCtas)) {
    return Rule(absl::StrCat(
        "slices meeting in a cluster (dsmem) are its CTAs: split_k must be 2..",
        kMaxPortableClusterCtas));
  }
  return absl::OkStatus();
}

// What splitting work across CTAs asks of the other parts.
absl::Status ValidateAcrossParts(const GemmConfig& config) {
  if (config.split_k_in_cluster && config.cluster_m != 1) {
    return Rule(
        "slices meeting in a cluster (dsmem) fill the cluster: it takes "
        "no 2-CTA cluster along M");
  }
  if (ReducesSlicesInWorkspace(config) &&
      (config.epilogue != GemmEpilogue::kDirect || config.cluster_m != 1)) {
    return Rule(
        "split-K writes f32 partial sums from registers: it needs the "
        "direct epilogue and no cluster");
  }
  if (config.stream_k && (config.split_k > 1 || !config.persistent)) {
    return Rule(
        "stream-K shares the last wave's k-tiles among the clusters of a "
        "persistent grid: it needs 'persistent' and no split-K");
  }
  return absl::OkStatus();
}

// Ping-pong consumers take turns with whole tiles: two of them, and no
// fixup that meets a tile's pieces per consumer part of its rows.
absl::Status ValidatePingPong(const GemmConfig& config) {
  if (config.schedule != GemmSchedule::kPingPong) return absl::OkStatus();
  if (config.consumers != 2) {
    return Rule("ping-pong (pp) alternates two consumer warpgroups: c2");
  }
  if (config.stream_k || config.split_k_in_cluster) {
    return Rule(
        "ping-pong (pp) takes no stream-K or split-K meeting in a cluster "
        "(their fixups meet a tile's pieces consumer by consumer)");
  }
  return absl::OkStatus();
}

absl::Status ValidateWarpSpecialized(const GemmConfig& config) {
  absl::Status valid = ValidatePingPong(config);
  if (valid.ok()) valid = ValidatePipeline(config, config, config.schedule);
  if (valid.ok()) valid = ValidateEpilogue(config, config);
  if (valid.ok()) valid = ValidateScheduler(config);
  if (valid.ok()) valid = ValidateAcrossParts(config);
  return valid;
}

// Runs after the other checks: every field PlanGemmLayout reads is in its
// range by then, so its sizes stay far inside int.
absl::Status ValidateRegisterBudget(const GemmConfig& config,
                                    ptx::ScalarType element) {
  const GemmLayout layout = PlanGemmLayout(config, element);
  const int accumulators = layout.accumulators_per_thread;
  if (accumulators + kRegisterOverhead > layout.consumer_registers) {
    return Rule(absl::StrCat(
        "each consumer thread needs ", accumulators, " accumulator registers (",
        layout.m_slices, " x ", config.block_n, "/2) plus about ",
        kRegisterOverhead, " more, but gets ", layout.consumer_registers));
  }
  return absl::OkStatus();
}

// Promotion adds each stage's products, in sums of their own, into the
// tile's accumulators: the sums of a part of the tile's columns
// (GemmLayout::promotion_parts) beside the accumulators, and a part's
// wgmma must be complete before its sums are read.
absl::Status ValidatePromotion(const GemmConfig& config, const GemmForm& form) {
  if (!PromotesAccumulators(form)) return absl::OkStatus();
  if (config.mma_groups_in_flight != 0) {
    return Rule(
        "fp8 promotion (the default without fast accumulation) reads each "
        "stage's products once its wgmma completed: it needs w0");
  }
  const GemmLayout layout = PlanGemmLayout(config, form);
  const int parts = layout.promotion_parts;
  const int needed = PromotionRegisters(layout, parts);
  if (needed > layout.consumer_registers) {
    return Rule(absl::StrCat(
        "fp8 promotion keeps a stage's sums beside the accumulators: each "
        "consumer thread needs about ",
        needed, " registers (", layout.accumulators_per_thread,
        " accumulators, sums of ", config.block_n / parts,
        " columns at a time) but gets ", layout.consumer_registers,
        " (a narrower tile, more consumers, or fast accumulation)"));
  }
  return absl::OkStatus();
}

// Block scales reach the main loop of warp-specialized kernels (v1 has no
// scale reads), one k-block a stage, one row scale of A per kernel row.
absl::Status ValidateBlockScaling(const GemmConfig& config,
                                  const GemmForm& form) {
  if (form.scaling != GemmScaling::kBlock) return absl::OkStatus();
  if (!IsWarpSpecialized(config.schedule)) {
    return Rule("block scaling runs warp-specialized (ws, pp) kernels");
  }
  if (config.swap_ab) {
    return Rule(
        "block scaling does not swap A and B (A's scales are per row of the "
        "kernel's A)");
  }
  if (config.block_k != kScaleBlock) {
    return Rule(absl::StrCat("block scaling promotes one ", kScaleBlock,
                             "-k block a stage: block_k must be ",
                             kScaleBlock));
  }
  if (config.stream_k) {
    return Rule(
        "block scaling takes no stream-K (its fixup beside the scales "
        "spills registers: 52 bytes at 128x256)");
  }
  // Tiles start at multiples of block_n: the furthest a tile starts into a
  // column block is kScaleBlock - gcd(block_n, kScaleBlock).
  if (config.block_n - std::gcd(config.block_n, kScaleBlock) > kScaleBlock) {
    return Rule(absl::StrCat("a block-scaled tile spans at most two of B's ",
                             kScaleBlock, "-column scale blocks: block_n ",
                             config.block_n, " may span three"));
  }
  return absl::OkStatus();
}

constexpr int64_t kIntMin = std::numeric_limits<int>::min();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

}  // namespace

bool GemmConfig::operator==(const GemmConfig& other) const {
  return ConfigName(*this) == ConfigName(other);
}

std::string ConfigName(const GemmConfig& config) {
  const std::string tile =
      absl::StrCat(config.block_m, "x", config.block_n, "x", config.block_k);
  if (config.schedule == GemmSchedule::kV1) return absl::StrCat("v1 ", tile);
  return absl::StrCat(
      config.schedule == GemmSchedule::kPingPong ? "pp " : "ws ", tile, " s",
      config.stages, " c", config.consumers, " w", config.mma_groups_in_flight,
      " m", config.cluster_m, " ",
      config.epilogue == GemmEpilogue::kTmaStore ? "tma" : "direct",
      config.store_chunks != 0 ? absl::StrCat(" e", config.store_chunks) : "",
      config.tile_order == TileOrder::kHilbert
          ? " hilbert"
          : absl::StrCat(" g", config.raster_group),
      config.split_k > 1 ? absl::StrCat(" k", config.split_k) : "",
      config.split_k_in_cluster ? " dsmem" : "", config.stream_k ? " sk" : "",
      config.persistent ? " persistent" : " tiles",
      config.set_max_registers ? "" : " noregs", config.swap_ab ? " swap" : "");
}

absl::StatusOr<std::array<int64_t, 3>> ParseDimensions(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  std::array<int64_t, 3> sizes{};
  if (parts.size() != sizes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not MxNxK"));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!absl::SimpleAtoi(parts[i], &sizes[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not MxNxK"));
    }
  }
  return sizes;
}

absl::StatusOr<GemmConfig> WithTile(GemmConfig config, absl::string_view tile) {
  absl::StatusOr<std::array<int64_t, 3>> sizes = ParseDimensions(tile);
  if (!sizes.ok()) return sizes.status();
  for (int64_t size : *sizes) {
    if (size < kIntMin || size > kIntMax) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tile '", tile, "': ", size, " is outside ", kIntMin, "..", kIntMax));
    }
  }
  config.block_m = static_cast<int>((*sizes)[0]);
  config.block_n = static_cast<int>((*sizes)[1]);
  config.block_k = static_cast<int>((*sizes)[2]);
  return config;
}

// The option naming the tile order, written g# (raster) or hilbert.
constexpr char kTileOrderOption[] = "g#|hilbert";
constexpr char kWarpSpecializedSyntax[] =
    "ws|pp MxNxK s# c# w# m# direct|tma [e#] g#|hilbert [k# [dsmem]|sk] "
    "persistent|tiles [noregs] "
    "[swap]";

absl::StatusOr<GemmConfig> ParseConfigName(const std::string& name) {
  const std::vector<std::string> words = absl::StrSplit(name, ' ');
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM config '", name, "': ", why));
  };
  if (words.size() < 2 ||
      (words[0] != "v1" && words[0] != "ws" && words[0] != "pp")) {
    return bad(
        absl::StrCat("expected 'v1 MxNxK' or '", kWarpSpecializedSyntax, "'"));
  }
  GemmConfig config;
  config.schedule = words[0] == "v1"   ? GemmSchedule::kV1
                    : words[0] == "pp" ? GemmSchedule::kPingPong
                                       : GemmSchedule::kWarpSpecialized;
  absl::StatusOr<GemmConfig> tiled = WithTile(config, words[1]);
  if (!tiled.ok()) {
    return bad(absl::StrCat(tiled.status().message(),
                            " (the tile is written MxNxK, e.g. 128x128x64)"));
  }
  config = *tiled;
  if (config.schedule == GemmSchedule::kV1) {
    if (words.size() != 2) return bad("v1 takes only a tile");
    return config;
  }
  // Every option once; a name that leaves one out or gives it twice is
  // refused rather than read with a default the writer did not choose.
  std::set<std::string> given;
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.empty())
      return bad("empty option (separate options by one space)");
    std::string option = word.substr(0, 1);
    int* field = word[0] == 's'   ? &config.stages
                 : word[0] == 'c' ? &config.consumers
                 : word[0] == 'w' ? &config.mma_groups_in_flight
                 : word[0] == 'm' ? &config.cluster_m
                 : word[0] == 'g' ? &config.raster_group
                 : word[0] == 'k' ? &config.split_k
                 : word[0] == 'e' ? &config.store_chunks
                                  : nullptr;
    if (word == "hilbert") {
      config.tile_order = TileOrder::kHilbert;
    } else if (word == "direct" || word == "tma") {
      option = "direct|tma";
      config.epilogue =
          word == "tma" ? GemmEpilogue::kTmaStore : GemmEpilogue::kDirect;
    } else if (word == "persistent" || word == "tiles") {
      option = "persistent|tiles";
      config.persistent = word == "persistent";
    } else if (word == "sk") {
      option = word;
      config.stream_k = true;
    } else if (word == "dsmem") {
      option = word;
      config.split_k_in_cluster = true;
    } else if (word == "noregs") {
      option = word;
      config.set_max_registers = false;
    } else if (word == "swap") {
      option = word;
      config.swap_ab = true;
    } else if (field == nullptr) {
      return bad(absl::StrCat("unknown option '", word, "'"));
    } else if (!absl::SimpleAtoi(word.substr(1), field)) {
      return bad(absl::StrCat("option '", word, "' needs an int (", kIntMin,
                              "..", kIntMax, ") after '", option, "'"));
    }
    if (word[0] == 'g' || word == "hilbert") option = kTileOrderOption;
    if (!given.insert(option).second) {
      return bad(absl::StrCat("option '", option, "' given twice"));
    }
  }
  if (given.count("e") != 0 && config.store_chunks < 1) {
    return bad("e# counts chunks: 1 or more (leave it out to stage them all)");
  }
  for (const char* required : {"s", "c", "w", "m", "direct|tma",
                               kTileOrderOption, "persistent|tiles"}) {
    if (given.count(required) == 0) {
      return bad(absl::StrCat("missing option '", required, "' (",
                              kWarpSpecializedSyntax, ")"));
    }
  }
  return config;
}

bool IsGemmElement(ptx::ScalarType element) {
  switch (element) {
    case ptx::ScalarType::kF16:
    case ptx::ScalarType::kBF16:
    case ptx::ScalarType::kE4M3:
    case ptx::ScalarType::kE5M2:
    case ptx::ScalarType::kTF32:
    case ptx::ScalarType::kS8:
    case ptx::ScalarType::kU8:
      return true;
    default:
      return false;
  }
}

absl::Status CheckGemmElement(ptx::ScalarType element) {
  if (IsGemmElement(element)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("GEMM: element type must be f16, bf16, e4m3, e5m2, tf32, s8 "
                   "or u8, not ",
                   ptx::PtxName(element)));
}

absl::Status ValidateGemmConfig(const GemmConfig& config,
                                ptx::ScalarType element) {
  if (absl::Status valid = CheckGemmElement(element); !valid.ok()) return valid;
  absl::Status valid = ValidateEnumerations(config);
  if (valid.ok()) valid = ValidateTile(config, element);
  if (valid.ok()) {
    valid = config.schedule == GemmSchedule::kV1
                ? ValidateV1(config)
                : ValidateWarpSpecialized(config);
  }
  if (valid.ok()) valid = ValidateRegisterBudget(config, element);
  return valid.ok() ? valid : Unsupported(config, valid.message());
}

namespace {

// A grouped kernel counts its units as it walks the groups: one
// persistent, warp-specialized grid of whole tiles (no split-K or stream-K,
// which plan units ahead), A and B in their roles (a swap would put the
// groups' rows along N). Its stores stop at each group's last row: a TMA
// store copies a tile that crosses it row by row (store_staged_rows).
absl::Status GroupedConfigRule(const GemmConfig& config, const GemmForm& form) {
  if (!IsGrouped(form)) return absl::OkStatus();
  const char* broken =
      !IsWarpSpecialized(config.schedule) ? "a warp-specialized schedule"
      : config.split_k != 1 || config.stream_k || config.split_k_in_cluster
          ? "whole tiles (no split-K or stream-K)"
      : config.swap_ab     ? "A and B unswapped"
      : !config.persistent ? "a persistent grid"
                           : nullptr;
  if (broken == nullptr) return absl::OkStatus();
  return Unsupported(config,
                     absl::StrCat("a grouped GEMM (", FormName(form),
                                  ") walks its groups' tiles in one kernel: "
                                  "it needs ",
                                  broken));
}

}  // namespace

absl::Status ValidateGemmConfigForForm(const GemmConfig& config,
                                       const GemmForm& form) {
  if (absl::Status valid = ValidateGemmForm(form); !valid.ok()) return valid;
  if (absl::Status valid = ValidateGemmConfig(config, form.element);
      !valid.ok()) {
    return valid;
  }
  const GemmForm kernel = KernelForm(config, form);
  if (absl::Status promotion = ValidatePromotion(config, form);
      !promotion.ok()) {
    return Unsupported(config, promotion.message());
  }
  if (absl::Status block = ValidateBlockScaling(config, form); !block.ok()) {
    return Unsupported(config, block.message());
  }
  if (ReducesSlicesInWorkspace(config) &&
      (HasEpilogueOps(kernel) || kernel.output != kernel.element ||
       ptx::SizeInBytes(kernel.output) != 2 || kernel.d_transposed ||
       kernel.scaling != GemmScaling::kNone || kernel.records_amax)) {
    return Unsupported(config,
                       absl::StrCat("split-K rounds its sums in a reduce "
                                    "kernel that computes the plain "
                                    "form only (D = alpha * A.B in a 16-bit "
                                    "input type, stored [m, n]), not ",
                                    FormName(kernel)));
  }
  if (absl::Status grouped = GroupedConfigRule(config, form); !grouped.ok()) {
    return grouped;
  }
  if (config.epilogue == GemmEpilogue::kTmaStore && !TmaStoreComputes(kernel)) {
    return Unsupported(
        config, absl::StrCat("the TMA-store epilogue stores 16-bit D [m, n] "
                             "(stmatrix); use 'direct' for ",
                             FormName(kernel)));
  }
  const GemmLayout layout = PlanGemmLayout(config, kernel);
  for (const ptx::SharedTile* tile : {&layout.a_tile, &layout.b_tile}) {
    absl::StatusOr<ptx::TileLayout> described = ptx::DescribeTile(*tile);
    if (!described.ok()) {
      return Unsupported(config, std::string(described.status().message()));
    }
    // A 2-CTA cluster loads half of B's columns in each CTA.
    if (tile == &layout.b_tile && tile->major == ptx::MajorOrder::kMN &&
        config.cluster_m == 2 && described->columns % 2 != 0) {
      return Unsupported(
          config,
          absl::StrCat(
              "an MN-major B in a 2-CTA cluster needs an even number of ",
              described->span_bytes, "-byte columns (block_n a multiple of ",
              2 * described->box_inner_elements, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status Unsupported(const GemmConfig& config, absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("GEMM config '", ConfigName(config), "': ", rule));
}

}  // namespace ptxgen::gen
