// Generated GEMMs on the GPU, checked against a reference on fresh random
// inputs with the output poisoned first: every configuration the library
// can pick, on sizes that are and are not multiples of the tiles.
#include <sys/stat.h>
#include <sys/time.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

// Host float64 references stay cheap up to this many multiply-adds; larger
// problems compare against cuBLAS.
constexpr int64_t kHostReferenceLimit = int64_t{1} << 26;

struct Shape {
  int64_t m, n, k;
};

std::string Name(const Shape& shape) {
  return absl::StrCat(shape.m, "x", shape.n, "x", shape.k);
}

const Shape kShapes[] = {
    {256, 256, 256},  {512, 1024, 512}, {384, 768, 1024},  // tile multiples
    {257, 129, 72},   {1000, 999, 136}, {130, 300, 520},   // ragged
    {1, 8, 16},       {3, 5, 8},                           // tiny
    {1, 4096, 4096},  {17, 2048, 1024}, {64, 8192, 512},   // skinny
    {1000, 24, 520},                                       // skinny n
    {256, 200, 5000},                                      // few tiles, long k
    {128, 128, 8},    {200, 300, 24},                      // k < block_k
};

// 16-bit elements on the device.
runtime::DeviceBuffer Allocate(int64_t elements) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(elements * 2);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return *std::move(buffer);
}

std::vector<uint16_t> Download(const runtime::DeviceBuffer& buffer) {
  absl::StatusOr<std::vector<uint16_t>> host = DownloadHalves(buffer);
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *std::move(host) : std::vector<uint16_t>();
}

// The Hilbert tile order on the last of `configs` (the heuristic's), on the
// last with a 2-CTA cluster and on the last with stream-K.
std::vector<gen::GemmConfig> HilbertVariants(
    const std::vector<gen::GemmConfig>& configs) {
  std::vector<gen::GemmConfig> variants;
  auto add_first = [&](auto predicate) {
    for (auto it = configs.rbegin(); it != configs.rend(); ++it) {
      if (it->schedule == gen::GemmSchedule::kWarpSpecialized &&
          predicate(*it)) {
        gen::GemmConfig curve = *it;
        curve.tile_order = gen::TileOrder::kHilbert;
        variants.push_back(curve);
        return;
      }
    }
  };
  add_first([](const gen::GemmConfig&) { return true; });
  add_first(
      [](const gen::GemmConfig& config) { return config.cluster_m == 2; });
  add_first([](const gen::GemmConfig& config) { return config.stream_k; });
  return variants;
}

// A Hopper GPU's test that chooses configurations for the device's target.
class DeviceTargetTest : public testing_support::HopperTest {
 protected:
  void SetUp() override {
    HopperTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const absl::StatusOr<GemmTarget> target =
        runtime::KernelTargetOf(properties(), "GEMM");
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = *target;
  }
  // What the heuristic and the candidates choose for: the device's.
  const GemmTarget& target() const { return target_; }

 private:
  GemmTarget target_;
};

class GemmGpuTest
    : public DeviceTargetTest,
      public testing::WithParamInterface<std::tuple<ScalarType, Shape>> {
 protected:
  GemmProblem Problem() const {
    const auto& [element, shape] = GetParam();
    return GemmProblem{shape.m, shape.n, shape.k, element};
  }
};

