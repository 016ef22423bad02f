// The attention generator: what it refuses, what it plans, and that the
// kernels the library runs (the heuristic's picks for a range of problems,
// and the golden kernels of tests/gen/golden/ATTENTION) compile for sm_90a,
// with the library's compile options, without spills, serialized wgmma or
// injected waits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/attention/attention_internal.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/attention.h"
#include "tests/gen/golden_cases.h"
#include "tests/support/text.h"

namespace ptxgen::gen {
namespace {

using attention::AttentionTarget;

AttentionConfig Config(int head_dim, bool causal, bool variable_lengths) {
  AttentionConfig config;
  config.head_dim = head_dim;
  config.causal = causal;
  config.variable_lengths = variable_lengths;
  config.block_n = head_dim > 128 ? 64 : 128;
  return config;
}

TEST(AttentionConfigTest, RefusesWhatItCannotGenerate) {
  struct Case {
    const char* rule;
    void (*change)(AttentionConfig&);
  };
  const Case cases[] = {
      {"f16 or bf16",
       [](AttentionConfig& c) { c.element = ptx::ScalarType::kE4M3; }},
      {"multiple of 16", [](AttentionConfig& c) { c.head_dim = 72; }},
      {"multiple of 16", [](AttentionConfig& c) { c.head_dim = 272; }},
      {"consumers must be", [](AttentionConfig& c) { c.consumers = 4; }},
      {"block_n must be", [](AttentionConfig& c) { c.block_n = 120; }},
      {"block_n must be", [](AttentionConfig& c) { c.block_n = 8; }},
      {"stages must be", [](AttentionConfig& c) { c.stages = 0; }},
      {"query_stages", [](AttentionConfig& c) { c.query_stages = 0; }},
      {"query_stages", [](AttentionConfig& c) { c.query_stages = 3; }},
      {"ping-pong", [](AttentionConfig& c) { c.consumers = 3; }},
      {"registers",
       [](AttentionConfig& c) {
         c.head_dim = 256;
         c.block_n = 128;
       }},
  };
  for (const Case& test : cases) {
    AttentionConfig config = Config(128, false, false);
    test.change(config);
    const absl::Status status = ValidateAttentionConfig(config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << test.rule << ": " << status;
    EXPECT_TRUE(absl::StrContains(status.message(), test.rule))
        << status.message();
    EXPECT_FALSE(GenerateAttention(config).ok());
  }
}

TEST(AttentionGeneratorTest, PlansTheBlocksAndTheirMaps) {
  absl::StatusOr<GeneratedAttention> generated =
      GenerateAttention(Config(128, true, false));
  ASSERT_TRUE(generated.ok()) << generated.status();
  EXPECT_EQ(generated->threads_per_block, 384);
  EXPECT_EQ(generated->block_m, 128);
  EXPECT_EQ(generated->box_columns, 64);
  EXPECT_EQ(generated->swizzle, ptx::Swizzle::k128B);
  EXPECT_EQ(generated->q_box_rows, 128);
  EXPECT_EQ(generated->kv_box_rows, 128);
  EXPECT_EQ(generated->o_box_rows, 64);
  // Q (32 KiB), two K and two V stages (32 KiB each), barriers, slack.
  EXPECT_GE(generated->shared_bytes, 5 * 32 * 1024);
  EXPECT_LE(generated->shared_bytes, 5 * 32 * 1024 + 2048);
  EXPECT_TRUE(
      absl::StrContains(generated->source, "constexpr bool kCausal = true;"));
  EXPECT_TRUE(absl::StrContains(generated->source,
                                "ptxgen_attention_bf16_d128_causal"));
}

// A causal mask's tiles of fixed lengths come in folded pairs, a long and
// a short block (attention_tile.cu), so that a persistent grid's turns
// cost about the same; other tiles come one a turn.
TEST(AttentionGeneratorTest, CausalTilesOfFixedLengthsComeTwoATurn) {
  struct Case {
    bool causal, variable_lengths;
    int tiles_per_turn;
  };
  for (const Case& c : {Case{true, false, 2}, Case{true, true, 1},
                        Case{false, false, 1}, Case{false, true, 1}}) {
    absl::StatusOr<GeneratedAttention> generated =
        GenerateAttention(Config(128, c.causal, c.variable_lengths));
    ASSERT_TRUE(generated.ok()) << generated.status();
    EXPECT_EQ(generated->tiles_per_turn, c.tiles_per_turn)
        << AttentionConfigName(generated->config);
    EXPECT_TRUE(absl::StrContains(
        generated->source,
        absl::StrCat("constexpr int kTilesPerTurn = ", c.tiles_per_turn, ";")));
  }
}

// Fixed lengths run on a persistent grid, a CTA an SM at most, taking turns;
// variable lengths get a CTA a tile (of the longest sequence's blocks).
TEST(AttentionPlanTest, FixedLengthsRunOnAPersistentGrid) {
  struct Case {
    bool causal, variable_lengths;
    int64_t seq;
    int ctas;
  };
  // 2 sequences x 8 heads; blocks of 128 query rows (head dim 128).
  const Case cases[] = {
      {false, false, 8192, 132},  // 1024 tiles
      {true, false, 8192, 132},   // 512 turns of 2
      {true, false, 1024, 64},    // 128 tiles, 64 turns
      {false, false, 1024, 128},  // 128 tiles
      {true, true, 8192, 1024},   // a CTA a tile
  };
  for (const Case& c : cases) {
    attention::AttentionProblem problem;
    problem.head_dim = 128;
    problem.causal = c.causal;
    problem.variable_lengths = c.variable_lengths;
    problem.batch = 2;
    problem.heads_q = problem.heads_kv = 8;
    problem.seq_q = problem.seq_k = c.seq;
    if (c.variable_lengths) problem.total_q = problem.total_k = 2 * c.seq;
    problem = attention::Resolved(problem);
    // The heuristic's kernel, generated: the grid needs no compile.
    absl::StatusOr<GeneratedAttention> generated = GenerateAttention(
        attention::HeuristicAttentionConfig(problem, AttentionTarget::H200()));
    ASSERT_TRUE(generated.ok()) << generated.status();
    absl::StatusOr<attention::AttentionGrid> grid =
        attention::PlanGrid(problem, *generated, AttentionTarget::H200());
    ASSERT_TRUE(grid.ok()) << grid.status();
    EXPECT_EQ(grid->ctas, c.ctas) << "causal " << c.causal << " varlen "
                                  << c.variable_lengths << " seq " << c.seq;
  }
}

TEST(AttentionGeneratorTest, TextIsTheSameEveryTime) {
  absl::StatusOr<GeneratedAttention> first =
      GenerateAttention(Config(64, false, true));
  absl::StatusOr<GeneratedAttention> second =
      GenerateAttention(Config(64, false, true));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->source, second->source);
}

TEST(AttentionGeneratorTest, HeadDimsOffTheWideSwizzleTakeANarrowerOne) {
  absl::StatusOr<GeneratedAttention> generated =
      GenerateAttention(Config(80, false, false));
  ASSERT_TRUE(generated.ok()) << generated.status();
  EXPECT_EQ(generated->swizzle, ptx::Swizzle::k32B);
  EXPECT_EQ(generated->box_columns, 16);
}

// AttentionSharedBytes, which the heuristic sizes its picks by, is what
// the generated kernel needs.
TEST(AttentionGeneratorTest, SharedBytesAreTheGeneratedKernels) {
  AttentionConfig three_consumers = Config(64, false, false);
  three_consumers.consumers = 3;
  three_consumers.ping_pong = false;
  three_consumers.query_stages = 2;
  AttentionConfig wide = Config(128, true, false);
  wide.block_n = 192;
  AttentionConfig narrow_swizzle = Config(80, true, true);
  narrow_swizzle.query_stages = 2;
  AttentionConfig deep = Config(256, false, false);
  deep.block_n = 32;
  deep.stages = 4;
  deep.consumers = 1;
  deep.ping_pong = false;
  for (const AttentionConfig& config :
       {three_consumers, wide, narrow_swizzle, deep}) {
    const absl::StatusOr<int> bytes = AttentionSharedBytes(config);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    const absl::StatusOr<GeneratedAttention> generated =
        GenerateAttention(config);
    ASSERT_TRUE(generated.ok()) << generated.status();
    EXPECT_EQ(*bytes, generated->shared_bytes) << AttentionConfigName(config);
  }
  EXPECT_FALSE(AttentionSharedBytes(Config(72, false, false)).ok());
}

struct CompileCase {
  std::string name;    // the test's: the golden file name without ".cu"
  std::string origin;  // the problems it is picked for, or why it is here
  AttentionConfig config;
};

void PrintTo(const CompileCase& c, std::ostream* out) {
  *out << AttentionConfigName(c.config) << " (" << c.origin << ")";
}

// A problem of 2 sequences of `seq` rows (variable lengths: up to `seq`)
// and 8 query heads sharing 2 K/V heads.
attention::AttentionProblem Problem(ptx::ScalarType element, int head_dim,
                                    bool causal, bool variable_lengths,
                                    int64_t seq) {
  attention::AttentionProblem problem;
  problem.element = element;
  problem.head_dim = head_dim;
  problem.causal = causal;
  problem.variable_lengths = variable_lengths;
  problem.batch = 2;
  problem.heads_q = 8;
  problem.heads_kv = 2;
  problem.seq_q = problem.seq_k = seq;
  if (variable_lengths) problem.total_q = problem.total_k = 2 * seq;
  return attention::Resolved(problem);
}

struct Pick {
  std::string origin;
  attention::AttentionProblem problem;
};

// Problems of each head dim, mask, length kind and element the heuristic
// plans differently.
std::vector<Pick> Picks() {
  constexpr ptx::ScalarType kBf16 = ptx::ScalarType::kBF16;
  return {
      {"bf16 d64 seq 4096", Problem(kBf16, 64, false, false, 4096)},
      {"bf16 d64 causal seq 1024", Problem(kBf16, 64, true, false, 1024)},
      {"bf16 d128 seq 1024", Problem(kBf16, 128, false, false, 1024)},
      {"bf16 d128 seq 8192", Problem(kBf16, 128, false, false, 8192)},
      {"bf16 d128 causal seq 8192", Problem(kBf16, 128, true, false, 8192)},
      {"bf16 d256 seq 4096", Problem(kBf16, 256, false, false, 4096)},
      {"bf16 d80 causal varlen seq 4096", Problem(kBf16, 80, true, true, 4096)},
      {"bf16 d128 causal varlen seq 2048",
       Problem(kBf16, 128, true, true, 2048)},
      {"f16 d128 seq 4096",
       Problem(ptx::ScalarType::kF16, 128, false, false, 4096)},
  };
}

// What the library runs: the heuristic's picks for Picks(); a consumer
// alone, which no pick has; the golden kernels. Each configuration once,
// with every reason it is here.
std::vector<CompileCase> CompileCases() {
  std::vector<CompileCase> cases;
  auto add = [&](const std::string& origin, const AttentionConfig& config) {
    std::string name = golden::AttentionGoldenFileName(config);
    name.resize(name.size() - std::strlen(".cu"));
    for (CompileCase& c : cases) {
      if (c.name == name) {
        absl::StrAppend(&c.origin, "; ", origin);
        return;
      }
    }
    cases.push_back({name, origin, config});
  };
  for (const Pick& pick : Picks()) {
    add(absl::StrCat("heuristic pick for ", pick.origin),
        attention::HeuristicAttentionConfig(pick.problem,
                                            AttentionTarget::H200()));
  }
  AttentionConfig one_consumer = Config(128, false, false);
  one_consumer.consumers = 1;
  one_consumer.ping_pong = false;
  add("one consumer, no ping-pong", one_consumer);
  // Without the list the golden kernels are not compiled here; golden_test
  // says why it does not parse.
  const absl::StatusOr<std::vector<golden::AttentionGoldenCase>> goldens =
      golden::ParseAttentionGoldens(
          testing_support::ReadFile(golden::kAttentionFile));
  if (goldens.ok()) {
    for (const golden::AttentionGoldenCase& golden : *goldens) {
      add(absl::StrCat("golden ", golden.file_name), golden.config);
    }
  }
  return cases;
}

TEST(AttentionCompileCasesTest, ProblemsAreValid) {
  for (const Pick& pick : Picks()) {
    EXPECT_TRUE(attention::ValidateAttentionProblem(pick.problem).ok())
        << pick.origin << ": "
        << attention::ValidateAttentionProblem(pick.problem);
  }
}

TEST(AttentionCompileCasesTest, CoverEachKind) {
  const std::vector<CompileCase> cases = CompileCases();
  auto any = [&](auto predicate) {
    return std::any_of(cases.begin(), cases.end(), [&](const CompileCase& c) {
      return predicate(c.config);
    });
  };
  EXPECT_TRUE(any([](const AttentionConfig& c) { return c.consumers == 1; }));
  EXPECT_TRUE(any([](const AttentionConfig& c) { return c.consumers == 3; }));
  EXPECT_TRUE(any([](const AttentionConfig& c) { return c.ping_pong; }));
  EXPECT_TRUE(
      any([](const AttentionConfig& c) { return c.query_stages == 2; }));
  EXPECT_TRUE(any([](const AttentionConfig& c) { return c.variable_lengths; }));
  EXPECT_TRUE(any([](const AttentionConfig& c) {
    return c.element == ptx::ScalarType::kF16;
  }));
  // The golden list was read.
  EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), [](const CompileCase& c) {
    return absl::StrContains(c.origin, "golden ");
  }));
}

