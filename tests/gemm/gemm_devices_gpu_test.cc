// Several devices and several contexts in one process: each Gemm runs in
// the context it was prepared in (an explicit device's primary context, or
// the caller's current one) with a module and workspace of that context,
// while compiled code is shared through the kernel cache; a Run in another
// context, on another context's stream or with memory its kernel cannot
// reach is refused, never launched. On one GPU: explicit device selection,
// a second context on the device, threads in both at once, background
// preparation. With two Hopper GPUs: both from two threads, and a Gemm per
// device prepared on one thread and run on others.
#include <chrono>
#include <cstdint>
#include <future>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/barrier.h"
#include "gtest/gtest.h"
#include "lib/testing/cublas_library.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

// HopperTest has loaded it.
const runtime::Driver& TheDriver() { return **runtime::Driver::Get(); }

std::string Hex(CUcontext context) {
  return absl::StrCat("0x", absl::Hex(reinterpret_cast<uintptr_t>(context)));
}

GemmOptions OnDevice(int ordinal) {
  GemmOptions options;
  options.device = ordinal;
  return options;
}

CUcontext PrimaryContextOf(int ordinal) {
  absl::StatusOr<const runtime::PrimaryContext*> primary =
      runtime::RetainedPrimaryContext(ordinal);
  EXPECT_TRUE(primary.ok()) << primary.status();
  return primary.ok() ? (*primary)->get() : nullptr;
}

CUcontext Current() {
  absl::StatusOr<CUcontext> current = runtime::CurrentContext();
  EXPECT_TRUE(current.ok()) << current.status();
  return current.value_or(nullptr);
}