// Fresh inputs for every test (seeded by the test's name), one reference,
// then every configuration against it.
TEST_P(GemmGpuTest, EveryConfigurationMatchesTheReference) {
  const GemmProblem problem = Problem();
  const std::string test_name =
      testing::UnitTest::GetInstance()->current_test_info()->name();
  const uint32_t seed =
      static_cast<uint32_t>(std::hash<std::string>()(test_name));
  runtime::DeviceBuffer a = Allocate(problem.m * problem.k);
  runtime::DeviceBuffer b = Allocate(problem.n * problem.k);
  runtime::DeviceBuffer c = Allocate(problem.m * problem.n);
  ASSERT_TRUE(FillRandom(a.address(), problem.m * problem.k, problem.element,
                         seed, nullptr)
                  .ok());
  ASSERT_TRUE(FillRandom(b.address(), problem.n * problem.k, problem.element,
                         seed + 1, nullptr)
                  .ok());

  std::vector<double> host_reference;
  std::vector<uint16_t> cublas_reference;
  if (problem.m * problem.n * problem.k <= kHostReferenceLimit) {
    host_reference = HostReferenceGemm(problem, Download(a), Download(b));
  } else {
    runtime::DeviceBuffer reference = Allocate(problem.m * problem.n);
    ASSERT_TRUE(CublasGemm(problem, a.address(), b.address(),
                           reference.address(), nullptr)
                    .ok());
    cublas_reference = Download(reference);
  }

  std::vector<gen::GemmConfig> configs = V1CandidateConfigs(problem.element);
  for (const gen::GemmConfig& config : CandidateConfigs(problem, target())) {
    configs.push_back(config);
  }
  configs.push_back(HeuristicConfig(problem, target()));
  for (const gen::GemmConfig& config : HilbertVariants(configs)) {
    configs.push_back(config);
  }
  for (const gen::GemmConfig& config : configs) {
    SCOPED_TRACE(gen::ConfigName(config));
    GemmOptions options;
    options.config = config;
    absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    ASSERT_TRUE(Poison(c.address(), problem.m * problem.n, nullptr).ok());
    ASSERT_TRUE(gemm->Run(a.address(), b.address(), c.address(), nullptr).ok());
    const std::vector<uint16_t> result = Download(c);
    const double error =
        host_reference.empty()
            ? RelativeErrorByNorm(result, cublas_reference, problem.element)
            : RelativeErrorByNorm(result, host_reference, problem.element);
    EXPECT_LT(error, ErrorBound(problem.element))
        << gen::ConfigName(config) << " on " << Name(std::get<1>(GetParam()));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmGpuTest,
    testing::Combine(testing::Values(ScalarType::kF16, ScalarType::kBF16),
                     testing::ValuesIn(kShapes)),
    [](const testing::TestParamInfo<std::tuple<ScalarType, Shape>>& info) {
      return absl::StrCat(ptx::PtxName(std::get<0>(info.param)), "_",
                          Name(std::get<1>(info.param)));
    });

class GemmRulesGpuTest : public DeviceTargetTest {};

// Stream-K on shapes whose tiles leave a partial last wave: whole waves of
// tiles, then pieces of the leftover tiles that meet through the workspace.
// Three runs each: a run must leave the flags lowered for the next.
TEST_F(GemmRulesGpuTest, StreamKMatchesCublasRunAfterRun) {
  const Shape shapes[] = {
      {2304, 4096, 1024},  // 288 tiles of 128x256: two waves and 24 left over
      {1000, 3000, 4104},  // ragged, 65 k-tiles: pieces straddle tiles
      {4096, 4096, 4096},  // 512 tiles: three waves and 116 left over
  };
  for (const Shape& shape : shapes) {
    for (ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
      const GemmProblem problem{shape.m, shape.n, shape.k, element};
      runtime::DeviceBuffer a = Allocate(problem.m * problem.k);
      runtime::DeviceBuffer b = Allocate(problem.n * problem.k);
      runtime::DeviceBuffer c = Allocate(problem.m * problem.n);
      runtime::DeviceBuffer reference = Allocate(problem.m * problem.n);
      std::vector<Gemm> gemms;
      for (const gen::GemmConfig& config :
           CandidateConfigs(problem, target())) {
        if (!config.stream_k) continue;
        GemmOptions options;
        options.config = config;
        absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
        ASSERT_TRUE(gemm.ok()) << gemm.status();
        gemms.push_back(*std::move(gemm));
      }
      ASSERT_FALSE(gemms.empty());
      for (int run = 0; run < 3; ++run) {
        const uint32_t seed = 1000 * run + static_cast<uint32_t>(shape.k);
        ASSERT_TRUE(FillRandom(a.address(), problem.m * problem.k, element,
                               seed, nullptr)
                        .ok());
        ASSERT_TRUE(FillRandom(b.address(), problem.n * problem.k, element,
                               seed + 1, nullptr)
                        .ok());
        ASSERT_TRUE(CublasGemm(problem, a.address(), b.address(),
                               reference.address(), nullptr)
                        .ok());
        const std::vector<uint16_t> expected = Download(reference);
        for (const Gemm& gemm : gemms) {
          SCOPED_TRACE(absl::StrCat(gen::ConfigName(gemm.config()), " on ",
                                    Name(shape), " run ", run));
          ASSERT_TRUE(Poison(c.address(), problem.m * problem.n, nullptr).ok());
          ASSERT_TRUE(
              gemm.Run(a.address(), b.address(), c.address(), nullptr).ok());
          EXPECT_LT(RelativeErrorByNorm(Download(c), expected, element),
                    ErrorBound(element));
        }
      }
    }
  }
}

// Ping-pong beyond the candidates: split-K slices as pieces (a tile's two
// slices taken by the two consumers), one tile per CTA (the second
// consumer idle), and a persistent grid whose CTAs get odd piece counts.
TEST_F(GemmRulesGpuTest, PingPongSplitKAndUnevenPiecesMatchCublas) {
  const Shape shapes[] = {{1000, 3000, 4104}, {2304, 4096, 1024}};
  const char* const names[] = {
      "pp 128x128x64 s7 c2 w1 m1 direct g8 k2 persistent",
      "pp 128x128x64 s7 c2 w1 m1 direct g8 tiles",
      "pp 128x128x64 s6 c2 w1 m2 tma e1 g8 persistent",
  };
  for (const Shape& shape : shapes) {
    const GemmProblem problem{shape.m, shape.n, shape.k, ScalarType::kBF16};
    runtime::DeviceBuffer a = Allocate(problem.m * problem.k);
    runtime::DeviceBuffer b = Allocate(problem.n * problem.k);
    runtime::DeviceBuffer c = Allocate(problem.m * problem.n);
    runtime::DeviceBuffer reference = Allocate(problem.m * problem.n);
    const uint32_t seed = static_cast<uint32_t>(shape.m + shape.k);
    ASSERT_TRUE(FillRandom(a.address(), problem.m * problem.k, problem.element,
                           seed, nullptr)
                    .ok());
    ASSERT_TRUE(FillRandom(b.address(), problem.n * problem.k, problem.element,
                           seed + 1, nullptr)
                    .ok());
    ASSERT_TRUE(CublasGemm(problem, a.address(), b.address(),
                           reference.address(), nullptr)
                    .ok());
    const std::vector<uint16_t> expected = Download(reference);
    for (const char* name : names) {
      SCOPED_TRACE(absl::StrCat(name, " on ", Name(shape)));
      absl::StatusOr<gen::GemmConfig> config = gen::ParseConfigName(name);
      ASSERT_TRUE(config.ok()) << config.status();
      GemmOptions options;
      options.config = *config;
      absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
      ASSERT_TRUE(gemm.ok()) << gemm.status();
      ASSERT_TRUE(Poison(c.address(), problem.m * problem.n, nullptr).ok());
      ASSERT_TRUE(
          gemm->Run(a.address(), b.address(), c.address(), nullptr).ok());
      EXPECT_LT(RelativeErrorByNorm(Download(c), expected, problem.element),
                ErrorBound(problem.element));
    }
  }
}

// A CUDA graph captures Run whatever the schedule: Run enqueues kernels
// on the given stream only (no allocation, no host synchronization), so a
// replayed graph computes what a direct call does, replay after replay
// (stream-K's flags and split-K's workspace are reset in it each time).
TEST_F(GemmRulesGpuTest, EveryScheduleRunsCapturedInACudaGraph) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  const Shape shapes[] = {
      {1, 4096, 4096},     // swapped, narrow tile
      {4096, 8, 1024},     // narrow tile unswapped
      {256, 200, 5000},    // few tiles over a long k: split-K
      {2304, 4096, 1024},  // a partial last wave: stream-K candidates
      {128, 128, 8},       // k shorter than one stage
  };
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  for (const Shape& shape : shapes) {
    const GemmProblem problem{shape.m, shape.n, shape.k, ScalarType::kF16};
    std::vector<gen::GemmConfig> configs = {HeuristicConfig(problem, target())};
    for (const gen::GemmConfig& config : CandidateConfigs(problem, target())) {
      if (config.stream_k || config.split_k > 1) configs.push_back(config);
    }
    runtime::DeviceBuffer a = Allocate(problem.m * problem.k);
    runtime::DeviceBuffer b = Allocate(problem.n * problem.k);
    runtime::DeviceBuffer c = Allocate(problem.m * problem.n);
    runtime::DeviceBuffer reference = Allocate(problem.m * problem.n);
    ASSERT_TRUE(FillRandom(a.address(), problem.m * problem.k, problem.element,
                           7, nullptr)
                    .ok());
    ASSERT_TRUE(FillRandom(b.address(), problem.n * problem.k, problem.element,
                           8, nullptr)
                    .ok());
    ASSERT_TRUE(CublasGemm(problem, a.address(), b.address(),
                           reference.address(), nullptr)
                    .ok());
    const std::vector<uint16_t> expected = Download(reference);
    for (const gen::GemmConfig& config : configs) {
      SCOPED_TRACE(absl::StrCat(gen::ConfigName(config), " on ", Name(shape)));
      GemmOptions options;
      options.config = config;
      absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
      ASSERT_TRUE(gemm.ok()) << gemm.status();
      ASSERT_EQ((*driver)->cuStreamBeginCapture(
                    stream->get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                CUDA_SUCCESS);
      const absl::Status run =
          gemm->Run(a.address(), b.address(), c.address(), stream->get());
      CUgraph graph = nullptr;
      ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph),
                CUDA_SUCCESS);
      ASSERT_TRUE(run.ok()) << run;
      CUgraphExec replay = nullptr;
      ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
                CUDA_SUCCESS);
      for (int replays = 0; replays < 3; ++replays) {
        ASSERT_TRUE(Poison(c.address(), problem.m * problem.n, nullptr).ok());
        ASSERT_EQ((*driver)->cuGraphLaunch(replay, stream->get()),
                  CUDA_SUCCESS);
        ASSERT_TRUE(stream->Synchronize().ok());
        EXPECT_LT(RelativeErrorByNorm(Download(c), expected, problem.element),
                  ErrorBound(problem.element))
            << "replay " << replays;
      }
      EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
      EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
    }
  }
}

