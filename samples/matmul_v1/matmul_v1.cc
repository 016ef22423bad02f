// The tutorial's V1 kernel ("TMA + WGMMA, one stage", the seed) as ptxgen
// generates it, walked through step by step:
//
//   matmul_v1 [--m=4096] [--n=4096] [--k=4096] [--dtype=f16|bf16]
//
// Every figure and every line of CUDA it prints comes from the library
// (ValidateGemmConfig, DescribeTile, GenerateGemm, the kernel cache), never
// from a copy kept here, so the walkthrough stays true as the generator
// changes. Generation and compilation need no GPU; the run is skipped, with
// exit status 0, when there is no driver or no device.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/ptx/wgmma.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::samples {
namespace {

// The tile the seed's autotuner settled on (its tutorial: "a 128 x 128 tile
// with block_k=64").
constexpr char kSeedConfig[] = "v1 128x128x64";

constexpr char kUsage[] =
    "usage: matmul_v1 [--m=N] [--n=N] [--k=N] [--dtype=f16|bf16]\n"
    "Walks through the seed's V1 GEMM (TMA + WGMMA, one stage) as ptxgen\n"
    "generates it, compiles it, and runs it beside cuBLAS when a Hopper GPU\n"
    "is present. Sizes default to 4096; k must be a multiple of 8.\n";

struct Options {
  gemm::GemmProblem problem{4096, 4096, 4096, ptx::ScalarType::kF16};
  bool help = false;
};

absl::Status ParseSize(absl::string_view name, absl::string_view value,
                       int64_t& size) {
  if (absl::SimpleAtoi(value, &size)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, "=", value, " is not an integer"));
}

absl::StatusOr<Options> ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::pair<absl::string_view, absl::string_view> flag =
        absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    const absl::string_view name = flag.first, value = flag.second;
    absl::Status parsed;
    if (argv[i] == absl::string_view("--help") ||
        argv[i] == absl::string_view("-h")) {
      options.help = true;
    } else if (name == "--m") {
      parsed = ParseSize("m", value, options.problem.m);
    } else if (name == "--n") {
      parsed = ParseSize("n", value, options.problem.n);
    } else if (name == "--k") {
      parsed = ParseSize("k", value, options.problem.k);
    } else if (name == "--dtype") {
      absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(value);
      parsed = type.status();
      if (type.ok()) options.problem.element = *type;
    } else {
      parsed = absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", argv[i], "' (--help lists them)"));
    }
    if (!parsed.ok()) return parsed;
  }
  // The problem's own rules (sizes, f16/bf16, k a multiple of 8) live in
  // the GEMM layer; ask it rather than repeat them.
  absl::Status valid = gemm::ValidateProblem(options.problem);
  if (!valid.ok()) return valid;
  return options;
}

void Heading(int step, absl::string_view title, absl::string_view seed) {
  absl::PrintF("\n== %d. %s ==\n   seed: %s\n\n", step, title, seed);
}

// ---- Searching the generated source ----
// The excerpts are found in the text GenerateGemm returns, so they show
// exactly what NVRTC compiles.

int LineNumber(absl::string_view text, size_t position) {
  int line = 1;
  for (size_t i = 0; i < position && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

size_t LineStart(absl::string_view text, size_t position) {
  const size_t newline = text.rfind('\n', position);
  return newline == absl::string_view::npos ? 0 : newline + 1;
}

// Just past the '}' closing the '{' at `open`. String literals and comments
// are skipped: the inline asm strings carry braces of their own.
absl::StatusOr<size_t> PastMatchingBrace(absl::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == absl::string_view::npos) break;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}' && --depth == 0) {
      return i + 1;
    }
  }
  return absl::NotFoundError("unbalanced braces in the generated source");
}

// A run of whole lines of the generated source.
struct Excerpt {
  int first_line = 0;
  std::string text;
  size_t end = 0;  // offset in the source just past the excerpt
};

