// Every instruction form the PTX layer can emit, assembled by NVRTC and
// ptxas for sm_90a inside generated probe kernels. A form ptxas rejects
// fails this test: the failure names the form.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/probe_kernel.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/global_flag.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/named_barrier.h"
#include "ptxgen/ptx/reduction.h"
#include "ptxgen/ptx/special_function.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen {
namespace {

using ptx::ScalarType;
using ptx::Statement;

// A group of statements that must sit in one kernel (e.g. setmaxnreg.dec
// needs a larger count before it); most forms are groups of one.
using Form = std::vector<Statement>;

void Add(std::vector<Form>& forms, absl::StatusOr<Statement> statement) {
  ASSERT_TRUE(statement.ok()) << statement.status();
  forms.push_back({*std::move(statement)});
}

struct InputFamily {
  ScalarType a, b;
  std::vector<ScalarType> accumulators;
};

// Immediate settings cycle with N, so every value appears for every family.
void SetImmediates(ptx::WgmmaMma& mma, int variant) {
  if (!ptx::WgmmaHasScaleImmediates(mma.a_type)) {
    mma.satfinite = variant % 2 == 1;
    return;
  }
  mma.scale_a = variant % 2 ? -1 : 1;
  mma.scale_b = (variant / 2) % 2 ? -1 : 1;
  if (!ptx::WgmmaSupportsTranspose(mma.a_type)) return;
  mma.transpose_b = (variant / 4) % 2 == 1;
  mma.transpose_a = mma.a_source == ptx::WgmmaASource::kSharedMemory &&
                    (variant / 8) % 2 == 1;
}

std::vector<Form> WgmmaForms() {
  const ScalarType kF16 = ScalarType::kF16, kF32 = ScalarType::kF32,
                   kS32 = ScalarType::kS32;
  std::vector<InputFamily> families = {
      {kF16, kF16, {kF16, kF32}},
      {ScalarType::kBF16, ScalarType::kBF16, {kF32}},
      {ScalarType::kTF32, ScalarType::kTF32, {kF32}},
  };
  for (ScalarType a : {ScalarType::kE4M3, ScalarType::kE5M2}) {
    for (ScalarType b : {ScalarType::kE4M3, ScalarType::kE5M2}) {
      families.push_back({a, b, {kF16, kF32}});
    }
  }
  for (ScalarType a : {ScalarType::kS8, ScalarType::kU8}) {
    for (ScalarType b : {ScalarType::kS8, ScalarType::kU8}) {
      families.push_back({a, b, {kS32}});
    }
  }
  std::vector<Form> forms;
  for (const InputFamily& family : families) {
    for (ScalarType d : family.accumulators) {
      for (auto source :
           {ptx::WgmmaASource::kSharedMemory, ptx::WgmmaASource::kRegisters}) {
        const std::vector<int> legal = ptx::LegalWgmmaN(family.a);
        // Integer forms come with and without .satfinite at every N.
        const int variants = ptx::WgmmaHasScaleImmediates(family.a) ? 1 : 2;
        for (size_t i = 0; i < legal.size(); ++i) {
          for (int v = 0; v < variants; ++v) {
            ptx::WgmmaMma mma;
            mma.n = legal[i];
            mma.a_type = family.a;
            mma.b_type = family.b;
            mma.d_type = d;
            mma.a_source = source;
            SetImmediates(mma, static_cast<int>(i) + v);
            Add(forms, ptx::WgmmaMmaAsync(mma));
          }
        }
      }
    }
  }
  return forms;
}

std::vector<Form> WgmmaSupportForms() {
  std::vector<Form> forms = {{ptx::WgmmaFence()}, {ptx::WgmmaCommitGroup()}};
  for (int pending = 0; pending <= ptx::kMaxWgmmaPendingGroups; ++pending) {
    Add(forms, ptx::WgmmaWaitGroup(pending));
  }
  for (ScalarType d : {ScalarType::kF16, ScalarType::kF32, ScalarType::kS32}) {
    for (int n = ptx::kMinWgmmaN; n <= ptx::kMaxWgmmaN; n += ptx::kWgmmaNStep) {
      Add(forms, ptx::WgmmaAccumulatorPin(d, n));
    }
  }
  return forms;
}

std::vector<Form> TmaForms() {
  std::vector<Form> forms;
  for (int rank = ptx::kMinTensorRank; rank <= ptx::kMaxTensorRank; ++rank) {
    for (bool hint : {false, true}) {
      for (bool multicast : {false, true}) {
        Add(forms, ptx::CpAsyncBulkTensorLoad({rank, multicast, hint}));
      }
      Add(forms, ptx::CpAsyncBulkTensorStore({rank, hint}));
      Add(forms, ptx::CpAsyncBulkPrefetchTensor({rank, hint}));
    }
  }
  forms.push_back({ptx::CpAsyncBulkCommitGroup()});
  for (int pending = 0; pending <= ptx::kMaxBulkPendingGroups; ++pending) {
    for (bool read : {false, true}) {
      Add(forms, ptx::CpAsyncBulkWaitGroup(pending, read));
    }
  }
  forms.push_back({ptx::FenceProxyAsyncSharedCta()});
  forms.push_back({ptx::PrefetchTensorMap()});
  return forms;
}

std::vector<Form> BarrierForms() {
  return {
      {ptx::MbarrierInit()},
      {ptx::MbarrierArrive(ptx::MbarrierScope::kCta)},
      {ptx::MbarrierArrive(ptx::MbarrierScope::kCluster)},
      {ptx::MbarrierArrive(ptx::MbarrierScope::kClusterRelaxed)},
      {ptx::MbarrierArriveExpectTx()},
      // Two wait loops in one kernel: their labels are scoped.
      {ptx::MbarrierTryWaitParity(), ptx::MbarrierTryWaitParity()},
      {ptx::MbarrierTryWaitParity(ptx::MbarrierWaitScope::kCluster)},
      {ptx::MbarrierInval()},
      {ptx::FenceMbarrierInit()},
      {ptx::NamedBarrierSync()},
      {ptx::NamedBarrierArrive()},
      {ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelease)},
      {ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelaxed)},
      {ptx::BarrierClusterWait()},
      {ptx::StoreReleaseGpu()},
      {ptx::LoadAcquireGpu()},
      {ptx::RedGlobalMaxU32()},
  };
}