// Shapes the heuristic plans, for an H200's 132 SMs, as split-K (four
// 64x128 tiles, k cut in four) and as stream-K (a partial last wave).
struct WorkspaceCase {
  const char* name;
  Shape shape;
  bool stream_k;
};
const WorkspaceCase kWorkspaceCases[] = {
    {"split-K", {128, 256, 4096}, false},
    {"stream-K", {2304, 4096, 8192}, true},
};

// The heuristic's configuration for the case, its workspace the caller's.
absl::StatusOr<Gemm> PrepareWithCallerWorkspace(const WorkspaceCase& c,
                                                const GemmTarget& target) {
  const GemmProblem problem{c.shape.m, c.shape.n, c.shape.k, ScalarType::kF16};
  GemmOptions options;
  options.config = HeuristicConfig(problem, target);
  options.workspace = WorkspaceOwner::kCaller;
  return Gemm::Prepare(problem, options);
}

// Whether the Gemm is planned as the case says: else the test would not
// exercise a workspace.
void ExpectPlannedAs(const Gemm& gemm, const WorkspaceCase& c) {
  if (c.stream_k) {
    EXPECT_TRUE(gemm.config().stream_k) << gen::ConfigName(gemm.config());
  } else {
    EXPECT_TRUE(gen::ReducesSlicesInWorkspace(gemm.config()))
        << gen::ConfigName(gemm.config());
  }
  EXPECT_GT(gemm.workspace_bytes(), 0);
}

