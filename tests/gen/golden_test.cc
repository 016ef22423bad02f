// Golden files of the generated source: every GEMM configuration listed in
// tests/gen/golden/CONFIGS and every attention configuration listed in
// tests/gen/golden/ATTENTION is generated again and compared byte for byte
// with its file in tests/gen/golden/, so that every change of generated
// text is a reviewed diff of those files. The files are this test's data
// (runfiles); the test reads them and never writes into the source tree.
// To regenerate them after an intended change: bash tools/update_golden.sh
#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/gen/gemm.h"
#include "tests/gen/golden_cases.h"
#include "tests/support/text.h"

namespace ptxgen::golden {
namespace {

using testing_support::ReadFile;

// Under `bazel test` the working directory is the runfiles root.
std::string GoldenPath(const std::string& file_name) {
  return absl::StrCat(kGoldenDirectory, "/", file_name);
}

std::string UpdateHint() {
  return absl::StrCat(
      "If the change of generated text is intended, regenerate the golden "
      "files with\n  ",
      kUpdateCommand, "\nthen review `git diff ", kGoldenDirectory,
      "` and commit the files with the change.");
}

absl::StatusOr<std::vector<GoldenCase>> LoadCases() {
  const std::string text = ReadFile(kConfigsFile);
  if (text.empty()) {
    return absl::NotFoundError(
        absl::StrCat(kConfigsFile, " is missing or empty"));
  }
  return ParseGoldenConfigs(text);
}

absl::StatusOr<std::vector<AttentionGoldenCase>> LoadAttentionCases() {
  const std::string text = ReadFile(kAttentionFile);
  if (text.empty()) {
    return absl::NotFoundError(
        absl::StrCat(kAttentionFile, " is missing or empty"));
  }
  return ParseAttentionGoldens(text);
}

// The cases as test parameters; none when the list does not parse (then
// GoldenListTest.ConfigsParse or AttentionParse says why).
std::vector<GoldenCase> CasesOrNone() {
  absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  return cases.ok() ? *cases : std::vector<GoldenCase>{};
}
std::vector<AttentionGoldenCase> AttentionCasesOrNone() {
  absl::StatusOr<std::vector<AttentionGoldenCase>> cases = LoadAttentionCases();
  return cases.ok() ? *cases : std::vector<AttentionGoldenCase>{};
}

TEST(GoldenListTest, ConfigsParse) {
  const absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_GE(cases->size(), 8u);
}

// The list keeps covering each kind of kernel text the generator writes.
TEST(GoldenListTest, ConfigsCoverEachScheduleAndEpilogue) {
  const absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  auto any = [&](auto predicate) {
    return std::any_of(cases->begin(), cases->end(), predicate);
  };
  using gen::GemmSchedule;
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.config.schedule == GemmSchedule::kV1;
  })) << "no v1 configuration";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.config.schedule == GemmSchedule::kWarpSpecialized &&
           !c.config.stream_k && c.config.split_k == 1 &&
           c.config.cluster_m == 1 &&
           c.config.epilogue == gen::GemmEpilogue::kDirect;
  })) << "no plain warp-specialized configuration (direct epilogue)";
  EXPECT_TRUE(any([](const GoldenCase& c) { return c.config.stream_k; }))
      << "no stream-K";
  EXPECT_TRUE(any([](const GoldenCase& c) { return c.config.cluster_m == 2; }))
      << "no 2-CTA cluster";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.config.epilogue == gen::GemmEpilogue::kTmaStore &&
           c.config.store_chunks != 0;
  })) << "no TMA-store epilogue in passes (e#)";
  EXPECT_TRUE(any([](const GoldenCase& c) { return c.config.split_k > 1; }))
      << "no split-K";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.config.tile_order == gen::TileOrder::kHilbert;
  })) << "no Hilbert tile order";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.form.element == ptx::ScalarType::kBF16;
  })) << "no bf16";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.form.a_major == ptx::MajorOrder::kMN &&
           c.form.b_major == ptx::MajorOrder::kMN;
  })) << "no MN-major A and B";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.form.a_major != c.form.b_major;
  })) << "no mixed-major layout";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.form.bias != gen::BiasAlong::kNone &&
           c.form.activation != gen::Activation::kNone;
  })) << "no fused bias and activation";
  EXPECT_TRUE(any([](const GoldenCase& c) { return c.form.reads_c; }))
      << "no beta * C";
  EXPECT_TRUE(any([](const GoldenCase& c) { return c.form.batched; }))
      << "no batch";
  EXPECT_TRUE(any([](const GoldenCase& c) {
    return c.form.output == ptx::ScalarType::kF32;
  })) << "no f32 output";
}