std::vector<Form> WarpForms() {
  std::vector<Form> forms = {{ptx::ElectSync()},
                             {ptx::ReduxSyncMaxU32()},
                             {ptx::ClusterCtaRank()},
                             {ptx::MapaSharedCluster()},
                             {ptx::LoadSharedClusterF32x4()},
                             {ptx::LoadSharedB32x4()}};
  for (int count = ptx::kMinMaxNReg; count <= ptx::kMaxMaxNReg; count += 8) {
    Add(forms, ptx::SetMaxNReg(ptx::RegisterAdjustment::kIncrease, count));
    // ptxas refuses a decrease above the largest count the kernel reaches.
    absl::StatusOr<Statement> raise =
        ptx::SetMaxNReg(ptx::RegisterAdjustment::kIncrease, ptx::kMaxMaxNReg);
    absl::StatusOr<Statement> lower =
        ptx::SetMaxNReg(ptx::RegisterAdjustment::kDecrease, count);
    EXPECT_TRUE(raise.ok() && lower.ok());
    if (raise.ok() && lower.ok()) forms.push_back({*raise, *lower});
  }
  for (int matrices : {1, 2, 4}) {
    for (bool transpose : {false, true}) {
      Add(forms, ptx::StMatrixSharedB16({matrices, transpose}));
    }
  }
  for (ScalarType to : {ScalarType::kF16, ScalarType::kBF16, ScalarType::kE4M3,
                        ScalarType::kE5M2, ScalarType::kS8}) {
    Add(forms, ptx::CvtRoundFromF32(to));
    Add(forms, ptx::CvtPackFromF32x2(to));
  }
  for (ScalarType from : {ScalarType::kF16, ScalarType::kBF16}) {
    Add(forms, ptx::CvtWidenToF32(from));
  }
  forms.push_back({ptx::TanhApproxF32()});
  forms.push_back({ptx::Ex2ApproxFtzF32()});
  forms.push_back({ptx::Lg2ApproxFtzF32()});
  return forms;
}

struct Batch {
  std::string name;
  std::vector<Form> forms;
  absl::Status status;
};

absl::StatusOr<std::string> BatchSource(const std::string& name,
                                        const std::vector<Form>& forms) {
  std::string source;
  for (size_t i = 0; i < forms.size(); ++i) {
    absl::StatusOr<std::string> kernel =
        gen::ProbeKernelSource(absl::StrCat(name, "_", i), forms[i]);
    if (!kernel.ok()) return kernel.status();
    absl::StrAppend(&source, *kernel, "\n");
  }
  return source;
}

absl::Status Assemble(const std::string& name, const std::vector<Form>& forms) {
  absl::StatusOr<std::string> source = BatchSource(name, forms);
  if (!source.ok()) return source.status();
  return compile::CompileCuda(name, *source, compile::CompileOptions{})
      .status();
}

// Names every form of a failed batch that fails on its own.
std::string Culprits(const Batch& batch) {
  std::string culprits;
  for (size_t i = 0; i < batch.forms.size(); ++i) {
    absl::Status alone =
        Assemble(absl::StrCat(batch.name, "_alone"), {batch.forms[i]});
    if (!alone.ok()) {
      absl::StrAppend(&culprits,
                      "\n  rejected: ", batch.forms[i].back().description(),
                      "\n", alone.message().substr(0, 2000));
    }
  }
  return culprits;
}

std::vector<Batch> Split(const std::string& name,
                         const std::vector<Form>& forms, size_t per_batch) {
  std::vector<Batch> batches;
  for (size_t start = 0; start < forms.size(); start += per_batch) {
    Batch batch;
    batch.name = absl::StrCat(name, start / per_batch);
    batch.forms.assign(
        forms.begin() + start,
        forms.begin() + std::min(forms.size(), start + per_batch));
    batches.push_back(std::move(batch));
  }
  return batches;
}

TEST(AssemblyTest, EveryEmittedFormAssemblesForSm90a) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Batch> batches = Split("wgmma", WgmmaForms(), 96);
  const size_t wgmma_forms = WgmmaForms().size();
  std::vector<Form> others;
  for (auto* family :
       {&WgmmaSupportForms, &TmaForms, &BarrierForms, &WarpForms}) {
    for (Form& form : (*family)()) others.push_back(std::move(form));
  }
  for (Batch& batch : Split("support", others, 128))
    batches.push_back(std::move(batch));

  // NVRTC is thread-safe per program: compile batches on every core.
  const unsigned workers = std::max(2u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (size_t i = w; i < batches.size(); i += workers) {
        batches[i].status = Assemble(batches[i].name, batches[i].forms);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  size_t statements = 0;
  for (const Batch& batch : batches) {
    for (const Form& form : batch.forms) statements += form.size();
    EXPECT_TRUE(batch.status.ok()) << batch.name << Culprits(batch);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "assembled %zu wgmma.mma_async forms and %zu other forms "
      "(%zu statements) in %zu NVRTC programs, %.1f s\n",
      wgmma_forms, others.size(), statements, batches.size(), seconds);
  EXPECT_EQ(wgmma_forms, 1056u);
}

}  // namespace
}  // namespace ptxgen