// Device memory for a workspace, every byte 0xff: stream-K's flags raised,
// its partial sums and split-K's slices NaN, until a run sets them.
runtime::DeviceBuffer PoisonedWorkspace(int64_t bytes) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(bytes);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(buffer->Memset8(0xff).ok());
  return *std::move(buffer);
}

// One problem's inputs, D and cuBLAS's D, on the device.
struct Operands {
  Operands(const GemmProblem& problem, uint32_t seed)
      : a(Allocate(problem.m * problem.k)),
        b(Allocate(problem.n * problem.k)),
        d(Allocate(problem.m * problem.n)),
        reference(Allocate(problem.m * problem.n)) {
    Refill(problem, seed);
  }
  // New random A and B, cuBLAS's D of them, and D poisoned.
  void Refill(const GemmProblem& problem, uint32_t seed) {
    EXPECT_TRUE(FillRandom(a.address(), problem.m * problem.k, problem.element,
                           seed, nullptr)
                    .ok());
    EXPECT_TRUE(FillRandom(b.address(), problem.n * problem.k, problem.element,
                           seed + 1, nullptr)
                    .ok());
    EXPECT_TRUE(CublasGemm(problem, a.address(), b.address(),
                           reference.address(), nullptr)
                    .ok());
    EXPECT_TRUE(Poison(d.address(), problem.m * problem.n, nullptr).ok());
  }
  GemmOperands ForRun() const {
    GemmOperands operands;
    operands.a = a.address();
    operands.b = b.address();
    operands.d = d.address();
    return operands;
  }
  double Error(const GemmProblem& problem) const {
    return RelativeErrorByNorm(Download(d), Download(reference),
                               problem.element);
  }
  runtime::DeviceBuffer a, b, d, reference;
};

// One Gemm prepared once, run on two streams at once, each run with a
// workspace of its own stream (poisoned first): the runs overlap, and each
// D is its own inputs' product.
TEST_F(GemmRulesGpuTest, CallerWorkspaceRunsOverlapOnTwoStreams) {
  for (const WorkspaceCase& c : kWorkspaceCases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Gemm> gemm = PrepareWithCallerWorkspace(c, target());
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    ExpectPlannedAs(*gemm, c);
    const GemmProblem& problem = gemm->problem();
    std::vector<runtime::Stream> streams;
    std::vector<Operands> operands;
    std::vector<runtime::DeviceBuffer> workspaces;
    for (uint32_t i = 0; i < 2; ++i) {
      absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
      ASSERT_TRUE(stream.ok()) << stream.status();
      streams.push_back(*std::move(stream));
      operands.emplace_back(problem, 40 + 2 * i);
      workspaces.push_back(PoisonedWorkspace(gemm->workspace_bytes()));
    }
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < streams.size(); ++i) {
        const CallerWorkspace workspace{workspaces[i].address(),
                                        gemm->workspace_bytes()};
        ASSERT_TRUE(
            gemm->Run(operands[i].ForRun(), workspace, streams[i].get()).ok());
      }
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      ASSERT_TRUE(streams[i].Synchronize().ok());
      EXPECT_LT(operands[i].Error(problem), ErrorBound(problem.element))
          << "stream " << i;
    }
  }
}

