// Golden files of the generated GEMM source: every configuration listed in
// tests/gen/golden/CONFIGS is generated again and compared byte for byte
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
#include "gtest/gtest.h"
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

// The cases as test parameters; none when the list does not parse (then
// GoldenListTest.ConfigsParse says why).
std::vector<GoldenCase> CasesOrNone() {
  absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  return cases.ok() ? *cases : std::vector<GoldenCase>{};
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

// A golden file that no listed configuration writes is stale: it would
// never be compared again.
TEST(GoldenListTest, TheFolderHoldsExactlyTheListedFiles) {
  const absl::StatusOr<std::vector<GoldenCase>> cases = LoadCases();
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::set<std::string> listed;
  for (const GoldenCase& c : *cases) listed.insert(c.file_name);
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
      << "golden files no configuration in " << kConfigsFile
      << " writes: " << absl::StrJoin(stale, ", ") << "\n"
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

std::string CaseName(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.file_name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Configs, GoldenTest,
                         ::testing::ValuesIn(CasesOrNone()), CaseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

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