TEST(GoldenListTest, AttentionParses) {
  const absl::StatusOr<std::vector<AttentionGoldenCase>> cases =
      LoadAttentionCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_GE(cases->size(), 4u);
}

// One kernel per head dim the heuristic serves differently, and each kind
// of attention text: ping-pong and three consumers without turns, a second
// Q stage, the causal mask with variable lengths.
TEST(GoldenListTest, AttentionCoversEachHeadDimAndKind) {
  const absl::StatusOr<std::vector<AttentionGoldenCase>> cases =
      LoadAttentionCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  auto any = [&](auto predicate) {
    return std::any_of(cases->begin(), cases->end(), predicate);
  };
  for (const int head_dim : {64, 128, 256}) {
    EXPECT_TRUE(any([&](const AttentionGoldenCase& c) {
      return c.config.head_dim == head_dim;
    })) << "no head dim "
        << head_dim;
  }
  EXPECT_TRUE(any([](const AttentionGoldenCase& c) {
    return c.config.ping_pong;
  })) << "no ping-pong";
  EXPECT_TRUE(any([](const AttentionGoldenCase& c) {
    return c.config.consumers == 3;
  })) << "no three consumers";
  EXPECT_TRUE(any([](const AttentionGoldenCase& c) {
    return c.config.query_stages == 2;
  })) << "no second Q stage";
  EXPECT_TRUE(any([](const AttentionGoldenCase& c) {
    return c.config.causal && c.config.variable_lengths;
  })) << "no causal mask with variable lengths";
}

// A golden file that no listed configuration writes is stale: it would
// never be compared again.
TEST(GoldenListTest, TheFolderHoldsExactlyTheListedFiles) {
  const absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  const absl::StatusOr<std::vector<AttentionGoldenCase>> attention =
      LoadAttentionCases();
  ASSERT_TRUE(attention.ok()) << attention.status();
  std::set<std::string> listed;
  for (const GoldenCase& c : *cases) listed.insert(c.file_name);
  for (const AttentionGoldenCase& c : *attention) listed.insert(c.file_name);
  std::set<std::string> present;
  DIR* dir = opendir(kGoldenDirectory);
  ASSERT_NE(dir, nullptr) << "cannot list " << kGoldenDirectory;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (absl::EndsWith(name, ".cu")) present.insert(name);
  }
  closedir(dir);
  std::vector<std::string> stale, missing;
  std::set_difference(present.begin(), present.end(), listed.begin(),
                      listed.end(), std::back_inserter(stale));
  std::set_difference(listed.begin(), listed.end(), present.begin(),
                      present.end(), std::back_inserter(missing));
  EXPECT_TRUE(stale.empty())
      << "golden files no configuration in " << kConfigsFile << " or "
      << kAttentionFile << " writes: " << absl::StrJoin(stale, ", ") << "\n"
      << UpdateHint();
  EXPECT_TRUE(missing.empty())
      << "golden files missing: " << absl::StrJoin(missing, ", ") << "\n"
      << UpdateHint();
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, GeneratedSourceMatchesTheGoldenFile) {
  const GoldenCase& golden = GetParam();
  const absl::StatusOr<std::string> generated = GoldenSource(golden);
  ASSERT_TRUE(generated.ok()) << golden.form_name << " '" << golden.config_name
                              << "': " << generated.status();
  const std::string path = GoldenPath(golden.file_name);
  const std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing or empty.\n"
                                 << UpdateHint();
  // Not EXPECT_EQ: it would print both whole files.
  EXPECT_TRUE(expected == *generated)
      << path << " differs from what the generator now writes for "
      << golden.form_name << " '" << golden.config_name << "':\n"
      << LineDiff(expected, *generated, path, "generated now") << UpdateHint();
}

// The file name with every character outside [A-Za-z0-9] as '_'.
template <typename Case>
std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.file_name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Configs, GoldenTest,
                         ::testing::ValuesIn(CasesOrNone()),
                         CaseName<GoldenCase>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

class AttentionGoldenTest
    : public ::testing::TestWithParam<AttentionGoldenCase> {};