// Prepared first, then captured (global mode, as PyTorch's graphs are) on
// a stream created after it: the graph replays on new inputs, its
// workspace poisoned before each replay (the graph lowers stream-K's
// flags itself).
TEST_F(GemmRulesGpuTest, CallerWorkspaceRunIsCapturedAndReplayedOnNewInputs) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  for (const WorkspaceCase& c : kWorkspaceCases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<Gemm> gemm = PrepareWithCallerWorkspace(c, target());
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    ExpectPlannedAs(*gemm, c);
    const GemmProblem& problem = gemm->problem();
    Operands operands(problem, 50);
    runtime::DeviceBuffer workspace =
        PoisonedWorkspace(gemm->workspace_bytes());
    absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
    ASSERT_TRUE(stream.ok()) << stream.status();
    ASSERT_EQ((*driver)->cuStreamBeginCapture(stream->get(),
                                              CU_STREAM_CAPTURE_MODE_GLOBAL),
              CUDA_SUCCESS);
    const absl::Status run = gemm->Run(
        operands.ForRun(), {workspace.address(), gemm->workspace_bytes()},
        stream->get());
    CUgraph graph = nullptr;
    ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph),
              CUDA_SUCCESS);
    ASSERT_TRUE(run.ok()) << run;
    CUgraphExec replay = nullptr;
    ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
              CUDA_SUCCESS);
    for (uint32_t replays = 0; replays < 3; ++replays) {
      operands.Refill(problem, 60 + 2 * replays);
      ASSERT_TRUE(workspace.Memset8(0xff).ok());
      ASSERT_EQ((*driver)->cuGraphLaunch(replay, stream->get()), CUDA_SUCCESS);
      ASSERT_TRUE(stream->Synchronize().ok());
      EXPECT_LT(operands.Error(problem), ErrorBound(problem.element))
          << "replay " << replays;
    }
    EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
    EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
  }
}

// One workspace zeroed once, kept for a stream as a server keeps it: the
// split-K and the stream-K Gemm take turns on it, run `zeroed` (nothing
// zeroed before a run), then a capture of both replays on it. Each run
// leaves the flag region as the next needs it: split-K's slices lie past
// it, and stream-K lowers its flags.
TEST_F(GemmRulesGpuTest, AZeroedWorkspaceServesSplitKAndStreamKGemmsInTurn) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  std::vector<Gemm> gemms;
  std::vector<Operands> operands;
  int64_t bytes = 0;
  for (const WorkspaceCase& c : kWorkspaceCases) {
    absl::StatusOr<Gemm> gemm = PrepareWithCallerWorkspace(c, target());
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    ExpectPlannedAs(*gemm, c);
    bytes = std::max(bytes, gemm->workspace_bytes());
    operands.emplace_back(gemm->problem(), 70 + 2 * gemms.size());
    gemms.push_back(*std::move(gemm));
  }
  runtime::DeviceBuffer workspace = PoisonedWorkspace(bytes);
  ASSERT_TRUE(workspace.Memset8(0).ok());
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  const CallerWorkspace kept{workspace.address(), bytes, /*zeroed=*/true};
  auto expect_each_correct = [&](const std::string& when) {
    ASSERT_TRUE(stream->Synchronize().ok());
    for (size_t i = 0; i < gemms.size(); ++i) {
      EXPECT_LT(operands[i].Error(gemms[i].problem()),
                ErrorBound(gemms[i].problem().element))
          << kWorkspaceCases[i].name << ", " << when;
    }
  };
  for (uint32_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < gemms.size(); ++i) {
      operands[i].Refill(gemms[i].problem(), 80 + 2 * round);
      ASSERT_TRUE(gemms[i].Run(operands[i].ForRun(), kept, stream->get()).ok());
    }
    expect_each_correct(absl::StrCat("round ", round));
  }
  ASSERT_EQ((*driver)->cuStreamBeginCapture(stream->get(),
                                            CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  absl::Status captured = absl::OkStatus();
  for (size_t i = 0; i < gemms.size() && captured.ok(); ++i) {
    captured = gemms[i].Run(operands[i].ForRun(), kept, stream->get());
  }
  CUgraph graph = nullptr;
  ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured;
  CUgraphExec replay = nullptr;
  ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
            CUDA_SUCCESS);
  for (uint32_t replays = 0; replays < 3; ++replays) {
    for (size_t i = 0; i < gemms.size(); ++i) {
      operands[i].Refill(gemms[i].problem(), 90 + 2 * replays);
    }
    ASSERT_EQ((*driver)->cuGraphLaunch(replay, stream->get()), CUDA_SUCCESS);
    expect_each_correct(absl::StrCat("replay ", replays));
  }
  EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
  EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
}