class AttentionCompileTest : public testing::TestWithParam<CompileCase> {};

TEST_P(AttentionCompileTest, CompilesCleanly) {
  const AttentionConfig& config = GetParam().config;
  absl::StatusOr<GeneratedAttention> generated = GenerateAttention(config);
  ASSERT_TRUE(generated.ok()) << generated.status();
  // PlanAttention refuses a kernel over the device's shared memory.
  EXPECT_LE(generated->shared_bytes,
            AttentionTarget::H200().max_shared_bytes_per_block_optin);
  absl::StatusOr<compile::CompiledModule> compiled = compile::CompileCuda(
      generated->kernel_name, generated->source,
      attention::AttentionCompileOptions(AttentionTarget::H200()));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (const compile::CompilerDiagnostic& diagnostic : compiled->diagnostics) {
    ADD_FAILURE() << diagnostic.message;
  }
  ASSERT_EQ(compiled->resources.size(), 1u);
  EXPECT_EQ(compiled->resources[0].spill_store_bytes, 0) << compiled->log;
  EXPECT_EQ(compiled->resources[0].spill_load_bytes, 0) << compiled->log;
}

INSTANTIATE_TEST_SUITE_P(WhatTheLibraryRuns, AttentionCompileTest,
                         testing::ValuesIn(CompileCases()),
                         [](const testing::TestParamInfo<CompileCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ptxgen::gen
