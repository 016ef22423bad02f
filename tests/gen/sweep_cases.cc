#include "tests/gen/sweep_cases.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gemm/target.h"

namespace ptxgen::sweep {
namespace {

using ptx::ScalarType;

gemm::GemmProblem Problem(int64_t m, int64_t n, int64_t k, ScalarType element) {
  return gemm::GemmProblem{m, n, k, element};
}

void AddPick(const gemm::GemmProblem& problem, KernelSweep& sweep) {
  sweep.Add(gemm::HeuristicConfig(problem, gemm::GemmTarget::H200()),
            gemm::FormOf(problem));
}

void AddCandidates(const gemm::GemmProblem& problem, KernelSweep& sweep) {
  for (const gen::GemmConfig& config :
       gemm::CandidateConfigs(problem, gemm::GemmTarget::H200())) {
    sweep.Add(config, gemm::FormOf(problem));
  }
}

// The plain f16/bf16 shapes: large, square, skinny (swapped and not).
std::vector<gemm::GemmProblem> PlainShapes(ScalarType element) {
  return {
      Problem(8192, 8192, 8192, element), Problem(2048, 2048, 2048, element),
      Problem(64, 8192, 4096, element),   Problem(1000, 1000, 1000, element),
      Problem(8, 8192, 4096, element),    Problem(4096, 24, 4096, element)};
}

// The plain picks, and their Hilbert-ordered variants (the order is the
// caller's to name).
void AddPlainPicks(KernelSweep& sweep) {
  for (ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
    for (const gemm::GemmProblem& problem : PlainShapes(element)) {
      gen::GemmConfig pick =
          gemm::HeuristicConfig(problem, gemm::GemmTarget::H200());
      sweep.Add(pick, gemm::FormOf(problem));
      pick.tile_order = gen::TileOrder::kHilbert;
      sweep.Add(pick, gemm::FormOf(problem));
    }
  }
}

// Both majors and every epilogue, on shapes that take each kind of tile.
void AddLayoutAndEpiloguePicks(KernelSweep& sweep) {
  for (const gemm::GemmProblem& shape :
       {Problem(8192, 8192, 8192, ScalarType::kF16),
        Problem(2048, 2048, 2048, ScalarType::kBF16),
        Problem(64, 8192, 4096, ScalarType::kF16),
        Problem(1000, 1000, 1000, ScalarType::kBF16),
        Problem(13, 4096, 4096, ScalarType::kBF16),
        Problem(4096, 5, 1024, ScalarType::kF16)}) {
    gemm::GemmProblem a_mn = shape, b_mn = shape, both = shape, fused = shape,
                      full = shape;
    a_mn.a_major = ptx::MajorOrder::kMN;
    b_mn.b_major = ptx::MajorOrder::kMN;
    both.a_major = both.b_major = ptx::MajorOrder::kMN;
    fused.b_major = ptx::MajorOrder::kMN;
    fused.bias = gen::BiasAlong::kN;
    fused.activation = gen::Activation::kGelu;
    fused.output = ScalarType::kF32;
    full.beta = 0.5f;
    full.bias = gen::BiasAlong::kM;
    full.bias_type = ScalarType::kBF16;
    full.activation = gen::Activation::kSilu;
    full.batch = 3;
    for (const gemm::GemmProblem& p : {a_mn, b_mn, both, fused, full}) {
      AddPick(p, sweep);
    }
  }
}

// fp8 and tf32, plain and with a bias and SiLU (a C read through the TMA
// store spills on some tiles whatever the input type: bench/RESULTS.md,
// known problems); fp8 D, scaled, with the amax, and the amax of a bf16 D
// through the TMA store.
void AddFp8AndTf32Picks(KernelSweep& sweep) {
  for (ScalarType element : {ScalarType::kE4M3, ScalarType::kTF32}) {
    for (const gemm::GemmProblem& shape :
         {Problem(2048, 2048, 2048, element),
          Problem(1000, 1000, 1000, element), Problem(256, 256, 16384, element),
          Problem(4096, 24, 4096, element)}) {
      gemm::GemmProblem fused = shape;
      fused.bias = gen::BiasAlong::kN;
      fused.activation = gen::Activation::kSilu;
      AddPick(shape, sweep);
      AddPick(fused, sweep);
    }
  }
  for (const gemm::GemmProblem& shape :
       {Problem(8192, 8192, 8192, ScalarType::kE4M3),
        Problem(16, 4096, 4096, ScalarType::kE4M3),
        Problem(1000, 1000, 1000, ScalarType::kE5M2),
        Problem(4096, 4096, 4096, ScalarType::kBF16)}) {
    gemm::GemmProblem recorded = shape;
    recorded.record_amax = true;
    if (ptx::IsFp8(shape.element)) {
      recorded.output = ScalarType::kE4M3;
      recorded.scaling = gen::GemmScaling::kTensor;
    }
    gemm::GemmProblem fused = recorded;
    fused.bias = gen::BiasAlong::kN;
    fused.activation = gen::Activation::kGelu;
    AddPick(recorded, sweep);
    AddPick(fused, sweep);
  }
}

gemm::GemmProblem BlockScaled(int64_t m, int64_t n, int64_t k) {
  gemm::GemmProblem p = Problem(m, n, k, ScalarType::kE4M3);
  p.scaling = gen::GemmScaling::kBlock;
  return p;
}

// Block-scaled fp8 on every kind of tile: plain, with a bias and GELU, and
// with C into an f32 D (stored directly), a batch and the amax. (C read
// through the TMA store spills whatever the scaling: known problems.)
void AddBlockScaledPicks(KernelSweep& sweep) {
  for (const gemm::GemmProblem& shape :
       {BlockScaled(4096, 4096, 4096), BlockScaled(2048, 7168, 512),
        BlockScaled(1000, 1000, 1000), BlockScaled(256, 256, 16384),
        BlockScaled(4096, 24, 4096), BlockScaled(16, 4096, 4096)}) {
    gemm::GemmProblem fused = shape;
    fused.b_element = ScalarType::kE5M2;
    fused.bias = gen::BiasAlong::kN;
    fused.activation = gen::Activation::kGelu;
    gemm::GemmProblem wide = shape;
    wide.output = ScalarType::kF32;
    wide.beta = 1;
    wide.batch = 2;
    wide.record_amax = true;
    for (const gemm::GemmProblem& p : {shape, fused, wide}) AddPick(p, sweep);
  }
}

// s8/u8: an s32 D, an s8 D, and a mixed one into bf16 with a bias and GELU.
void AddIntegerPicks(KernelSweep& sweep) {
  for (const gemm::GemmProblem& shape :
       {Problem(4096, 4096, 4096, ScalarType::kS8),
        Problem(1000, 1000, 1000, ScalarType::kS8),
        Problem(256, 256, 16384, ScalarType::kS8),
        Problem(4096, 24, 4096, ScalarType::kS8),
        Problem(1, 4096, 4096, ScalarType::kS8)}) {
    gemm::GemmProblem rounded = shape;
    rounded.output = ScalarType::kS8;
    rounded.alpha = 1e-3f;
    gemm::GemmProblem fused = shape;
    fused.element = ScalarType::kU8;
    fused.b_element = ScalarType::kS8;
    fused.output = ScalarType::kBF16;
    fused.bias = gen::BiasAlong::kN;
    fused.activation = gen::Activation::kGelu;
    for (const gemm::GemmProblem& p : {shape, rounded, fused}) {
      AddPick(p, sweep);
    }
  }
}

// The autotuner's candidates for the heaviest epilogues: C, a bias along
// m, SiLU and a batch on a transposed B (TMA-store candidates too), GELU
// into f32 (direct stores only), and a decode shape of the first.
void AddHeavyEpilogueCandidates(KernelSweep& sweep) {
  gemm::GemmProblem full = Problem(8192, 8192, 8192, ScalarType::kBF16);
  full.b_major = ptx::MajorOrder::kMN;
  full.beta = 0.5f;
  full.bias = gen::BiasAlong::kM;
  full.bias_type = ScalarType::kF32;
  full.activation = gen::Activation::kSilu;
  full.batch = 2;
  gemm::GemmProblem gelu_f32 = Problem(4096, 4096, 4096, ScalarType::kF16);
  gelu_f32.a_major = ptx::MajorOrder::kMN;
  gelu_f32.output = ScalarType::kF32;
  gelu_f32.bias = gen::BiasAlong::kN;
  gelu_f32.activation = gen::Activation::kGelu;
  gemm::GemmProblem decode = full;
  decode.m = 16;
  decode.n = 4096;
  decode.k = 4096;
  for (const gemm::GemmProblem& p : {full, gelu_f32, decode}) {
    AddCandidates(p, sweep);
  }
}

// The autotuner's candidates for every input type: large squares and
// decode shapes, fp8 mixed with fast accumulation, block scaling.
void AddTypeCandidates(KernelSweep& sweep) {
  for (ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
    for (const gemm::GemmProblem& problem : PlainShapes(element)) {
      AddCandidates(problem, sweep);
    }
  }
  gemm::GemmProblem fast_mixed = Problem(8192, 8192, 8192, ScalarType::kE4M3);
  fast_mixed.b_element = ScalarType::kE5M2;
  fast_mixed.output = ScalarType::kF32;
  fast_mixed.scaling = gen::GemmScaling::kTensor;
  fast_mixed.fast_accumulation = true;
  for (const gemm::GemmProblem& problem :
       {Problem(8192, 8192, 8192, ScalarType::kE4M3),
        Problem(16, 4096, 4096, ScalarType::kE5M2), fast_mixed,
        Problem(8192, 8192, 8192, ScalarType::kTF32),
        BlockScaled(8192, 8192, 8192),
        Problem(8192, 8192, 8192, ScalarType::kS8),
        Problem(16, 4096, 4096, ScalarType::kS8)}) {
    AddCandidates(problem, sweep);
  }
}

gemm::GemmProblem Grouped(int64_t m, int64_t n, int64_t k, ScalarType element,
                          gen::GemmGrouping grouping, int64_t groups) {
  gemm::GemmProblem p = Problem(m, n, k, element);
  p.grouping = grouping;
  p.batch = groups;
  return p;
}

// Grouped GEMMs: prefill (many rows per group) and decode (a few), both
// layouts; fp8 with block and per-tensor scales; the heaviest epilogue.
std::vector<gemm::GemmProblem> GroupedProblems() {
  constexpr gen::GemmGrouping kContiguous = gen::GemmGrouping::kContiguous;
  constexpr gen::GemmGrouping kMasked = gen::GemmGrouping::kMasked;
  std::vector<gemm::GemmProblem> problems = {
      Grouped(8192, 14336, 4096, ScalarType::kBF16, kContiguous, 8),
      Grouped(4096, 1536, 4096, ScalarType::kBF16, kContiguous, 128),
      Grouped(64, 4096, 7168, ScalarType::kBF16, kMasked, 32),
      Grouped(1024, 4096, 7168, ScalarType::kF16, kMasked, 8),
  };
  for (gen::GemmGrouping grouping : {kContiguous, kMasked}) {
    gemm::GemmProblem block = Grouped(grouping == kMasked ? 128 : 16384, 4096,
                                      7168, ScalarType::kE4M3, grouping, 32);
    block.scaling = gen::GemmScaling::kBlock;
    gemm::GemmProblem tensor = block;
    tensor.scaling = gen::GemmScaling::kTensor;
    tensor.bias = gen::BiasAlong::kN;
    tensor.activation = gen::Activation::kGelu;
    tensor.record_amax = true;
    gemm::GemmProblem full = Grouped(grouping == kMasked ? 256 : 8192, 4096,
                                     2048, ScalarType::kBF16, grouping, 16);
    full.b_major = ptx::MajorOrder::kMN;
    full.beta = 0.5f;
    full.bias = gen::BiasAlong::kN;
    full.activation = gen::Activation::kSilu;
    full.output = ScalarType::kF32;
    problems.insert(problems.end(), {block, tensor, full});
  }
  return problems;
}

void AddGroupedPicks(KernelSweep& sweep) {
  for (const gemm::GemmProblem& problem : GroupedProblems()) {
    AddPick(problem, sweep);
  }
}

void AddGroupedCandidates(KernelSweep& sweep) {
  for (const gemm::GemmProblem& problem : GroupedProblems()) {
    AddCandidates(problem, sweep);
  }
}

void AddV1Spaces(KernelSweep& sweep) {
  for (ScalarType element :
       {ScalarType::kF16, ScalarType::kBF16, ScalarType::kE4M3,
        ScalarType::kTF32, ScalarType::kU8}) {
    for (const gen::GemmConfig& config : gemm::V1CandidateConfigs(element)) {
      sweep.Add(config, gen::PlainForm(element));
    }
  }
}

}  // namespace

void AddHeuristicPicks(KernelSweep& sweep) {
  AddPlainPicks(sweep);
  AddLayoutAndEpiloguePicks(sweep);
  AddFp8AndTf32Picks(sweep);
  AddBlockScaledPicks(sweep);
  AddIntegerPicks(sweep);
  AddGroupedPicks(sweep);
}

void AddEveryCandidate(KernelSweep& sweep) {
  AddHeuristicPicks(sweep);
  AddHeavyEpilogueCandidates(sweep);
  AddTypeCandidates(sweep);
  AddGroupedCandidates(sweep);
  AddV1Spaces(sweep);
}

std::string SweepRecord(const KernelSweep& sweep) {
  return absl::StrCat(
      "# The exhaustive tier (README, \"Testing\"): every candidate GEMM\n"
      "# configuration compiled without spills or ptxas diagnostics. Written\n"
      "# by ",
      kSweepCommand,
      "; //tests/gen:sweep_record_test fails when\n"
      "# the kernels it would compile are no longer those recorded.\n",
      "digest ", sweep.Digest(), "\ncases ", sweep.cases(), "\nkernels ",
      sweep.kernels(), "\nnvrtc ", compile::NvrtcVersion(), "\n");
}

std::string RecordedDigest(absl::string_view record) {
  for (absl::string_view line : absl::StrSplit(record, '\n')) {
    if (absl::ConsumePrefix(&line, "digest ")) return std::string(line);
  }
  return "";
}

}  // namespace ptxgen::sweep