// A Gemm whose workspace is the caller's refuses a run without one, or
// with one null, too small or misaligned, naming what it needs; a Gemm
// that needs none runs with or without one.
TEST_F(GemmRulesGpuTest, CallerWorkspaceGemmsRefuseAMissingOrSmallWorkspace) {
  absl::StatusOr<Gemm> gemm =
      PrepareWithCallerWorkspace(kWorkspaceCases[0], target());
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  const int64_t bytes = gemm->workspace_bytes();
  // The flag region, then four f32 slices of D.
  ASSERT_EQ(bytes, gen::kWorkspaceFlagRegionBytes + 4 * 128 * 256 * 4);
  Operands operands(gemm->problem(), 70);
  runtime::DeviceBuffer workspace = PoisonedWorkspace(bytes + 256);
  const std::string needs = absl::StrCat("this Gemm's split-K launch needs ",
                                         bytes, " bytes, 256-byte aligned");
  const absl::Status unsized = gemm->Run(operands.ForRun(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(unsized)) << unsized;
  EXPECT_NE(unsized.message().find(
                absl::StrCat("needs a workspace of ", bytes,
                             " bytes, which its caller gives each run")),
            absl::string_view::npos)
      << unsized;
  EXPECT_EQ(gemm->Run(operands.ForRun(), CallerWorkspace{0, bytes}, nullptr)
                .message(),
            "GEMM: the workspace is a null pointer; " + needs);
  EXPECT_EQ(gemm->Run(operands.ForRun(),
                      CallerWorkspace{workspace.address(), bytes - 1}, nullptr)
                .message(),
            absl::StrCat("GEMM: a workspace of ", bytes - 1,
                         " bytes is too small: ", needs));
  const absl::Status misaligned =
      gemm->Run(operands.ForRun(),
                CallerWorkspace{workspace.address() + 16, bytes}, nullptr);
  EXPECT_NE(misaligned.message().find("is not 256-byte aligned: " + needs),
            absl::string_view::npos)
      << misaligned;
  ASSERT_TRUE(gemm->Run(operands.ForRun(),
                        CallerWorkspace{workspace.address(), bytes}, nullptr)
                  .ok());
  EXPECT_LT(operands.Error(gemm->problem()), ErrorBound(ScalarType::kF16));

  const GemmProblem small{64, 64, 64, ScalarType::kF16};
  GemmOptions options;
  options.workspace = WorkspaceOwner::kCaller;
  // The heuristic runs even one tile stream-K; without it, no workspace.
  options.config = HeuristicConfig(small, target());
  options.config->stream_k = false;
  options.config->split_k = 1;
  absl::StatusOr<Gemm> plain = Gemm::Prepare(small, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->workspace_bytes(), 0);
  Operands plain_operands(small, 80);
  EXPECT_TRUE(plain->Run(plain_operands.ForRun(), nullptr).ok());
  EXPECT_TRUE(
      plain->Run(plain_operands.ForRun(), CallerWorkspace{}, nullptr).ok());
  EXPECT_LT(plain_operands.Error(small), ErrorBound(ScalarType::kF16));
}

TEST_F(GemmRulesGpuTest, SizesTmaCannotDescribeAreRefused) {
  const absl::StatusOr<Gemm> gemm =
      Gemm::Prepare(GemmProblem{1, 1, 1, ScalarType::kF16});
  ASSERT_FALSE(gemm.ok());
  EXPECT_NE(gemm.status().message().find("k must be a multiple of 8"),
            absl::string_view::npos)
      << gemm.status();
}

TEST_F(GemmRulesGpuTest, NullOrMisalignedPointersAreRefused) {
  const GemmProblem problem{64, 64, 64, ScalarType::kF16};
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  runtime::DeviceBuffer buffer = Allocate(64 * 64 * 4);
  const absl::Status run = gemm->Run(buffer.address() + 2, buffer.address(),
                                     buffer.address(), nullptr);
  EXPECT_NE(run.message().find("A must be 16-byte aligned"),
            absl::string_view::npos)
      << run;
  const absl::Status null_c =
      gemm->Run(buffer.address(), buffer.address(), 0, nullptr);
  // The three-pointer call writes D = c.
  EXPECT_EQ(null_c.message(), "GEMM: D is a null pointer");
}

// An fp8 D of a scaled problem reads scale_d, and a recorded amax is
// written through amax_d: each named when missing or misaligned; a bf16 D
// has no scale_d to give.
TEST_F(GemmRulesGpuTest, ScaleDAndAmaxPointersAreCheckedWhereTheyAreRead) {
  GemmProblem problem{64, 64, 128, ScalarType::kE4M3};
  problem.output = ScalarType::kE4M3;
  problem.scaling = gen::GemmScaling::kTensor;
  problem.record_amax = true;
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  // A and B (8 KiB each as one buffer), D (4 KiB), then the scalars.
  runtime::DeviceBuffer buffer = Allocate(16 << 10);
  const CUdeviceptr scalars = buffer.address() + (12 << 10);
  GemmOperands operands;
  operands.a = operands.b = buffer.address();
  operands.d = buffer.address() + (8 << 10);
  operands.scale_a = scalars;
  operands.scale_b = scalars + 4;
  EXPECT_EQ(gemm->Run(operands, nullptr).message(),
            "GEMM: scale_d is a null pointer");
  operands.scale_d = scalars + 8;
  EXPECT_EQ(gemm->Run(operands, nullptr).message(),
            "GEMM: amax_d is a null pointer");
  operands.amax_d = scalars + 2;
  EXPECT_NE(gemm->Run(operands, nullptr)
                .message()
                .find("amax_d must be 4-byte aligned"),
            absl::string_view::npos);
  operands.amax_d = scalars + 12;
  EXPECT_TRUE(gemm->Run(operands, nullptr).ok());
  problem.output = ScalarType::kBF16;
  problem.record_amax = false;
  absl::StatusOr<Gemm> bf16_d = Gemm::Prepare(problem);
  ASSERT_TRUE(bf16_d.ok()) << bf16_d.status();
  operands.scale_d = operands.amax_d = 0;
  EXPECT_TRUE(bf16_d->Run(operands, nullptr).ok());
}

// Timing inputs: enough distinct copies of A and B to pass L2 four times
// over, at most 16; one copy where a single pass already does.
TEST_F(GemmRulesGpuTest, RotatingOperandsOutgrowL2WithDistinctCopies) {
  const GemmProblem problem{256, 256, 256, ScalarType::kF16};  // 256 KiB a pass
  absl::StatusOr<RotatingGemmOperands> small_l2 =
      RandomRotatingGemmOperands(problem, /*l2_bytes=*/256 << 10, 5, nullptr);
  ASSERT_TRUE(small_l2.ok()) << small_l2.status();
  EXPECT_EQ(small_l2->a.size(), 5u);
  EXPECT_EQ(small_l2->b.size(), 5u);
  EXPECT_NE(Download(small_l2->a[0]), Download(small_l2->a[1]));
  EXPECT_NE(Download(small_l2->a[0]), Download(small_l2->b[0]));
  EXPECT_EQ(small_l2->c.size(), 256u * 256u * 2u);
  absl::StatusOr<RotatingGemmOperands> large_l2 =
      RandomRotatingGemmOperands(problem, /*l2_bytes=*/64 << 20, 5, nullptr);
  ASSERT_TRUE(large_l2.ok()) << large_l2.status();
  EXPECT_EQ(large_l2->a.size(), 16u);
  absl::StatusOr<RotatingGemmOperands> no_l2 =
      RandomRotatingGemmOperands(problem, /*l2_bytes=*/0, 5, nullptr);
  ASSERT_TRUE(no_l2.ok()) << no_l2.status();
  EXPECT_EQ(no_l2->a.size(), 1u);
}

// A warm Prepare finds its kernel in the cache by identity, generating no
// text, and shares the kernel loaded for that identity in this context;
// other flags are another kernel, loaded beside it.
TEST_F(GemmRulesGpuTest, AWarmPrepareSharesTheKernelOfItsIdentity) {
  compile::KernelCache cache(compile::CacheConfig{/*disk_enabled=*/false});
  GemmOptions options;
  options.cache = &cache;
  const GemmProblem problem{256, 256, 64, ScalarType::kF16};
  absl::StatusOr<Gemm> cold = Gemm::Prepare(problem, options);
  ASSERT_TRUE(cold.ok()) << cold.status();
  absl::StatusOr<Gemm> warm = Gemm::Prepare(problem, options);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(cache.identity_lookups().found, 1);
  EXPECT_EQ(cache.identity_lookups().missed, 1);
  EXPECT_EQ(&warm->generated(), &cold->generated());
  options.nvrtc_flags = {"-lineinfo"};
  absl::StatusOr<Gemm> flagged = Gemm::Prepare(problem, options);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_NE(&flagged->generated(), &cold->generated());
  EXPECT_NE(flagged->compiled().cache_key, cold->compiled().cache_key);
  EXPECT_EQ(flagged->compiled().options.flags,
            (std::vector<std::string>{"--minimal", "-lineinfo"}));
}

TEST_F(GemmRulesGpuTest, AutotunerPicksAMeasuredCandidateAndRemembersIt) {
  const GemmProblem problem{512, 512, 512, ScalarType::kF16};
  const std::vector<gen::GemmConfig> candidates =
      V1CandidateConfigs(problem.element);
  absl::StatusOr<TuningReport> tuned =
      Autotune(problem, candidates, compile::KernelCache::Default(),
               AutotuneOptions{/*use_records=*/false});
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  ASSERT_EQ(tuned->measurements.size(), candidates.size());
  double fastest = 1e30;
  for (const TuningMeasurement& measurement : tuned->measurements) {
    ASSERT_TRUE(measurement.status.ok()) << measurement.status;
    EXPECT_GT(measurement.milliseconds, 0);
    fastest = std::min(fastest, measurement.milliseconds);
  }
  for (const TuningMeasurement& measurement : tuned->measurements) {
    if (measurement.config == tuned->best) {
      EXPECT_EQ(measurement.milliseconds, fastest);
    }
  }
  absl::StatusOr<TuningReport> again =
      Autotune(problem, candidates, compile::KernelCache::Default());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->from_record);
  EXPECT_EQ(again->best, tuned->best);
}