// A context of the test's own on device `ordinal` (cuCtxCreate), left not
// current.
absl::StatusOr<CUcontext> CreateContext(int ordinal) {
  const runtime::Driver& driver = TheDriver();
  absl::StatusOr<CUdevice> device = runtime::GetDevice(ordinal);
  if (!device.ok()) return device.status();
  CUcontext context = nullptr;
  if (absl::Status created = driver.Check(
          driver.cuCtxCreate(&context, nullptr, 0, *device), "cuCtxCreate");
      !created.ok()) {
    return created;
  }
  // cuCtxCreate pushed it; the caller's context is current again.
  CUcontext popped = nullptr;
  if (absl::Status restored =
          driver.Check(driver.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
      !restored.ok()) {
    return restored;
  }
  return context;
}

// A second context on device 0 for the whole binary. Never destroyed: the
// helper kernels (random fill, split-K's reduce; lib/gemm/helper_kernels.cc)
// are cached by CUcontext handle, which a context created after a destroyed
// one may get. ContextsCreatedAfterDestroyedOnesLoadTheirOwnKernels
// destroys its own contexts and uses no helper kernel in them.
CUcontext SecondContext() {
  static const absl::StatusOr<CUcontext>* const context =
      new absl::StatusOr<CUcontext>(CreateContext(0));
  EXPECT_TRUE(context->ok()) << context->status();
  return context->ok() ? **context : nullptr;
}

// Uniform in [-1, 1) from `seed`, as 16-bit floats of `element`.
std::vector<uint16_t> RandomHalves(int64_t count, ScalarType element,
                                   uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> halves(static_cast<size_t>(count));
  for (uint16_t& half : halves)
    half = FloatToHalfBits(uniform(generator), element);
  return halves;
}

absl::StatusOr<runtime::DeviceBuffer> Upload(
    const std::vector<uint16_t>& halves) {
  const size_t bytes = halves.size() * sizeof(uint16_t);
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(bytes);
  if (!buffer.ok()) return buffer.status();
  if (absl::Status copied = buffer->CopyFromHost(halves.data(), bytes);
      !copied.ok()) {
    return copied;
  }
  return buffer;
}

// Random A and B of a problem on the host and in the current context, and
// room for D there. Written from the host: no helper kernel runs.
struct Operands {
  GemmProblem problem;
  std::vector<uint16_t> host_a, host_b;
  runtime::DeviceBuffer a, b, d;
};

absl::StatusOr<Operands> NewOperands(const GemmProblem& problem,
                                     uint32_t seed) {
  std::vector<uint16_t> host_a =
      RandomHalves(problem.m * problem.k, problem.element, seed);
  std::vector<uint16_t> host_b =
      RandomHalves(problem.n * problem.k, problem.element, seed + 1);
  absl::StatusOr<runtime::DeviceBuffer> a = Upload(host_a);
  if (!a.ok()) return a.status();
  absl::StatusOr<runtime::DeviceBuffer> b = Upload(host_b);
  if (!b.ok()) return b.status();
  absl::StatusOr<runtime::DeviceBuffer> d =
      runtime::DeviceBuffer::Allocate(problem.m * problem.n * sizeof(uint16_t));
  if (!d.ok()) return d.status();
  return Operands{problem,       std::move(host_a), std::move(host_b),
                  *std::move(a), *std::move(b),     *std::move(d)};
}

GemmOperands Pointers(const Operands& a_from, const Operands& b_and_d) {
  GemmOperands operands;
  operands.a = a_from.a.address();
  operands.b = b_and_d.b.address();
  operands.d = b_and_d.d.address();
  return operands;
}

// "" when D of `b_and_d` (downloaded in the current context) is A of
// `a_from` times B of `b_and_d` by the float64 host reference, else how it
// is not.
std::string Mismatch(const Operands& a_from, const Operands& b_and_d) {
  const GemmProblem& problem = b_and_d.problem;
  absl::StatusOr<std::vector<uint16_t>> d = DownloadHalves(b_and_d.d);
  if (!d.ok()) return absl::StrCat("downloading D: ", d.status().message());
  const double error = RelativeErrorByNorm(
      *d, HostReferenceGemm(problem, a_from.host_a, b_and_d.host_b),
      problem.element);
  if (error < ErrorBound(problem.element)) return "";
  return absl::StrCat("relative error ", error, " over the bound ",
                      ErrorBound(problem.element));
}

// A Run's status, and once it ran, Mismatch's verdict ("" for correct).
struct Outcome {
  absl::Status run;
  std::string mismatch;
};

// `gemm` on A of `a_from` and B and D of `b_and_d`, D poisoned first (D and
// the stream must be the current context's), then checked.
Outcome RunAndCheck(const Gemm& gemm, const Operands& a_from,
                    const Operands& b_and_d, CUstream stream = nullptr) {
  const GemmProblem& problem = b_and_d.problem;
  if (absl::Status poisoned =
          Poison(b_and_d.d.address(), problem.m * problem.n, stream);
      !poisoned.ok()) {
    return {poisoned, ""};
  }
  const absl::Status run = gemm.Run(Pointers(a_from, b_and_d), stream);
  if (!run.ok()) return {run, ""};
  if (absl::Status synced = runtime::SynchronizeCurrentContext();
      !synced.ok()) {
    return {run, absl::StrCat("after the run: ", synced.message())};
  }
  return {run, Mismatch(a_from, b_and_d)};
}

Outcome RunAndCheck(const Gemm& gemm, const Operands& operands,
                    CUstream stream = nullptr) {
  return RunAndCheck(gemm, operands, operands, stream);
}

void ExpectCorrect(const Outcome& outcome) {
  EXPECT_TRUE(outcome.run.ok()) << outcome.run;
  EXPECT_EQ(outcome.mismatch, "");
}

// An operand of another context or device is refused by name, or, where
// the driver maps it into the kernel's context after all (peer access),
// computed with: never a fault.
void ExpectRefusedOrCorrect(const Outcome& outcome, absl::string_view refusal) {
  if (outcome.run.ok()) {
    EXPECT_EQ(outcome.mismatch, "") << "accepted, so it must compute D";
    return;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(outcome.run)) << outcome.run;
  EXPECT_TRUE(absl::StrContains(outcome.run.message(), refusal)) << outcome.run;
}

// One of the problem's configurations that does not split k: its kernels
// are all the GEMM's own, none of the helper kernels (see SecondContext).
gen::GemmConfig UnsplitConfig(const GemmProblem& problem,
                              const GemmTarget& target) {
  const gen::GemmConfig heuristic = HeuristicConfig(problem, target);
  if (heuristic.split_k == 1) return heuristic;
  for (const gen::GemmConfig& config : CandidateConfigs(problem, target)) {
    if (config.split_k == 1) return config;
  }
  ADD_FAILURE() << "every candidate splits k";
  return heuristic;
}

class GemmDevicesGpuTest : public testing_support::HopperTest {};

// Prepare for device 0 by name, called in device 0's primary context and
// in a second context: the Gemm is the primary context's, the caller's
// context is current again afterwards, and the result matches cuBLAS.
TEST_F(GemmDevicesGpuTest,
       ExplicitDeviceZeroMatchesCublasAndKeepsTheCallersContext) {
  const CUcontext primary = PrimaryContextOf(0);
  ASSERT_NE(SecondContext(), nullptr);
  for (const CUcontext caller : {primary, SecondContext()}) {
    SCOPED_TRACE(caller == primary ? "called in the primary context"
                                   : "called in a second context");
    absl::StatusOr<runtime::ScopedCurrentContext> calling =
        runtime::ScopedCurrentContext::Push(caller);
    ASSERT_TRUE(calling.ok()) << calling.status();
    absl::StatusOr<Gemm> gemm =
        Gemm::Prepare({256, 384, 512, ScalarType::kF16}, OnDevice(0));
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    EXPECT_EQ(gemm->device(), 0);
    EXPECT_EQ(gemm->context(), primary);
    EXPECT_EQ(Current(), caller);
  }
  for (const GemmProblem& problem :
       {GemmProblem{2048, 1536, 1024, ScalarType::kF16},
        GemmProblem{1000, 999, 136, ScalarType::kBF16}}) {
    absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, OnDevice(0));
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    absl::StatusOr<CublasComparison> compared = CompareWithCublas(*gemm);
    ASSERT_TRUE(compared.ok()) << compared.status();
    EXPECT_TRUE(compared->passed())
        << problem.m << "x" << problem.n << "x" << problem.k
        << ": relative error " << compared->relative_error;
  }
}

