// The shared kernel bundle serves what it was built for: each problem of
// problems.txt, planned by the built tool as the tests plan it, is found in
// the read-only folder, nothing compiled and nothing written. A bundle whose
// keys differ from the tests' lookups (other NVRTC arguments, a stale
// build) fails here, where otherwise every test would quietly compile again.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_bundle.h"
#include "tests/support/ptxgen_process.h"
#include "tests/support/text.h"

namespace {

using ptxgen::testing_support::Contains;
using ptxgen::testing_support::NewTestDirectory;
using ptxgen::testing_support::ProcessResult;

// The problem lines of problems.txt (a runfile), comments and blank lines
// left out.
std::vector<std::string> Problems() {
  std::vector<std::string> problems;
  for (absl::string_view line : absl::StrSplit(
           ptxgen::testing_support::ReadFile("tests/kernels/problems.txt"),
           '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line[0] != '#') problems.emplace_back(line);
  }
  return problems;
}

TEST(BundleTest, EveryListedProblemIsReadFromTheBundle) {
  const std::vector<std::string> problems = Problems();
  ASSERT_GE(problems.size(), 2u);
  const std::string writable = NewTestDirectory("writable");
  for (const std::string& problem : problems) {
    std::vector<std::string> args = {"gemm"};
    for (absl::string_view flag :
         absl::StrSplit(problem, ' ', absl::SkipEmpty()))
      args.emplace_back(flag);
    // The SM count the bundle was planned for (kernel_bundle's default).
    args.push_back("--sms=132");
    args.push_back("--emit=json");
    const ProcessResult run = ptxgen::testing_support::RunPtxgen(
        args, ptxgen::testing_support::WithKernelBundle(
                  {{"PTXGEN_CACHE_DIR", writable}}));
    ASSERT_EQ(run.status, 0) << problem << ": " << run.err;
    EXPECT_TRUE(absl::StartsWith(run.out, "{\"schema\":2,\"cache\":\"hit\""))
        << problem << ": compiled, not read from "
        << ptxgen::testing_support::KernelBundle() << ":\n"
        << run.out;
    EXPECT_FALSE(Contains(run.err, "warning")) << problem << ": " << run.err;
  }
  EXPECT_EQ(ptxgen::testing_support::ListDirectory(writable).size(), 0u)
      << "kernels were compiled into " << writable;
}

}  // namespace