// From the line holding the first `start` at or after offset `from`
// through the brace that closes the first block opened after it.
absl::StatusOr<Excerpt> BlockExcerpt(absl::string_view source,
                                     absl::string_view start, size_t from = 0) {
  const size_t at = source.find(start, from);
  const size_t open = at == absl::string_view::npos ? at : source.find('{', at);
  if (open == absl::string_view::npos) {
    return absl::NotFoundError(
        absl::StrCat("the generated kernel has no '", start,
                     "' block; this sample is out of date with the generator"));
  }
  absl::StatusOr<size_t> end = PastMatchingBrace(source, open);
  if (!end.ok()) return end.status();
  const size_t first = LineStart(source, at);
  return Excerpt{LineNumber(source, first),
                 std::string(source.substr(first, *end - first)), *end};
}

void PrintExcerpt(const Excerpt& excerpt) {
  int line = excerpt.first_line;
  for (absl::string_view text : absl::StrSplit(excerpt.text, '\n')) {
    absl::PrintF("  %4d | %s\n", line++, text);
  }
}

// Source line numbers of the excerpt's lines that contain `needle`.
std::vector<int> LinesWith(const Excerpt& excerpt, absl::string_view needle) {
  std::vector<int> lines;
  int line = excerpt.first_line;
  for (absl::string_view text : absl::StrSplit(excerpt.text, '\n')) {
    if (absl::StrContains(text, needle)) lines.push_back(line);
    ++line;
  }
  return lines;
}

// The excerpt's lines up to and including the first that holds `needle`.
Excerpt Head(const Excerpt& excerpt, absl::string_view needle) {
  std::vector<absl::string_view> lines;
  for (absl::string_view line : absl::StrSplit(excerpt.text, '\n')) {
    lines.push_back(line);
    if (absl::StrContains(line, needle)) break;
  }
  return Excerpt{excerpt.first_line, absl::StrJoin(lines, "\n"), excerpt.end};
}

