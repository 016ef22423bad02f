// Many threads at once: each prepares and runs its own GEMM on its own
// stream while the others compile, load and launch theirs, round after
// round; every result is checked against a float64 host reference on fresh
// inputs written over a poisoned output. And Gemm::PrepareAsync: several
// problems prepared in the background while the caller works.
#include <cstdint>
#include <future>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

constexpr int kThreads = 16;
constexpr int kRounds = 3;

// Small enough for a host reference per thread and round; tile multiples,
// ragged sizes and a k shorter than a tile.
const GemmProblem kProblems[] = {
    {256, 256, 256, ScalarType::kF16}, {257, 129, 72, ScalarType::kBF16},
    {384, 512, 128, ScalarType::kF16}, {130, 300, 520, ScalarType::kBF16},
    {1, 1024, 512, ScalarType::kF16},  {200, 300, 24, ScalarType::kBF16},
    {512, 256, 192, ScalarType::kF16}, {999, 64, 136, ScalarType::kBF16},
};

// Thread i's configuration: the heuristic's for even i, otherwise one of
// the autotuner's candidates (split-K, stream-K and clusters among them),
// chosen so that threads share some kernels and not others.
gen::GemmConfig ConfigOfThread(int thread, const GemmProblem& problem,
                               const GemmTarget& target) {
  if (thread % 2 == 0) return HeuristicConfig(problem, target);
  const std::vector<gen::GemmConfig> candidates =
      CandidateConfigs(problem, target);
  return candidates[static_cast<size_t>(thread * 7) % candidates.size()];
}

// `gemm`, prepared for `problem`, run on fresh inputs from `seed` on a
// stream of its own: "" when the result matched, else what failed.
std::string RunAndCheck(const Gemm& gemm, const GemmProblem& problem,
                        uint32_t seed) {
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  if (!stream.ok()) return absl::StrCat("stream: ", stream.status().message());
  const int64_t a_count = problem.m * problem.k,
                b_count = problem.n * problem.k,
                c_count = problem.m * problem.n;
  absl::StatusOr<runtime::DeviceBuffer> a =
      runtime::DeviceBuffer::Allocate(a_count * 2);
  absl::StatusOr<runtime::DeviceBuffer> b =
      runtime::DeviceBuffer::Allocate(b_count * 2);
  absl::StatusOr<runtime::DeviceBuffer> c =
      runtime::DeviceBuffer::Allocate(c_count * 2);
  if (!a.ok() || !b.ok() || !c.ok()) return "allocation failed";
  for (const absl::Status& step :
       {FillRandom(a->address(), a_count, problem.element, seed, stream->get()),
        FillRandom(b->address(), b_count, problem.element, seed + 1,
                   stream->get()),
        Poison(c->address(), c_count, stream->get()),
        gemm.Run(a->address(), b->address(), c->address(), stream->get()),
        stream->Synchronize()}) {
    if (!step.ok()) return std::string(step.message());
  }
  absl::StatusOr<std::vector<uint16_t>> host_a = DownloadHalves(*a);
  absl::StatusOr<std::vector<uint16_t>> host_b = DownloadHalves(*b);
  absl::StatusOr<std::vector<uint16_t>> host_c = DownloadHalves(*c);
  if (!host_a.ok() || !host_b.ok() || !host_c.ok()) return "download failed";
  const double error = RelativeErrorByNorm(
      *host_c, HostReferenceGemm(problem, *host_a, *host_b), problem.element);
  if (error < ErrorBound(problem.element)) return "";
  return absl::StrCat("relative error ", error, " over the bound ",
                      ErrorBound(problem.element));
}

// One round of one thread: "" when the result matched, else what failed.
std::string PrepareRunAndCheck(const GemmProblem& problem,
                               const gen::GemmConfig& config, uint32_t seed) {
  GemmOptions options;
  options.config = config;
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
  if (!gemm.ok()) return absl::StrCat("Prepare: ", gemm.status().message());
  return RunAndCheck(*gemm, problem, seed);
}

class GemmConcurrencyGpuTest : public testing_support::HopperTest {};

TEST_F(GemmConcurrencyGpuTest, SixteenThreadsPrepareAndRunTheirOwnGemmsAtOnce) {
  const absl::StatusOr<GemmTarget> target =
      runtime::KernelTargetOf(properties(), "GEMM");
  ASSERT_TRUE(target.ok()) << target.status();
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  for (int round = 0; round < kRounds; ++round) {
    // Released when all threads reach it; the last one out deletes it.
    auto* barrier = new absl::Barrier(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t, round, barrier] {
        const GemmProblem& problem =
            kProblems[(t + round) % std::size(kProblems)];
        const gen::GemmConfig config = ConfigOfThread(t, problem, *target);
        if (barrier->Block()) delete barrier;
        const std::string failed = PrepareRunAndCheck(
            problem, config, static_cast<uint32_t>(1000 * round + 10 * t));
        if (!failed.empty()) {
          failures[t].push_back(
              absl::StrCat("round ", round, ", ", ptx::PtxName(problem.element),
                           " ", problem.m, "x", problem.n, "x", problem.k, ", ",
                           gen::ConfigName(config), ": ", failed));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    threads.clear();
  }
  for (int t = 0; t < kThreads; ++t) {
    for (const std::string& failure : failures[t]) {
      ADD_FAILURE() << "thread " << t << ": " << failure;
    }
  }
}

// Every problem of kProblems (compiled afresh: a cache of this test's own,
// in memory only) prepared in the background while this thread prepares
// and runs a GEMM of its own; each future's Gemm then runs correctly, in
// the context that was current when it was asked for.
TEST_F(GemmConcurrencyGpuTest,
       PreparesSeveralProblemsInTheBackgroundWhileTheCallerWorks) {
  compile::CacheConfig memory_only;
  memory_only.disk_enabled = false;
  compile::KernelCache cache(memory_only);
  GemmOptions options;
  options.cache = &cache;
  std::vector<std::future<absl::StatusOr<Gemm>>> futures;
  for (const GemmProblem& problem : kProblems) {
    futures.push_back(Gemm::PrepareAsync(problem, options));
  }
  const GemmProblem own{320, 192, 264, ScalarType::kF16};
  const absl::StatusOr<GemmTarget> target =
      runtime::KernelTargetOf(properties(), "GEMM");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(PrepareRunAndCheck(own, HeuristicConfig(own, *target), 7), "")
      << "the caller's own GEMM, meanwhile";
  const absl::StatusOr<CUcontext> caller = runtime::CurrentContext();
  ASSERT_TRUE(caller.ok()) << caller.status();
  for (size_t i = 0; i < futures.size(); ++i) {
    const GemmProblem& problem = kProblems[i];
    SCOPED_TRACE(absl::StrCat(ptx::PtxName(problem.element), " ", problem.m,
                              "x", problem.n, "x", problem.k));
    absl::StatusOr<Gemm> gemm = futures[i].get();
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    EXPECT_EQ(gemm->context(), *caller);
    EXPECT_EQ(RunAndCheck(*gemm, problem, static_cast<uint32_t>(20 + i)), "");
  }
}

}  // namespace
}  // namespace ptxgen::gemm