// A thread with no context current prepares for device 0 (and still has
// none after), runs (which makes the Gemm's context current there) on
// inputs made on the main thread, and matches cuBLAS.
TEST_F(GemmDevicesGpuTest, AThreadWithNoContextPreparesForADeviceAndRunsThere) {
  const GemmProblem problem{512, 256, 384, ScalarType::kBF16};
  auto allocate = [](int64_t elements) {
    absl::StatusOr<runtime::DeviceBuffer> buffer =
        runtime::DeviceBuffer::Allocate(elements * sizeof(uint16_t));
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    return *std::move(buffer);
  };
  runtime::DeviceBuffer a = allocate(problem.m * problem.k);
  runtime::DeviceBuffer b = allocate(problem.n * problem.k);
  runtime::DeviceBuffer c = allocate(problem.m * problem.n);
  runtime::DeviceBuffer reference = allocate(problem.m * problem.n);
  ASSERT_TRUE(FillRandom(a.address(), problem.m * problem.k, problem.element, 5,
                         nullptr)
                  .ok());
  ASSERT_TRUE(FillRandom(b.address(), problem.n * problem.k, problem.element, 6,
                         nullptr)
                  .ok());
  ASSERT_TRUE(CublasGemm(problem, a.address(), b.address(), reference.address(),
                         nullptr)
                  .ok());
  ASSERT_TRUE(Poison(c.address(), problem.m * problem.n, nullptr).ok());
  ASSERT_TRUE(runtime::SynchronizeCurrentContext().ok());

  CUcontext before = nullptr, after_prepare = nullptr, after_run = nullptr;
  CUcontext gemm_context = nullptr;
  absl::Status prepared, ran, synced;
  std::thread worker([&] {
    before = Current();
    absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, OnDevice(0));
    prepared = gemm.status();
    if (!gemm.ok()) return;
    after_prepare = Current();
    gemm_context = gemm->context();
    ran = gemm->Run(a.address(), b.address(), c.address(), nullptr);
    after_run = Current();
    synced = runtime::SynchronizeCurrentContext();
  });
  worker.join();
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_EQ(before, nullptr);
  EXPECT_EQ(after_prepare, nullptr)
      << "Prepare for a device restores the caller's (none)";
  ASSERT_TRUE(ran.ok()) << ran;
  EXPECT_EQ(after_run, gemm_context) << "Run makes the Gemm's context current";
  ASSERT_TRUE(synced.ok()) << synced;
  absl::StatusOr<std::vector<uint16_t>> result = DownloadHalves(c);
  absl::StatusOr<std::vector<uint16_t>> expected = DownloadHalves(reference);
  ASSERT_TRUE(result.ok() && expected.ok());
  EXPECT_LT(RelativeErrorByNorm(*result, *expected, problem.element),
            ErrorBound(problem.element));
}