TEST_P(AttentionGoldenTest, GeneratedSourceMatchesTheGoldenFile) {
  const AttentionGoldenCase& golden = GetParam();
  const absl::StatusOr<gen::GeneratedAttention> generated =
      gen::GenerateAttention(golden.config);
  ASSERT_TRUE(generated.ok())
      << "attention '" << golden.config_name << "': " << generated.status();
  // The file is named as the kernel is.
  EXPECT_EQ(golden.file_name,
            absl::StrCat(
                "attention_",
                absl::StripPrefix(generated->kernel_name, "ptxgen_attention_"),
                ".cu"));
  const std::string path = GoldenPath(golden.file_name);
  const std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing or empty.\n"
                                 << UpdateHint();
  EXPECT_TRUE(expected == generated->source)
      << path << " differs from what the generator now writes for attention '"
      << golden.config_name << "':\n"
      << LineDiff(expected, generated->source, path, "generated now")
      << UpdateHint();
}

INSTANTIATE_TEST_SUITE_P(Configs, AttentionGoldenTest,
                         ::testing::ValuesIn(AttentionCasesOrNone()),
                         CaseName<AttentionGoldenCase>);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionGoldenTest);

// ---- The list's rules and the diff the failures show ----

TEST(GoldenCasesTest, FileNamesFollowTheConfigName) {
  EXPECT_EQ(
      GoldenFileName("ws 128x256x64 s4 c2 w1 m2 tma g8 persistent", "f16"),
      "ws_128x256x64_s4_c2_w1_m2_tma_g8_persistent.f16.cu");
  EXPECT_EQ(GoldenFileName("v1 128x128x64", "bf16"), "v1_128x128x64.bf16.cu");
  EXPECT_EQ(GoldenFileName("v1 128x128x64", "f16.mk->f32+bias_n.f32+gelu"),
            "v1_128x128x64.f16.mk_to_f32_bias_n.f32_gelu.cu");
}

TEST(GoldenCasesTest, ListsAreParsedAndCheckedLineByLine) {
  const absl::StatusOr<std::vector<GoldenCase>> cases = ParseGoldenConfigs(
      "# comment\n\nf16 v1 128x128x64\n  bf16   v1 128x128x64  \n"
      "f16.km->f16+c v1 128x128x64\n");
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 3u);
  EXPECT_EQ((*cases)[1].config_name, "v1 128x128x64");
  EXPECT_EQ((*cases)[1].form, gen::PlainForm(ptx::ScalarType::kBF16));
  EXPECT_EQ((*cases)[1].file_name, "v1_128x128x64.bf16.cu");
  EXPECT_EQ((*cases)[2].form.b_major, ptx::MajorOrder::kMN);
  EXPECT_TRUE((*cases)[2].form.reads_c);

  const std::pair<const char*, const char*> refused[] = {
      {"v1_128x128x64", "CONFIGS:1: 'v1_128x128x64' is not"},
      {"f32 v1 128x128x64", "CONFIGS:1: "},
      {"f16.kx->f16 v1 128x128x64",
       "CONFIGS:1: GEMM form 'f16.kx->f16': a major order is k or m"},
      {"f16.kk->f16+bias v1 128x128x64", "'bias' is not c, bias_m.<type>"},
      {"f16.kk->f16+gelu+c v1 128x128x64", "write it as 'f16.kk->f16+c+gelu'"},
      {"f16.kk->f32 ws 128x256x64 s3 c2 w1 m1 tma g16 persistent",
       "CONFIGS:1: "},
      {"f16 v2 128x128x64", "CONFIGS:1: "},
      {"f16 v1 128x256x64", "accumulator registers"},
      {"f16 v1 128x128x64\nf16 v1 128x128x64",
       "CONFIGS:2: f16 'v1 128x128x64' is listed twice"},
  };
  for (const auto& [text, message] : refused) {
    const absl::StatusOr<std::vector<GoldenCase>> result =
        ParseGoldenConfigs(text);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_TRUE(absl::StrContains(result.status().message(), message))
        << result.status();
  }
}