int Occurrences(absl::string_view text, absl::string_view needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// A number of the generator's plan (what the kernel reads as plan::<name>).
absl::StatusOr<int> Planned(const gen::GeneratedGemm& generated,
                            absl::string_view name) {
  for (const gen::PlannedConstant& constant : generated.plan) {
    int value = 0;
    if (constant.name == name &&
        absl::SimpleAtoi(absl::StripSuffix(constant.value, "u"), &value)) {
      return value;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("the generator planned no ", name,
                   "; this sample is out of date with it"));
}

// ---- 1. The configuration ----

absl::Status PrintSeedSpace(ptx::ScalarType element) {
  absl::PrintF(
      "ptxgen's v1 schedule runs one warpgroup (128 threads) per CTA, like\n"
      "the seed's warps = 4, so every fp32 accumulator of the block tile\n"
      "lives in those 128 threads' registers. gen::ValidateGemmConfig on\n"
      "each of the seed's 15 choices, for %s:\n\n",
      ptx::PtxName(element));
  for (const gen::GemmConfig& config : gemm::V1SeedSpace()) {
    const std::string name = gen::ConfigName(config);
    const absl::Status verdict = gen::ValidateGemmConfig(config, element);
    const std::string why = std::string(absl::StripPrefix(
        verdict.message(), absl::StrCat("GEMM config '", name, "': ")));
    absl::PrintF("  %-15s %s\n", name,
                 verdict.ok() ? "accepted" : absl::StrCat("refused: ", why));
  }
  absl::PrintF(
      "\n  gemm::V1CandidateConfigs keeps the %d accepted ones; "
      "`ptxgen gemm --schedule=v1 --autotune` times them on a GPU.\n",
      gemm::V1CandidateConfigs(element).size());
  return absl::OkStatus();
}

absl::StatusOr<gen::GemmConfig> ExplainConfiguration(
    const gemm::GemmProblem& problem) {
  Heading(1, "The configuration",
          "@tilus.autotune(\"block_m, block_n\", [...]) x "
          "@tilus.autotune(\"block_k\", [16, 32, 64])");
  if (absl::Status space = PrintSeedSpace(problem.element); !space.ok()) {
    return space;
  }
  absl::StatusOr<gen::GemmConfig> config = gen::ParseConfigName(kSeedConfig);
  if (!config.ok()) return config.status();
  if (absl::Status valid = gen::ValidateGemmConfig(*config, problem.element);
      !valid.ok()) {
    return valid;
  }
  if (absl::Status fits = gemm::CheckConfigFitsProblem(*config, problem);
      !fits.ok()) {
    return fits;
  }
  const int accumulators =
      config->block_m / ptx::kWgmmaM *
      ptx::WgmmaAccumulatorRegisters(ptx::ScalarType::kF32, config->block_n);
  const gen::GemmGrid grid =
      gen::GemmLaunchGrid(*config, problem.m, problem.n, 1);
  absl::PrintF(
      "\nChosen: \"%s\", the tile the seed's autotuner settled on; ptxgen's\n"
      "default v1 config (gen::GemmConfig{}) is \"%s\". It needs %d fp32\n"
      "accumulators per thread, leaving room below the 255-register limit.\n",
      gen::ConfigName(*config), gen::ConfigName(gen::GemmConfig{}),
      accumulators);
  absl::PrintF(
      "Problem %dx%dx%d %s: grid %d x %d CTAs (the seed's self.attrs.blocks =\n"
      "[cdiv(m, block_m), cdiv(n, block_n)]), %d steps of K each.\n",
      problem.m, problem.n, problem.k, ptx::PtxName(problem.element), grid.x,
      grid.y, (problem.k + config->block_k - 1) / config->block_k);
  return config;
}

// ---- 2. Shared tensors, descriptors and the mbarrier ----

// The A and B tiles as the kernel's TMA loads write them: K-major, in the
// swizzle the generator chose for the boxes.
std::pair<ptx::SharedTile, ptx::SharedTile> OperandTiles(
    const gen::GeneratedGemm& generated) {
  const gen::GemmConfig& config = generated.config;
  return {{generated.form.element, config.block_m, config.block_k,
           ptx::MajorOrder::kK, generated.a_box.swizzle},
          {generated.form.element, config.block_n, config.block_k,
           ptx::MajorOrder::kK, generated.b_box.swizzle}};
}

absl::StatusOr<ptx::TileLayout> PrintOperandTile(absl::string_view label,
                                                 const ptx::SharedTile& tile) {
  absl::StatusOr<ptx::TileLayout> layout = ptx::DescribeTile(tile);
  if (!layout.ok()) return layout.status();
  absl::StatusOr<uint64_t> descriptor =
      ptx::EncodeMatrixDescriptor(layout->descriptor);
  if (!descriptor.ok()) return descriptor.status();
  const ptx::MatrixDescriptor decoded =
      ptx::DecodeMatrixDescriptor(*descriptor);
  absl::PrintF(
      "  %s tile [%d x %d] %s, K-major: %d bytes, base aligned to %d\n"
      "    %d column(s) %d bytes wide, one TMA box of %d x %d elements each\n"
      "    span %d B, swizzle %s, LBO %u B, SBO %u B\n"
      "    descriptor template 0x%016x, start address 0 (the kernel ORs in\n"
      "      the tile's shared address); decoded back: LBO %u B, SBO %u B, "
      "swizzle %s\n",
      label, tile.mn_extent, tile.k_extent, ptx::PtxName(tile.type),
      layout->tile_bytes, layout->alignment_bytes, layout->columns,
      layout->span_bytes, layout->box_inner_elements, layout->rows,
      layout->span_bytes, ptx::SwizzleName(layout->descriptor.swizzle),
      layout->descriptor.leading_byte_offset,
      layout->descriptor.stride_byte_offset, *descriptor,
      decoded.leading_byte_offset, decoded.stride_byte_offset,
      ptx::SwizzleName(decoded.swizzle));
  return layout;
}

// The generator's placement of the tiles and the barrier, from the plan it
// returns beside the source, checked against the tile sizes DescribeTile
// gives.
absl::Status PrintSharedPlan(const gen::GeneratedGemm& generated, int a_bytes,
                             int b_bytes) {
  absl::StatusOr<int> a = Planned(generated, "kAOffset");
  absl::StatusOr<int> b = Planned(generated, "kBOffset");
  absl::StatusOr<int> barrier = Planned(generated, "kBarrierOffset");
  for (const absl::StatusOr<int>* offset : {&a, &b, &barrier}) {
    if (!offset->ok()) return offset->status();
  }
  if (*a + a_bytes > *b || *b + b_bytes > *barrier) {
    return absl::InternalError(
        absl::StrCat("the generated kernel overlaps its shared buffers: A at +",
                     *a, ", B at +", *b, ", barrier at +", *barrier));
  }
  absl::PrintF(
      "\n  shared memory, %d bytes dynamic, alignment slack included:\n"
      "    +%-6d sa: A tile, %d bytes\n"
      "    +%-6d sb: B tile, %d bytes\n"
      "    +%-6d tma_barrier: one 8-byte mbarrier, after every TMA "
      "destination\n\n"
      "  The seed keeps sa and sb allocated to the end for one reason:\n"
      "  freed, their slots could take the mbarrier, which the TMA engine\n"
      "  would then overwrite. ptxgen fixes the whole plan at generation time\n"
      "  and always puts the barriers after the last TMA destination.\n",
      generated.shared_bytes, *a, a_bytes, *b, b_bytes, *barrier);
  return absl::OkStatus();
}

absl::Status ExplainSharedMemory(const gen::GeneratedGemm& generated) {
  Heading(2, "Shared tensors, their descriptors, and the mbarrier",
          "sa = self.shared_tensor(...); sb = ...; "
          "tma_barrier = self.mbarrier.alloc(counts=[1])");
  const gen::GemmConfig& config = generated.config;
  const auto [a_tile, b_tile] = OperandTiles(generated);
  absl::PrintF(
      "Tilus derives wgmma's 64-bit descriptor from the shared tensor's\n"
      "layout; ptxgen derives it from ptx::DescribeTile and\n"
      "ptx::EncodeMatrixDescriptor. A row of a tile is %d bytes of K, so TMA\n"
      "writes it %s-swizzled and the descriptor reads it back with the same\n"
      "swizzle. B is stored [N][K] like A: the seed's sb.transpose() moves\n"
      "no data, wgmma reads B K-major.\n"
      "SBO steps from one 8-row swizzle pattern to the next (8 x span); LBO\n"
      "is unused by swizzled K-major tiles (an instruction's K stays inside\n"
      "one pattern row), so it holds the conventional 16.\n\n",
      config.block_k * ptx::SizeInBytes(generated.form.element),
      ptx::SwizzleName(generated.a_box.swizzle));
  absl::StatusOr<ptx::TileLayout> a = PrintOperandTile("A (sa)", a_tile);
  if (!a.ok()) return a.status();
  absl::StatusOr<ptx::TileLayout> b = PrintOperandTile("B (sb)", b_tile);
  if (!b.ok()) return b.status();
  return PrintSharedPlan(generated, a->tile_bytes, b->tile_bytes);
}

// ---- 3. The main loop ----

// Each seed statement of the loop and a text that finds its counterpart in
// the generated loop (device-function names from the instruction layer).
struct SeedStatement {
  const char* seed;
  const char* needle;
};

constexpr SeedStatement kLoopMap[] = {
    {"for offset_k in range(0, k_size, block_k):", "for (int k0"},
    {"with self.single_thread():", "if (threadIdx.x == 0)"},
    {"self.mbarrier.arrive_and_expect_tx(tma_barrier, sa.nbytes + sb.nbytes)",
     "mbarrier_arrive_expect_tx("},
    {"self.tma.global_to_shared(src=ga, dst=sa, offsets=[offset_m, offset_k])",
     "tma_load_2d(a_tile"},
    {"self.tma.global_to_shared(src=gb, dst=sb, offsets=[offset_n, offset_k])",
     "tma_load_2d(b_tile"},
    {"self.mbarrier.wait(tma_barrier, phase=phase)", "mbarrier_wait("},
    {"self.sync()  (both)", "__syncthreads();"},
    {"self.wgmma.fence(); .mma(sa, sb.transpose(), acc); .commit_group()",
     "accumulate_stage("},
    {"self.wgmma.wait_group(0)", "wgmma_wait_group_0();"},
    {"phase ^= 1", "phase ^="},
    {"(no seed line: the accumulator pins, below)", "wgmma_pin_"},
};

absl::StatusOr<Excerpt> ShowMainLoop(const gen::GeneratedGemm& generated) {
  Heading(3, "The main loop: TMA loads on the mbarrier, then wgmma",
          "for offset_k in range(0, k_size, block_k): ... phase ^= 1");
  absl::StatusOr<Excerpt> loop = BlockExcerpt(generated.source, "for (int k0");
  if (!loop.ok()) return loop.status();
  const gen::GemmConfig& config = generated.config;
  absl::PrintF(
      "From the generated source (`ptxgen gemm --schedule=v1 --emit=cuda` "
      "prints it all):\n\n");
  PrintExcerpt(*loop);
  absl::PrintF("\nSeed statement -> generated line(s):\n");
  for (const SeedStatement& statement : kLoopMap) {
    const std::vector<int> lines = LinesWith(*loop, statement.needle);
    if (lines.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "the generated loop has no line with '", statement.needle,
          "'; this sample is out of date with the generator"));
    }
    absl::PrintF("  %-74s -> %s\n", statement.seed, absl::StrJoin(lines, ", "));
  }
  absl::PrintF(
      "\nThe wgmma_pin_ lines are empty asm statements that name acc as read\n"
      "and written, so the compiler keeps every use of acc on the right side\n"
      "of the fence and the wait (else ptxas injects waits: C7517/C7519).\n"
      "\nThe expected bytes are sa.nbytes + sb.nbytes = (%d + %d) x %d x %d\n"
      "= %d. TMA coordinates run innermost first, {k0, m0}, where the seed\n"
      "writes offsets=[offset_m, offset_k]. Each TMA completes its bytes on\n"
      "the barrier; the wait's parity flips with phase, once per K step.\n",
      config.block_m, config.block_n, config.block_k,
      ptx::SizeInBytes(generated.form.element),
      (config.block_m + config.block_n) * config.block_k *
          ptx::SizeInBytes(generated.form.element));
  return loop;
}