// The autotuner times a general problem on operands laid out as it stores
// them: leading dimensions, a batch, C read, a bias, an f32 D, and the
// swapped candidates of a skinny problem.
TEST_F(GemmRulesGpuTest, AutotunerTimesGeneralProblemsOnTheirOwnLayout) {
  GemmProblem general{200, 300, 136, ScalarType::kBF16};
  general.output = ScalarType::kF32;
  general.lda = 144;
  general.ldd = 320;
  general.batch = 2;
  general.beta = 0.5f;
  general.bias = BiasAlong::kM;
  general.bias_type = ScalarType::kF16;
  general.activation = Activation::kGelu;
  GemmProblem skinny{5, 1000, 256, ScalarType::kF16};
  skinny.b_major = MajorOrder::kMN;
  skinny.bias = BiasAlong::kN;
  for (const GemmProblem& problem : {general, skinny}) {
    std::vector<gen::GemmConfig> candidates =
        CandidateConfigs(problem, target());
    ASSERT_FALSE(candidates.empty());
    absl::StatusOr<TuningReport> tuned =
        Autotune(problem, candidates, compile::KernelCache::Default(),
                 AutotuneOptions{/*use_records=*/false});
    ASSERT_TRUE(tuned.ok()) << tuned.status();
    for (const TuningMeasurement& measurement : tuned->measurements) {
      EXPECT_TRUE(measurement.status.ok())
          << gen::ConfigName(measurement.config) << ": " << measurement.status;
    }
  }
}