TEST(GoldenCasesTest, AttentionFileNamesFollowTheKernelName) {
  gen::AttentionConfig config;
  config.causal = true;
  config.block_n = 192;
  EXPECT_EQ(AttentionGoldenFileName(config),
            "attention_bf16_d128_causal_2x64_n192_s2_pp.cu");
  config.element = ptx::ScalarType::kF16;
  config.head_dim = 64;
  config.causal = false;
  config.variable_lengths = true;
  config.consumers = 3;
  config.block_n = 128;
  config.query_stages = 2;
  config.ping_pong = false;
  EXPECT_EQ(AttentionGoldenFileName(config),
            "attention_f16_d64_varlen_3x64_n128_s2_q2.cu");
}

// The parser reads back every name AttentionConfigName writes.
TEST(GoldenCasesTest, AttentionNamesRoundTrip) {
  for (const ptx::ScalarType element :
       {ptx::ScalarType::kBF16, ptx::ScalarType::kF16}) {
    for (const int mask : {0, 1, 2, 3}) {
      for (const int query_stages : {1, 2}) {
        for (const bool ping_pong : {false, true}) {
          gen::AttentionConfig config;
          config.element = element;
          config.head_dim = 80;
          config.causal = (mask & 1) != 0;
          config.variable_lengths = (mask & 2) != 0;
          config.consumers = ping_pong ? 2 : 1;
          config.block_n = 176;
          config.stages = 3;
          config.query_stages = query_stages;
          config.ping_pong = ping_pong;
          const std::string name = gen::AttentionConfigName(config);
          const absl::StatusOr<gen::AttentionConfig> parsed =
              ParseAttentionConfigName(name);
          ASSERT_TRUE(parsed.ok()) << parsed.status();
          EXPECT_EQ(gen::AttentionConfigName(*parsed), name);
          EXPECT_EQ(parsed->element, config.element) << name;
          EXPECT_EQ(parsed->head_dim, config.head_dim) << name;
          EXPECT_EQ(parsed->causal, config.causal) << name;
          EXPECT_EQ(parsed->variable_lengths, config.variable_lengths) << name;
          EXPECT_EQ(parsed->consumers, config.consumers) << name;
          EXPECT_EQ(parsed->block_n, config.block_n) << name;
          EXPECT_EQ(parsed->stages, config.stages) << name;
          EXPECT_EQ(parsed->query_stages, config.query_stages) << name;
          EXPECT_EQ(parsed->ping_pong, config.ping_pong) << name;
        }
      }
    }
  }
}

TEST(GoldenCasesTest, AttentionListsAreParsedAndCheckedLineByLine) {
  const absl::StatusOr<std::vector<AttentionGoldenCase>> cases =
      ParseAttentionGoldens(
          "# comment\n\nbf16 d64: 3x64 rows, 128 keys, 2 stages, 2 Q stages\n"
          "  f16 d128 causal varlen: 2x64 rows, 128 keys, 2 stages, "
          "ping-pong  \n");
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_EQ((*cases)[0].file_name, "attention_bf16_d64_3x64_n128_s2_q2.cu");
  EXPECT_EQ((*cases)[1].config_name,
            "f16 d128 causal varlen: 2x64 rows, 128 keys, 2 stages, ping-pong");
  EXPECT_EQ((*cases)[1].config.element, ptx::ScalarType::kF16);
  EXPECT_TRUE((*cases)[1].config.causal);
  EXPECT_TRUE((*cases)[1].config.variable_lengths);

  const std::pair<const char*, const char*> refused[] = {
      {"bf16 d64 3x64 rows",
       "ATTENTION:1: attention config 'bf16 d64 3x64 "
       "rows': not"},
      {"e9 d64: 2x64 rows, 128 keys, 2 stages", "ATTENTION:1: "},
      {"bf16 64: 2x64 rows, 128 keys, 2 stages", "d<head dim>"},
      {"bf16 d64 masked: 2x64 rows, 128 keys, 2 stages",
       "'masked' is not causal or varlen"},
      {"bf16 d64: 2x128 rows, 128 keys, 2 stages", "<consumers>x64 rows"},
      {"bf16 d64: 2x64 rows, 128 keys", "<consumers>x64 rows"},
      {"bf16 d64: 2x64 rows, 128 keys, 2 stages, swapped",
       "'swapped' is not \"<n> Q stages\" or ping-pong"},
      {"bf16 d64: 2x64 rows, 128 keys, 2 stages, 1 Q stages",
       "write it as 'bf16 d64: 2x64 rows, 128 keys, 2 stages'"},
      {"bf16 d64 varlen causal: 2x64 rows, 128 keys, 2 stages",
       "write it as 'bf16 d64 causal varlen: "},
      {"bf16 d64: 2x64 rows, 128 keys, 2 stages, ping-pong, 2 Q stages",
       "write it as"},
      {"bf16 d64: 3x64 rows, 128 keys, 2 stages, ping-pong", "ping-pong"},
      {"bf16 d64: 2x64 rows, 128 keys, 2 stages, 3 Q stages", "write it as"},
      {"bf16 d64: 2x64 rows, 128 keys, 2 stages\n"
       "bf16 d64: 2x64 rows, 128 keys, 2 stages",
       "ATTENTION:2: 'bf16 d64: 2x64 rows, 128 keys, 2 stages' is listed "
       "twice"},
  };
  for (const auto& [text, message] : refused) {
    const absl::StatusOr<std::vector<AttentionGoldenCase>> result =
        ParseAttentionGoldens(text);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_TRUE(absl::StrContains(result.status().message(), message))
        << result.status();
  }
}