// ---- 4. The wgmma protocol ----

// The name of the device function an excerpt defines, as the loop calls it.
absl::StatusOr<std::string> FunctionName(const Excerpt& function) {
  const absl::string_view text = function.text;
  const size_t void_at = text.find("void ");
  const size_t open = text.find('(', void_at);
  if (void_at == absl::string_view::npos || open == absl::string_view::npos) {
    return absl::NotFoundError(absl::StrCat(
        "no function definition in the excerpt at line ", function.first_line,
        "; this sample is out of date with the generator"));
  }
  return std::string(text.substr(void_at + 5, open - void_at - 5));
}

absl::Status PrintOperandSteps(const gen::GeneratedGemm& generated) {
  const gen::GemmConfig& config = generated.config;
  absl::StatusOr<int> instruction_k = ptx::WgmmaK(generated.form.element);
  if (!instruction_k.ok()) return instruction_k.status();
  const auto [a_tile, b_tile] = OperandTiles(generated);
  absl::PrintF(
      "\nwgmma.mma(sa, sb.transpose(), acc) on a %dx%dx%d tile is %d slices\n"
      "of 64 rows x %d K steps of %d. Each operand starts at the byte offset\n"
      "ptx::TileOperandOffset gives, added to the descriptor >> 4:\n",
      config.block_m, config.block_n, config.block_k,
      config.block_m / ptx::kWgmmaM, config.block_k / *instruction_k,
      *instruction_k);
  for (int k = 0; k < config.block_k; k += *instruction_k) {
    for (int row = 0; row < config.block_m; row += ptx::kWgmmaM) {
      absl::StatusOr<uint32_t> a = ptx::TileOperandOffset(a_tile, row, k);
      absl::StatusOr<uint32_t> b = ptx::TileOperandOffset(b_tile, 0, k);
      if (!a.ok()) return a.status();
      if (!b.ok()) return b.status();
      absl::PrintF(
          "    K %2d..%2d, A rows %3d..%3d at +%5u B, B at +%4u B "
          "-> a_desc + %u, b_desc + %u\n",
          k, k + *instruction_k - 1, row, row + ptx::kWgmmaM - 1, *a, *b,
          *a >> 4, *b >> 4);
    }
  }
  return absl::OkStatus();
}

