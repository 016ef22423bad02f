// What the autotuner says of its choice (TuningTable) and how it remembers
// it (autotune_record.h), from reports and records built here: the device
// is needed to time, not to tabulate or to read a record.
#include "ptxgen/gemm/autotune.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/gemm/autotune_record.h"

namespace ptxgen::gemm {
namespace {

gen::GemmConfig Config(const std::string& name) {
  return *gen::ParseConfigName(name);
}

TEST(TuningTableTest, ListsTheFastestFirstAndMarksTheChoice) {
  GemmProblem problem{16, 4096, 4096, ptx::ScalarType::kF16};
  problem.batch = 2;
  TuningReport report;
  report.best = Config("ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap");
  report.measurements = {
      {Config("ws 64x128x64 s8 c1 w1 m1 tma g8 persistent"), absl::OkStatus(),
       0.0291},
      {Config("ws 128x16x64 s8 c2 w1 m1 direct g8 persistent swap"),
       absl::InvalidArgumentError("no room"), 0},
      {report.best, absl::OkStatus(), 0.0137},
  };
  EXPECT_EQ(TuningTable(problem, report),
            "autotune f16.kk->f16+batched 16x4096x4096 batch 2: 3 candidates, "
            "ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap chosen\n"
            "     0.0137 ms  ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent "
            "swap  <- chosen\n"
            "     0.0291 ms  ws 64x128x64 s8 c1 w1 m1 tma g8 persistent\n"
            "  did not run  ws 128x16x64 s8 c2 w1 m1 direct g8 persistent "
            "swap: no room");
}

TEST(TuningTableTest, NamesTheRecordAChoiceCameFrom) {
  const GemmProblem problem{512, 512, 512, ptx::ScalarType::kBF16};
  TuningReport report;
  report.best = Config("v1 128x128x64");
  report.from_record = true;
  EXPECT_EQ(TuningTable(problem, report),
            "autotune bf16.kk->bf16 512x512x512: v1 128x128x64, as recorded in "
            "memory");
  report.record_path = "/cache/autotune/abc";
  EXPECT_EQ(TuningTable(problem, report),
            "autotune bf16.kk->bf16 512x512x512: v1 128x128x64, as recorded in "
            "/cache/autotune/abc");
}

AutotuneRecord Record() {
  AutotuneRecord record;
  record.key = "3f2a";
  record.config =
      Config("ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap");
  record.problem = "f16.kk->f16 16x4096x4096";
  record.device = "NVIDIA H200 (132 SMs, sm_90)";
  record.ptxgen = "0.1.0";
  record.milliseconds = 0.0137;
  return record;
}

TEST(AutotuneRecordTest, IsOneLineOfJsonThatReadsBack) {
  const std::string text = AutotuneRecordText(Record());
  EXPECT_EQ(
      text,
      "{\"schema\":\"ptxgen-autotune 2\",\"key\":\"3f2a\",\"config\":\"ws "
      "64x16x64 "
      "s8 c1 w1 m1 direct g8 sk persistent swap\",\"problem\":\"f16.kk->f16 "
      "16x4096x4096\",\"device\":\"NVIDIA H200 (132 SMs, "
      "sm_90)\",\"ptxgen\":\"0.1.0\","
      "\"milliseconds\":0.013700}\n");
  const std::vector<gen::GemmConfig> candidates = {
      Config("ws 64x128x64 s8 c1 w1 m1 tma g8 persistent"), Record().config};
  absl::StatusOr<gen::GemmConfig> config =
      ParseAutotuneRecord(text, "3f2a", candidates);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config, Record().config);
}

TEST(AutotuneRecordTest, RefusesWhatItCannotBelieveSayingWhy) {
  const std::vector<gen::GemmConfig> candidates = {Record().config};
  const std::string text = AutotuneRecordText(Record());
  const std::pair<std::string, const char*> cases[] = {
      {text.substr(0, text.size() / 2), "JSON: "},
      {"ptxgen-autotune 1\nkey 3f2a\nconfig v1 128x128x64\n", "JSON: no '{'"},
      {"{\"schema\":\"ptxgen-autotune 3\",\"key\":\"3f2a\"}",
       "schema 'ptxgen-autotune 2'"},
  };
  for (const auto& [bad, message] : cases) {
    absl::StatusOr<gen::GemmConfig> config =
        ParseAutotuneRecord(bad, "3f2a", candidates);
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_TRUE(absl::IsDataLoss(config.status())) << config.status();
    EXPECT_TRUE(absl::StrContains(config.status().message(), message))
        << config.status();
  }
  EXPECT_TRUE(absl::StrContains(
      ParseAutotuneRecord(text, "9999", candidates).status().message(),
      "not a record for this problem and device"));
  EXPECT_TRUE(absl::StrContains(
      ParseAutotuneRecord(text, "3f2a", {Config("v1 128x128x64")})
          .status()
          .message(),
      "names no candidate configuration"));
}

}  // namespace
}  // namespace ptxgen::gemm