TEST(LineDiffTest, EqualTextsHaveNoDiff) {
  EXPECT_EQ(LineDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(LineDiffTest, ShowsChangedLinesWithNumbersAndContext) {
  EXPECT_EQ(LineDiff("1\n2\n3\n4\n5\n6\n7\n", "1\n2\n3\nfour\n5\n6\n7\n", "old",
                     "new"),
            "--- old (7 lines)\n+++ new (7 lines)\n"
            "@@ -2,5 +2,5 @@\n 2\n 3\n-4\n+four\n 5\n 6\n");
  EXPECT_EQ(
      LineDiff("a\nb\n", "a\nx\nb\n", "old", "new"),
      "--- old (2 lines)\n+++ new (3 lines)\n@@ -1,2 +1,3 @@\n a\n+x\n b\n");
  EXPECT_EQ(
      LineDiff("a\nb\nc\n", "a\nc\n", "old", "new"),
      "--- old (3 lines)\n+++ new (2 lines)\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
}

TEST(LineDiffTest, SeparateChangesGetSeparateHunks) {
  std::string a, b;
  for (int i = 1; i <= 30; ++i) {
    absl::StrAppend(&a, i, "\n");
    absl::StrAppend(&b,
                    i == 5    ? "five"
                    : i == 25 ? "twenty-five"
                              : absl::StrCat(i),
                    "\n");
  }
  const std::string diff = LineDiff(a, b, "old", "new");
  EXPECT_TRUE(
      absl::StrContains(diff, "@@ -3,5 +3,5 @@\n 3\n 4\n-5\n+five\n 6\n 7\n"))
      << diff;
  EXPECT_TRUE(absl::StrContains(
      diff, "@@ -23,5 +23,5 @@\n 23\n 24\n-25\n+twenty-five\n"))
      << diff;
  EXPECT_FALSE(absl::StrContains(diff, " 15\n")) << diff;
}

TEST(LineDiffTest, StopsAfterTheFirstChangedLines) {
  std::string a, b;
  for (int i = 0; i < 100; ++i) {
    absl::StrAppend(&a, "old ", i, "\n");
    absl::StrAppend(&b, "new ", i, "\n");
  }
  const std::string diff = LineDiff(a, b, "old", "new", 20);
  int changed = 0;
  for (absl::string_view line : absl::StrSplit(diff, '\n')) {
    if (absl::StartsWith(line, "-old") || absl::StartsWith(line, "+new"))
      ++changed;
  }
  EXPECT_EQ(changed, 20);
  EXPECT_TRUE(absl::StrContains(diff, "... 180 more changed lines not shown\n"))
      << diff;
}

TEST(LineDiffTest, ShowsAMissingFinalNewlineAndControlCharacters) {
  EXPECT_EQ(LineDiff("a\n", "a", "old", "new"),
            "--- old (1 lines)\n+++ new (1 lines)\n@@ -1,1 +1,1 @@\n-a\n+a\n"
            "\\ No newline at end of file\n");
  EXPECT_EQ(
      LineDiff("a\n", "a\r\n", "old", "new"),
      "--- old (1 lines)\n+++ new (1 lines)\n@@ -1,1 +1,1 @@\n-a\n+a\\x0d\n");
  EXPECT_EQ(LineDiff("", "x\n", "old", "new"),
            "--- old (0 lines)\n+++ new (1 lines)\n@@ -0,0 +1,1 @@\n+x\n");
}

}  // namespace
}  // namespace ptxgen::golden