absl::Status ShowWgmma(const gen::GeneratedGemm& generated,
                       const Excerpt& loop) {
  Heading(4, "The wgmma protocol: fence, mma, commit_group, wait_group(0)",
          "self.wgmma.fence(); self.wgmma.mma(sa, sb.transpose(), acc); "
          "self.wgmma.commit_group(); self.wgmma.wait_group(0)");
  absl::StatusOr<Excerpt> function =
      BlockExcerpt(generated.source, "// wgmma.mma_async");
  if (!function.ok()) return function.status();
  absl::PrintF(
      "The mma device function, rendered from the instruction layer's\n"
      "statement (ptx::WgmmaMmaAsync): its slots d, a, b, scale_d become asm\n"
      "operands; the trailing immediates are scale-a, scale-b, and transpose\n"
      "A and B (0: both K-major).\n\n");
  PrintExcerpt(*function);
  absl::StatusOr<std::string> name = FunctionName(*function);
  if (!name.ok()) return name.status();
  absl::StatusOr<Excerpt> stage =
      BlockExcerpt(generated.source, "void mma_stage(");
  if (!stage.ok()) return stage.status();
  absl::PrintF(
      "\nThe loop calls accumulate_stage once per K step (%d call): its\n"
      "mma_stage issues %d calls of %s, all between one fence and one\n"
      "commit_group; the loop then waits for all of them.\n",
      Occurrences(loop.text, "accumulate_stage("),
      Occurrences(stage->text, absl::StrCat(*name, "(")), *name);
  if (absl::Status steps = PrintOperandSteps(generated); !steps.ok()) {
    return steps;
  }
  absl::PrintF(
      "\nwait_group(0) retires every group before the trailing __syncthreads,\n"
      "which is what makes it safe for the next TMA to overwrite sa and sb.\n");
  return absl::OkStatus();
}