TEST_F(GemmDevicesGpuTest,
       AnOrdinalThatNamesNoDeviceIsRefusedByTheOptionsName) {
  const absl::StatusOr<int> count = runtime::DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  const GemmProblem problem{256, 256, 256, ScalarType::kF16};
  for (const int ordinal : {*count, *count + 5, -1}) {
    const std::string expected =
        ordinal < 0
            ? absl::StrCat("GEMM: GemmOptions::device=", ordinal,
                           " is not a device ordinal (0 or more)")
            : absl::StrCat("GEMM: GemmOptions::device=", ordinal,
                           " is not below the driver's device count, ", *count);
    const absl::Status direct =
        Gemm::Prepare(problem, OnDevice(ordinal)).status();
    EXPECT_TRUE(absl::IsInvalidArgument(direct)) << direct;
    EXPECT_EQ(direct.message(), expected);
    EXPECT_EQ(Gemm::PrepareAsync(problem, OnDevice(ordinal)).get().status(),
              direct);
  }
}

// The same problem prepared in device 0's primary context and in a second
// context: compiled once, loaded into each, correct in each. Each context's
// Gemm is refused in the other context, on the other's stream, and with
// the other's memory unless the driver lets its kernel reach it; neither
// context is harmed.
TEST_F(GemmDevicesGpuTest,
       ASecondContextOnTheDeviceLoadsItsOwnKernelAndRunsThere) {
  const CUcontext primary = PrimaryContextOf(0);
  const CUcontext second = SecondContext();
  ASSERT_NE(second, nullptr);
  const GemmProblem problem{256, 384, 192, ScalarType::kF16};
  absl::StatusOr<Gemm> in_primary = Gemm::Prepare(problem);
  ASSERT_TRUE(in_primary.ok()) << in_primary.status();
  EXPECT_EQ(in_primary->context(), primary);
  absl::StatusOr<Operands> primary_operands = NewOperands(problem, 1);
  ASSERT_TRUE(primary_operands.ok()) << primary_operands.status();
  ExpectCorrect(RunAndCheck(*in_primary, *primary_operands));
  {
    absl::StatusOr<runtime::ScopedCurrentContext> entered =
        runtime::ScopedCurrentContext::Push(second);
    ASSERT_TRUE(entered.ok()) << entered.status();
    absl::StatusOr<Gemm> in_second = Gemm::Prepare(problem);
    ASSERT_TRUE(in_second.ok()) << in_second.status();
    EXPECT_EQ(in_second->context(), second);
    EXPECT_EQ(in_second->device(), 0);
    EXPECT_NE(in_second->compiled().source, compile::CacheSource::kCompiled)
        << "the primary context's Prepare compiled it already";
    EXPECT_EQ(in_second->compiled().cubin, in_primary->compiled().cubin);
    absl::StatusOr<Operands> second_operands = NewOperands(problem, 3);
    ASSERT_TRUE(second_operands.ok()) << second_operands.status();
    ExpectCorrect(RunAndCheck(*in_second, *second_operands));

    const Outcome crossed = RunAndCheck(*in_primary, *second_operands);
    EXPECT_TRUE(absl::IsFailedPrecondition(crossed.run)) << crossed.run;
    EXPECT_TRUE(absl::StrContains(
        crossed.run.message(),
        absl::StrCat("GEMM: a Gemm runs only in the context it was prepared "
                     "in, context ",
                     Hex(primary),
                     " (device 0), but this thread's current context is "
                     "context ",
                     Hex(second), " (device 0)")))
        << crossed.run;
    ExpectRefusedOrCorrect(
        RunAndCheck(*in_second, *primary_operands, *second_operands),
        absl::StrCat("is memory of context ", Hex(primary)));

    absl::StatusOr<runtime::Stream> second_stream = runtime::Stream::Create();
    ASSERT_TRUE(second_stream.ok()) << second_stream.status();
    {
      absl::StatusOr<runtime::ScopedCurrentContext> back =
          runtime::ScopedCurrentContext::Push(primary);
      ASSERT_TRUE(back.ok()) << back.status();
      const absl::Status wrong_stream = in_primary->Run(
          Pointers(*primary_operands, *primary_operands), second_stream->get());
      EXPECT_TRUE(absl::IsFailedPrecondition(wrong_stream)) << wrong_stream;
      EXPECT_TRUE(absl::StrContains(
          wrong_stream.message(),
          absl::StrCat("GEMM: the stream belongs to context ", Hex(second),
                       ", not to this Gemm's context ", Hex(primary))))
          << wrong_stream;
      ExpectRefusedOrCorrect(
          RunAndCheck(*in_primary, *second_operands, *primary_operands),
          absl::StrCat("is memory of context ", Hex(second)));
    }
    ExpectCorrect(RunAndCheck(*in_second, *second_operands));
  }
  ExpectCorrect(RunAndCheck(*in_primary, *primary_operands));
}