// A record write also deletes what record writers that died left behind:
// temporaries of records (a SHA-256 key, ".tmp.", 16 hex digits) older than
// an hour, not younger ones, and no file named otherwise, however old.
TEST_F(GemmRulesGpuTest, AutotunerDeletesTemporariesOfDeadRecordWriters) {
  char pattern[] = "/tmp/ptxgen_autotune_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string records = std::string(pattern) + "/autotune";
  ASSERT_EQ(mkdir(records.c_str(), 0700), 0);
  const std::string record = records + "/" + std::string(64, 'a');
  const std::string stale = record + ".tmp.0123456789abcdef";
  const std::string fresh = record + ".tmp.fedcba9876543210";
  const std::string users = records + "/notes.tmp.4242.0";
  for (const std::string& path : {stale, fresh, users}) {
    ASSERT_TRUE(std::ofstream(path) << "half a record");
  }
  const struct timeval two_hours_ago[2] = {{time(nullptr) - 7200, 0},
                                           {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimes(stale.c_str(), two_hours_ago), 0);
  ASSERT_EQ(utimes(users.c_str(), two_hours_ago), 0);
  compile::KernelCache cache(compile::CacheConfig{true, pattern});
  const GemmProblem problem{128, 128, 64, ScalarType::kF16};
  absl::StatusOr<TuningReport> tuned =
      Autotune(problem, {V1CandidateConfigs(problem.element).front()}, cache,
               AutotuneOptions{/*use_records=*/false});
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  struct stat info;
  EXPECT_NE(stat(stale.c_str(), &info), 0) << stale << " was kept";
  EXPECT_EQ(stat(fresh.c_str(), &info), 0) << fresh << " was deleted";
  EXPECT_EQ(stat(users.c_str(), &info), 0) << users << " was deleted";
  EXPECT_EQ(stat(tuned->record_path.c_str(), &info), 0) << "no record written";
}

}  // namespace
}  // namespace ptxgen::gemm