// ---- 5. The epilogue ----

absl::Status ShowEpilogue(const gen::GeneratedGemm& generated,
                          const Excerpt& loop) {
  Heading(5, "The epilogue: cast to the input type and store",
          "casted_acc = self.cast(acc, dtype=float16); "
          "self.store_global(gc, casted_acc, offsets=[offset_m, offset_n])");
  // The direct store strategy the kernel calls after the K loop.
  absl::StatusOr<Excerpt> epilogue =
      BlockExcerpt(generated.source, "void store_tile(");
  if (!epilogue.ok()) return epilogue.status();
  absl::PrintF(
      "Each thread holds its accumulators where the wgmma fragment layout put\n"
      "them (ptx::AccumulatorFragment); the epilogue stores them from\n"
      "registers, clipped to m x n:\n\n");
  PrintExcerpt(Head(*epilogue, "store_pair("));
  absl::PrintF(
      "         ... %d store_pair calls in all, one per accumulator pair.\n\n"
      "store_pair rounds with cvt.rn (the seed's self.cast) and writes one\n"
      "4-byte pair when C's rows allow it (the seed's self.store_global).\n",
      Occurrences(epilogue->text, "store_pair("));
  return absl::OkStatus();
}

// ---- 6. Compilation ----

const char* CacheSourceName(compile::CacheSource source) {
  switch (source) {
    case compile::CacheSource::kCompiled:
      return "miss: compiled now by NVRTC and ptxas";
    case compile::CacheSource::kMemoryCache:
      return "hit (memory)";
    case compile::CacheSource::kDiskCache:
      return "hit (disk)";
  }
  return "unknown";
}

void PrintDiagnostics(const compile::CompiledModule& module) {
  if (module.diagnostics.empty()) {
    absl::PrintF(
        "  ptxas diagnostics: none (no serialized wgmma, no injected "
        "waits)\n");
  }
  for (const compile::CompilerDiagnostic& diagnostic : module.diagnostics) {
    absl::PrintF("  ptxas diagnostic %s: %s\n",
                 diagnostic.code.empty() ? "-" : diagnostic.code,
                 diagnostic.message);
  }
  for (const std::string& warning : module.cache_warnings) {
    absl::PrintF("  cache warning: %s\n", warning);
  }
}