// Contexts created one after another, each destroyed after use: the driver
// often hands a new context the handle of the one destroyed before it, and
// loaded kernels are kept by context ID, so each context loads its own.
TEST_F(GemmDevicesGpuTest,
       ContextsCreatedAfterDestroyedOnesLoadTheirOwnKernels) {
  const GemmProblem problem{256, 256, 128, ScalarType::kF16};
  const absl::StatusOr<GemmTarget> target =
      runtime::KernelTargetOf(properties(), "GEMM");
  ASSERT_TRUE(target.ok()) << target.status();
  GemmOptions unsplit;
  unsplit.config = UnsplitConfig(problem, *target);
  std::set<CUcontext> handles;
  constexpr int kContexts = 3;
  for (int round = 0; round < kContexts; ++round) {
    SCOPED_TRACE(absl::StrCat("context ", round));
    absl::StatusOr<CUcontext> context = CreateContext(0);
    ASSERT_TRUE(context.ok()) << context.status();
    handles.insert(*context);
    {
      absl::StatusOr<runtime::ScopedCurrentContext> entered =
          runtime::ScopedCurrentContext::Push(*context);
      ASSERT_TRUE(entered.ok()) << entered.status();
      absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, unsplit);
      ASSERT_TRUE(gemm.ok()) << gemm.status();
      EXPECT_EQ(gemm->context(), *context);
      absl::StatusOr<Operands> operands = NewOperands(problem, 10 + round);
      ASSERT_TRUE(operands.ok()) << operands.status();
      ExpectCorrect(RunAndCheck(*gemm, *operands));
    }
    ASSERT_EQ(TheDriver().cuCtxDestroy(*context), CUDA_SUCCESS);
  }
  RecordProperty("context_handles_reused",
                 kContexts - static_cast<int>(handles.size()));
}

