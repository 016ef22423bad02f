// Generated text is the same in every process: the built ptxgen tool, run
// twice in separate processes with the same GEMM request, prints the same
// bytes, and they are the bytes gen::GenerateGemm gives in this process for
// the configuration the tool said it picked ("ptxgen: <config name>" on
// stderr). A difference would make kernel-cache keys, golden files and
// reviews of generated text depend on the process (addresses, hash seeds,
// unordered iteration, uninitialized memory).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"
#include "tests/gen/golden_cases.h"
#include "tests/support/ptxgen_process.h"
#include "tests/support/text.h"

namespace {

using ptxgen::testing_support::NewTestDirectory;
using Result = ptxgen::testing_support::ProcessResult;

// Runs ptxgen with `args` in a new process, with `cache_folder` and the
// shared kernel bundle: the text compared here is each process's own
// whether its kernel is compiled or read, a cache entry being used only for
// the very text asked for.
Result Ptxgen(const std::vector<std::string>& args,
              const std::string& cache_folder) {
  return ptxgen::testing_support::RunPtxgen(
      args, ptxgen::testing_support::WithKernelBundle(
                {{"PTXGEN_CACHE_DIR", cache_folder}}));
}

// The configuration the tool reported on stderr: the one "ptxgen: " line
// that gen::ParseConfigName accepts (others, such as the note that there is
// no GPU, are not names).
std::optional<ptxgen::gen::GemmConfig> ReportedConfig(const std::string& err) {
  std::optional<ptxgen::gen::GemmConfig> found;
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    if (!absl::ConsumePrefix(&line, "ptxgen: ")) continue;
    absl::StatusOr<ptxgen::gen::GemmConfig> config =
        ptxgen::gen::ParseConfigName(std::string(line));
    if (!config.ok()) continue;
    EXPECT_FALSE(found.has_value()) << "two configuration names on stderr:\n"
                                    << err;
    found = *config;
  }
  return found;
}

// Runs `args` (a `gemm ... --emit=cuda` request) in two processes, which
// share a cache folder (a kernel not in the bundle is compiled once), and
// compares both outputs with each other and with GenerateGemm here.
// Returns the configuration the tool picked.
std::optional<ptxgen::gen::GemmConfig> ExpectDeterministic(
    const std::vector<std::string>& args, ptxgen::ptx::ScalarType element) {
  static int requests = 0;
  const std::string request = absl::StrJoin(args, " ");
  const std::string cache_folder =
      NewTestDirectory(absl::StrCat("cache", requests++));
  const Result first = Ptxgen(args, cache_folder);
  const Result second = Ptxgen(args, cache_folder);
  EXPECT_EQ(first.status, 0) << request << ": " << first.err;
  EXPECT_EQ(second.status, 0) << request << ": " << second.err;
  EXPECT_FALSE(first.out.empty()) << request;
  EXPECT_TRUE(first.out == second.out)
      << request << ": two processes printed different text:\n"
      << ptxgen::golden::LineDiff(first.out, second.out, "first process",
                                  "second process");
  EXPECT_EQ(first.err, second.err) << request;

  const std::optional<ptxgen::gen::GemmConfig> config =
      ReportedConfig(first.err);
  if (!config.has_value()) {
    ADD_FAILURE() << request << ": no configuration name on stderr:\n"
                  << first.err;
    return std::nullopt;
  }
  const absl::StatusOr<ptxgen::gen::GeneratedGemm> generated =
      ptxgen::gen::GenerateGemm(*config, element);
  if (!generated.ok()) {
    ADD_FAILURE() << request << ": " << generated.status();
    return config;
  }
  EXPECT_TRUE(generated->source == first.out)
      << request << ": the tool's text is not GenerateGemm's for '"
      << ptxgen::gen::ConfigName(*config) << "':\n"
      << ptxgen::golden::LineDiff(generated->source, first.out,
                                  "GenerateGemm in this process", "ptxgen");
  return config;
}

TEST(DeterminismTest, TheHeuristicsKernelIsTheSameInEveryProcess) {
  const std::optional<ptxgen::gen::GemmConfig> config = ExpectDeterministic(
      {"gemm", "--m=4096", "--n=4096", "--k=4096", "--emit=cuda"},
      ptxgen::ptx::ScalarType::kF16);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->schedule, ptxgen::gen::GemmSchedule::kWarpSpecialized)
      << ptxgen::gen::ConfigName(*config);
}

TEST(DeterminismTest, ANamedConfigurationIsTheSameInEveryProcess) {
  const std::string name = "ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent";
  const std::optional<ptxgen::gen::GemmConfig> config =
      ExpectDeterministic({"gemm", "--m=4096", "--n=4096", "--k=4096",
                           "--emit=cuda", absl::StrCat("--config=", name)},
                          ptxgen::ptx::ScalarType::kF16);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(ptxgen::gen::ConfigName(*config), name);
}

TEST(DeterminismTest, Bf16AndV1AreTheSameInEveryProcess) {
  ExpectDeterministic(
      {"gemm", "--m=1000", "--n=999", "--k=136", "--dtype=bf16", "--emit=cuda"},
      ptxgen::ptx::ScalarType::kBF16);
  const std::optional<ptxgen::gen::GemmConfig> v1 = ExpectDeterministic(
      {"gemm", "--m=4096", "--n=4096", "--k=4096", "--schedule=v1",
       "--block=128x128x64", "--emit=cuda"},
      ptxgen::ptx::ScalarType::kF16);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(ptxgen::gen::ConfigName(*v1), "v1 128x128x64");
}

}  // namespace