// The same request Gemm::Prepare makes, so a later Prepare finds it cached.
absl::Status CompileKernel(const gen::GeneratedGemm& generated) {
  Heading(6, "Compilation: NVRTC, ptxas, the kernel cache",
          "(no line in the script: Tilus compiles it behind the call)");
  compile::KernelCache& cache = compile::KernelCache::Default();
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> module =
      cache.GetOrCompile(generated.kernel_name, generated.source,
                         compile::CompileOptions{});
  if (!module.ok()) return module.status();
  const compile::CompiledModule& compiled = **module;
  absl::PrintF(
      "  kernel %s, %s, %d threads, %d bytes of dynamic shared "
      "memory\n  cache: %s (%.1f ms), directory %s\n",
      generated.kernel_name, compiled.options.arch, generated.threads_per_block,
      generated.shared_bytes, CacheSourceName(compiled.source),
      compiled.compile_ms,
      cache.config().disk_enabled ? cache.config().directory
                                  : "(disk cache off)");
  for (const compile::KernelResources& kernel : compiled.resources) {
    absl::PrintF(
        "  %s: %d registers, spill stores %d B, spill loads %d B, "
        "stack frame %d B, static shared %d B\n",
        kernel.kernel, kernel.registers, kernel.spill_store_bytes,
        kernel.spill_load_bytes, kernel.stack_frame_bytes,
        kernel.static_shared_bytes);
  }
  PrintDiagnostics(compiled);
  return absl::OkStatus();
}

// ---- 7. The run ----

absl::Status RunOnGpu(const gemm::GemmProblem& problem,
                      const gen::GemmConfig& config) {
  Heading(7, "The run: random inputs, checked and timed beside cuBLAS",
          "the tutorial's Performance section (CUDA-event timed, compared "
          "with cuBLAS)");
  // Runs here with a driver and a device sm_90a code runs on.
  if (const absl::Status here = runtime::CheckDeviceRuns(0, "sm_90a");
      !here.ok()) {
    absl::PrintF("  run skipped: %s\n", here.message());
    return absl::OkStatus();
  }
  gemm::GemmOptions options;
  options.config = config;
  absl::StatusOr<gemm::Gemm> gemm = gemm::Gemm::Prepare(problem, options);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<gemm::CublasComparison> compared =
      gemm::CompareWithCublas(*gemm);
  if (!compared.ok()) return compared.status();
  absl::PrintF("  relative error vs cuBLAS: %.2e (bound %.0e)\n",
               compared->relative_error, compared->error_bound);
  if (!compared->passed()) {
    return absl::InternalError(absl::StrFormat(
        "the v1 kernel's result differs from cuBLAS's: relative error %.2e, "
        "bound %.0e",
        compared->relative_error, compared->error_bound));
  }
  const double ours = compared->milliseconds;
  const double theirs = compared->cublas_milliseconds;
  absl::PrintF("  ptxgen v1: %.4f ms, %.0f TFLOP/s\n", ours,
               gemm::Tflops(problem, ours));
  absl::PrintF("  cuBLAS:    %.4f ms, %.0f TFLOP/s\n", theirs,
               gemm::Tflops(problem, theirs));
  absl::PrintF("  ratio (cuBLAS time / v1 time): %.3f\n", theirs / ours);
  return absl::OkStatus();
}

absl::Status Walkthrough(const gemm::GemmProblem& problem) {
  absl::StatusOr<gen::GemmConfig> config = ExplainConfiguration(problem);
  if (!config.ok()) return config.status();
  absl::StatusOr<gen::GeneratedGemm> generated =
      gen::GenerateGemm(*config, problem.element);
  if (!generated.ok()) return generated.status();
  if (absl::Status shared = ExplainSharedMemory(*generated); !shared.ok()) {
    return shared;
  }
  absl::StatusOr<Excerpt> loop = ShowMainLoop(*generated);
  if (!loop.ok()) return loop.status();
  if (absl::Status wgmma = ShowWgmma(*generated, *loop); !wgmma.ok()) {
    return wgmma;
  }
  if (absl::Status epilogue = ShowEpilogue(*generated, *loop); !epilogue.ok()) {
    return epilogue;
  }
  if (absl::Status compiled = CompileKernel(*generated); !compiled.ok()) {
    return compiled;
  }
  return RunOnGpu(problem, *config);
}

}  // namespace
}  // namespace ptxgen::samples

int main(int argc, char** argv) {
  absl::StatusOr<ptxgen::samples::Options> options =
      ptxgen::samples::ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "matmul_v1: %s\n",
                 std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(ptxgen::samples::kUsage, stdout);
    return 0;
  }
  if (absl::Status done = ptxgen::samples::Walkthrough(options->problem);
      !done.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "matmul_v1: %s\n", done.ToString().c_str());
    return 1;
  }
  return 0;
}