// Two threads at once, one in device 0's primary context and one in a
// second context, each preparing and running its own problems on its own
// stream, round after round.
TEST_F(GemmDevicesGpuTest,
       TwoThreadsInTwoContextsOfTheDevicePrepareAndRunAtOnce) {
  const CUcontext contexts[] = {PrimaryContextOf(0), SecondContext()};
  ASSERT_NE(contexts[1], nullptr);
  constexpr int kRounds = 3;
  const GemmProblem problems[2][kRounds] = {
      {{256, 256, 256, ScalarType::kF16},
       {257, 129, 72, ScalarType::kBF16},
       {128, 128, 2048, ScalarType::kF16}},
      {{384, 128, 136, ScalarType::kBF16},
       {200, 300, 24, ScalarType::kF16},
       {128, 192, 4096, ScalarType::kBF16}},
  };
  std::vector<std::string> failures[2];
  absl::Barrier start(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      start.Block();
      absl::StatusOr<runtime::ScopedCurrentContext> entered =
          runtime::ScopedCurrentContext::Push(contexts[t]);
      absl::StatusOr<runtime::Stream> stream =
          entered.ok() ? runtime::Stream::Create() : entered.status();
      if (!stream.ok()) {
        failures[t].push_back(std::string(stream.status().message()));
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const GemmProblem& problem = problems[t][round];
        const std::string name =
            absl::StrCat("round ", round, ", ", problem.m, "x", problem.n, "x",
                         problem.k, ": ");
        absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
        if (!gemm.ok()) {
          failures[t].push_back(absl::StrCat(name, gemm.status().message()));
          continue;
        }
        if (gemm->context() != contexts[t]) {
          failures[t].push_back(
              absl::StrCat(name, "prepared in ", Hex(gemm->context())));
        }
        absl::StatusOr<Operands> operands =
            NewOperands(problem, static_cast<uint32_t>(100 * t + round));
        if (!operands.ok()) {
          failures[t].push_back(
              absl::StrCat(name, operands.status().message()));
          continue;
        }
        const Outcome outcome = RunAndCheck(*gemm, *operands, stream->get());
        if (!outcome.run.ok() || !outcome.mismatch.empty()) {
          failures[t].push_back(
              absl::StrCat(name, outcome.run.message(), outcome.mismatch));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 2; ++t) {
    for (const std::string& failure : failures[t]) {
      ADD_FAILURE() << (t == 0 ? "primary context" : "second context") << ", "
                    << failure;
    }
  }
}

// PrepareAsync prepares in the context current where it was called (or
// for options.device): the background thread takes the caller's context.
TEST_F(GemmDevicesGpuTest, PrepareAsyncPreparesInTheCallersContext) {
  const CUcontext primary = PrimaryContextOf(0);
  const CUcontext second = SecondContext();
  ASSERT_NE(second, nullptr);
  const GemmProblem problem{384, 256, 512, ScalarType::kBF16};
  std::future<absl::StatusOr<Gemm>> from_primary = Gemm::PrepareAsync(problem);
  std::future<absl::StatusOr<Gemm>> for_device_0;
  {
    absl::StatusOr<runtime::ScopedCurrentContext> entered =
        runtime::ScopedCurrentContext::Push(second);
    ASSERT_TRUE(entered.ok()) << entered.status();
    std::future<absl::StatusOr<Gemm>> from_second = Gemm::PrepareAsync(problem);
    for_device_0 = Gemm::PrepareAsync(problem, OnDevice(0));
    absl::StatusOr<Gemm> in_second = from_second.get();
    ASSERT_TRUE(in_second.ok()) << in_second.status();
    EXPECT_EQ(in_second->context(), second);
    absl::StatusOr<Operands> operands = NewOperands(problem, 20);
    ASSERT_TRUE(operands.ok()) << operands.status();
    ExpectCorrect(RunAndCheck(*in_second, *operands));
  }
  absl::StatusOr<Operands> operands = NewOperands(problem, 21);
  ASSERT_TRUE(operands.ok()) << operands.status();
  for (std::future<absl::StatusOr<Gemm>>* future :
       {&from_primary, &for_device_0}) {
    absl::StatusOr<Gemm> gemm = future->get();
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    EXPECT_EQ(gemm->context(), primary);
    ExpectCorrect(RunAndCheck(*gemm, *operands));
  }
}

// Run's host time with its context, stream and pointer checks, beside the
// time of those driver queries alone (the figures go to the test's XML
// properties and stdout; gemm_bench --mode=launch measures Run alone).
TEST_F(GemmDevicesGpuTest,
       RunsContextAndPointerChecksAreASmallPartOfItsHostTime) {
  const GemmProblem problem{128, 128, 64, ScalarType::kF16};
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  absl::StatusOr<Operands> operands = NewOperands(problem, 30);
  ASSERT_TRUE(operands.ok()) << operands.status();
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  const GemmOperands pointers = Pointers(*operands, *operands);
  constexpr int kCalls = 2000;
  auto microseconds_per_call = [&](auto call) {
    for (int i = 0; i < 20; ++i) call();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    return elapsed.count() / kCalls;
  };
  bool all_ran = true;
  const double run_us = microseconds_per_call(
      [&] { all_ran = gemm->Run(pointers, stream->get()).ok() && all_ran; });
  ASSERT_TRUE(all_ran);
  ASSERT_TRUE(stream->Synchronize().ok());
  const runtime::Driver& driver = TheDriver();
  const double checks_us = microseconds_per_call([&] {
    CUcontext context = nullptr;
    driver.cuCtxGetCurrent(&context);
    driver.cuStreamGetCtx(stream->get(), &context);
    for (const CUdeviceptr address : {pointers.a, pointers.b, pointers.d}) {
      unsigned int memory_type = 0;
      CUdeviceptr device_address = 0;
      CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                          CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
      void* values[] = {&memory_type, &device_address};
      driver.cuPointerGetAttributes(2, attributes, values, address);
    }
  });
  RecordProperty("run_host_us", absl::StrFormat("%.3f", run_us));
  RecordProperty("checks_host_us", absl::StrFormat("%.3f", checks_us));
  std::cout << absl::StrFormat(
      "Run: %.2f us of host time a call, of which the "
      "context, stream and pointer checks %.2f us\n",
      run_us, checks_us);
  EXPECT_LT(checks_us, run_us / 2);
}

// ---- Two GPUs ----

// Skips unless device 1 exists and is a Hopper too.
class TwoDeviceGpuTest : public GemmDevicesGpuTest {
 protected:
  void SetUp() override {
    GemmDevicesGpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const absl::StatusOr<int> count = runtime::DeviceCount();
    ASSERT_TRUE(count.ok()) << count.status();
    if (*count < 2)
      GTEST_SKIP() << "needs two GPUs; the driver sees " << *count;
    const absl::StatusOr<runtime::DeviceProperties> second =
        runtime::GetDeviceProperties(1);
    ASSERT_TRUE(second.ok()) << second.status();
    if (second->cc_major != 9 || second->cc_minor != 0) {
      GTEST_SKIP() << "needs device 1 to be compute capability 9.0 too; it ("
                   << second->name << ") is " << second->cc_major << "."
                   << second->cc_minor;
    }
  }
};

// cuBLAS's C = A * B^T (as verification.h's CublasGemm computes it) through
// `cublas`, whose handle serves the device that was current when it was
// made: CublasGemm keeps one handle, for whichever device asked first.
absl::Status CublasOn(const CublasLibrary& cublas, const GemmProblem& problem,
                      CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
  const cudaDataType type =
      problem.element == ScalarType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  cublas.set_stream(cublas.handle, nullptr);
  const cublasStatus_t status = cublas.gemm_ex(
      cublas.handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(problem.n),
      static_cast<int>(problem.m), static_cast<int>(problem.k), &alpha,
      reinterpret_cast<const void*>(b), type, static_cast<int>(problem.k),
      reinterpret_cast<const void*>(a), type, static_cast<int>(problem.k),
      &beta, reinterpret_cast<void*>(c), type, static_cast<int>(problem.n),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("cublasGemmEx: status ", static_cast<int>(status)));
}

// "" when `gemm` matches `cublas` on fresh random inputs in the current
// context (the device both serve), else what failed.
std::string CheckAgainstCublas(const Gemm& gemm, const CublasLibrary& cublas,
                               uint32_t seed) {
  const GemmProblem& problem = gemm.problem();
  std::vector<runtime::DeviceBuffer> buffers;
  for (const int64_t elements :
       {problem.m * problem.k, problem.n * problem.k, problem.m * problem.n,
        problem.m * problem.n}) {
    absl::StatusOr<runtime::DeviceBuffer> buffer =
        runtime::DeviceBuffer::Allocate(elements * sizeof(uint16_t));
    if (!buffer.ok()) return std::string(buffer.status().message());
    buffers.push_back(*std::move(buffer));
  }
  const CUdeviceptr a = buffers[0].address(), b = buffers[1].address(),
                    c = buffers[2].address(), reference = buffers[3].address();
  for (const absl::Status& step :
       {FillRandom(a, problem.m * problem.k, problem.element, seed, nullptr),
        FillRandom(b, problem.n * problem.k, problem.element, seed + 1,
                   nullptr),
        CublasOn(cublas, problem, a, b, reference),
        Poison(c, problem.m * problem.n, nullptr), gemm.Run(a, b, c, nullptr),
        runtime::SynchronizeCurrentContext()}) {
    if (!step.ok()) return std::string(step.message());
  }
  absl::StatusOr<std::vector<uint16_t>> result = DownloadHalves(buffers[2]);
  absl::StatusOr<std::vector<uint16_t>> expected = DownloadHalves(buffers[3]);
  if (!result.ok() || !expected.ok()) return "download failed";
  const double error = RelativeErrorByNorm(*result, *expected, problem.element);
  if (error < ErrorBound(problem.element)) return "";
  return absl::StrCat("relative error ", error, " over the bound ",
                      ErrorBound(problem.element));
}

// A thread per device, each preparing its own problems for its device by
// ordinal and checking them against cuBLAS on that device, at once.
TEST_F(TwoDeviceGpuTest,
       TwoDevicesFromTwoThreadsEachMatchCublasOnItsOwnDevice) {
  constexpr int kRounds = 2;
  const GemmProblem problems[2][kRounds] = {
      {{2048, 1536, 1024, ScalarType::kF16},
       {1000, 999, 136, ScalarType::kBF16}},
      {{1536, 2560, 768, ScalarType::kBF16}, {4096, 64, 512, ScalarType::kF16}},
  };
  std::vector<std::string> failures[2];
  absl::Barrier start(2);
  std::vector<std::thread> threads;
  for (int device = 0; device < 2; ++device) {
    threads.emplace_back([&, device] {
      start.Block();
      absl::StatusOr<const runtime::PrimaryContext*> primary =
          runtime::RetainedPrimaryContext(device);
      absl::StatusOr<runtime::ScopedCurrentContext> entered =
          primary.ok() ? runtime::ScopedCurrentContext::Push((*primary)->get())
                       : primary.status();
      absl::StatusOr<CublasLibrary> cublas =
          entered.ok() ? LoadCublas(kCublasLibrary) : entered.status();
      if (!cublas.ok()) {
        failures[device].push_back(std::string(cublas.status().message()));
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        const GemmProblem& problem = problems[device][round];
        const std::string name =
            absl::StrCat(problem.m, "x", problem.n, "x", problem.k, ": ");
        absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, OnDevice(device));
        if (!gemm.ok()) {
          failures[device].push_back(
              absl::StrCat(name, gemm.status().message()));
          continue;
        }
        if (gemm->device() != device || gemm->context() != (*primary)->get()) {
          failures[device].push_back(absl::StrCat(name, "prepared for device ",
                                                  gemm->device(), " in ",
                                                  Hex(gemm->context())));
        }
        const std::string failed = CheckAgainstCublas(
            *gemm, *cublas, static_cast<uint32_t>(50 * device + round));
        if (!failed.empty())
          failures[device].push_back(absl::StrCat(name, failed));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int device = 0; device < 2; ++device) {
    for (const std::string& failure : failures[device]) {
      ADD_FAILURE() << "device " << device << ", " << failure;
    }
  }
}

// A Gemm per device prepared on the main thread (device 0's context
// current), each run from a thread of its own with no context current.
// On the main thread device 1's Gemm is refused, and device 0's with
// device 1's memory unless peer access lets its kernel reach it.
TEST_F(TwoDeviceGpuTest, AGemmPerDevicePreparedOnOneThreadRunsFromAnother) {
  const GemmProblem problem{512, 768, 256, ScalarType::kF16};
  const CUcontext contexts[2] = {PrimaryContextOf(0), PrimaryContextOf(1)};
  std::optional<Gemm> gemms[2];
  std::optional<Operands> operands[2];
  for (int device = 0; device < 2; ++device) {
    absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, OnDevice(device));
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    EXPECT_EQ(gemm->device(), device);
    EXPECT_EQ(gemm->context(), contexts[device]);
    gemms[device] = *std::move(gemm);
    absl::StatusOr<runtime::ScopedCurrentContext> entered =
        runtime::ScopedCurrentContext::Push(contexts[device]);
    ASSERT_TRUE(entered.ok()) << entered.status();
    absl::StatusOr<Operands> made =
        NewOperands(problem, static_cast<uint32_t>(60 + device));
    ASSERT_TRUE(made.ok()) << made.status();
    operands[device] = *std::move(made);
    ASSERT_TRUE(
        Poison(operands[device]->d.address(), problem.m * problem.n, nullptr)
            .ok());
    ASSERT_TRUE(runtime::SynchronizeCurrentContext().ok());
  }
  EXPECT_EQ(Current(), contexts[0]);

  const absl::Status crossed =
      gemms[1]->Run(Pointers(*operands[1], *operands[1]), nullptr);
  EXPECT_TRUE(absl::IsFailedPrecondition(crossed)) << crossed;
  EXPECT_TRUE(absl::StrContains(
      crossed.message(),
      absl::StrCat("prepared in, context ", Hex(contexts[1]),
                   " (device 1), but this thread's current context "
                   "is context ",
                   Hex(contexts[0]), " (device 0)")))
      << crossed;
  ExpectRefusedOrCorrect(RunAndCheck(*gemms[0], *operands[1], *operands[0]),
                         "is memory of device 1");
  ASSERT_TRUE(
      Poison(operands[0]->d.address(), problem.m * problem.n, nullptr).ok());
  ASSERT_TRUE(runtime::SynchronizeCurrentContext().ok());

  absl::Status ran[2], synced[2];
  CUcontext current_after[2] = {nullptr, nullptr};
  std::vector<std::thread> threads;
  for (int device = 0; device < 2; ++device) {
    threads.emplace_back([&, device] {
      ran[device] = gemms[device]->Run(
          Pointers(*operands[device], *operands[device]), nullptr);
      current_after[device] = Current();
      synced[device] = runtime::SynchronizeCurrentContext();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int device = 0; device < 2; ++device) {
    SCOPED_TRACE(absl::StrCat("device ", device));
    EXPECT_TRUE(ran[device].ok()) << ran[device];
    EXPECT_EQ(current_after[device], contexts[device]);
    EXPECT_TRUE(synced[device].ok()) << synced[device];
    absl::StatusOr<runtime::ScopedCurrentContext> entered =
        runtime::ScopedCurrentContext::Push(contexts[device]);
    ASSERT_TRUE(entered.ok()) << entered.status();
    EXPECT_EQ(Mismatch(*operands[device], *operands[device]), "");
    operands[device].reset();  // freed in its own context
  }
}

}  // namespace
}  // namespace ptxgen::gemm
