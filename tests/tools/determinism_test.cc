// Generated text is the same in every process: the built ptxgen tool, run
// twice in separate processes with the same GEMM request, prints the same
// bytes, and they are the bytes gen::GenerateGemm gives in this process for
// the configuration the tool said it picked ("ptxgen: <config name>" on
// stderr). A difference would make kernel-cache keys, golden files and
// reviews of generated text depend on the process (addresses, hash seeds,
// unordered iteration, uninitialized memory).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
#include "tests/support/text.h"

extern char** environ;

namespace {

using ptxgen::testing_support::ReadFile;

// Under `bazel test` the working directory is the runfiles root.
constexpr char kPtxgen[] = "tools/ptxgen";

std::string NewTestDirectory(absl::string_view label) {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  const char* root = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(root != nullptr ? root : "/tmp", "/", test->test_suite_name(),
                   ".", test->name(), ".", label);
  mkdir(path.c_str(), 0700);
  return path;
}

struct Result {
  int status = -1;  // the exit status; -1 when it did not exit normally
  std::string out;
  std::string err;
};

// This process's environment without any PTXGEN_ variable (a developer's
// settings must not leak in), plus PTXGEN_CACHE_DIR=`cache_dir`.
std::vector<std::string> Environment(const std::string& cache_dir) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!absl::StartsWith(*entry, "PTXGEN_")) entries.emplace_back(*entry);
  }
  entries.push_back(absl::StrCat("PTXGEN_CACHE_DIR=", cache_dir));
  return entries;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Runs ptxgen with `args` in a new process, with a cache folder of its own.
Result Ptxgen(const std::vector<std::string>& args) {
  static int runs = 0;
  const int run = runs++;
  const std::string prefix = absl::StrCat(NewTestDirectory("runs"), "/", run);
  std::vector<std::string> argv = {kPtxgen};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env =
      Environment(NewTestDirectory(absl::StrCat("cache", run)));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, (prefix + ".out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (prefix + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, kPtxgen, &actions, nullptr,
                                  Pointers(argv).data(), Pointers(env).data());
  posix_spawn_file_actions_destroy(&actions);
  Result result;
  if (spawned != 0) {
    ADD_FAILURE() << "cannot run " << kPtxgen << ": " << std::strerror(spawned);
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.status = WEXITSTATUS(status);
  result.out = ReadFile(prefix + ".out");
  result.err = ReadFile(prefix + ".err");
  return result;
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
    EXPECT_FALSE(found.has_value()) << "two configuration names on stderr:\n" << err;
    found = *config;
  }
  return found;
}

// Runs `args` (a `gemm ... --emit=cuda` request) in two processes and
// compares both outputs with each other and with GenerateGemm here.
// Returns the configuration the tool picked.
std::optional<ptxgen::gen::GemmConfig> ExpectDeterministic(
    const std::vector<std::string>& args, ptxgen::ptx::ScalarType element) {
  const std::string request = absl::StrJoin(args, " ");
  const Result first = Ptxgen(args);
  const Result second = Ptxgen(args);
  EXPECT_EQ(first.status, 0) << request << ": " << first.err;
  EXPECT_EQ(second.status, 0) << request << ": " << second.err;
  EXPECT_FALSE(first.out.empty()) << request;
  EXPECT_TRUE(first.out == second.out)
      << request << ": two processes printed different text:\n"
      << ptxgen::golden::LineDiff(first.out, second.out, "first process",
                                  "second process");
  EXPECT_EQ(first.err, second.err) << request;

  const std::optional<ptxgen::gen::GemmConfig> config = ReportedConfig(first.err);
  if (!config.has_value()) {
    ADD_FAILURE() << request << ": no configuration name on stderr:\n" << first.err;
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
  const std::optional<ptxgen::gen::GemmConfig> config = ExpectDeterministic(
      {"gemm", "--m=4096", "--n=4096", "--k=4096", "--emit=cuda",
       absl::StrCat("--config=", name)},
      ptxgen::ptx::ScalarType::kF16);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(ptxgen::gen::ConfigName(*config), name);
}

TEST(DeterminismTest, Bf16AndV1AreTheSameInEveryProcess) {
  ExpectDeterministic({"gemm", "--m=1000", "--n=999", "--k=136", "--dtype=bf16",
                       "--emit=cuda"},
                      ptxgen::ptx::ScalarType::kBF16);
  const std::optional<ptxgen::gen::GemmConfig> v1 = ExpectDeterministic(
      {"gemm", "--m=4096", "--n=4096", "--k=4096", "--schedule=v1",
       "--block=128x128x64", "--emit=cuda"},
      ptxgen::ptx::ScalarType::kF16);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(ptxgen::gen::ConfigName(*v1), "v1 128x128x64");
}

}  // namespace
