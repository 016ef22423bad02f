// Every shared-memory layout the descriptor code derives, checked on the
// GPU: tiles are written element by element where TileElementOffset puts
// them, a wgmma reads them through DescribeTile's descriptor (advanced by
// TileOperandOffset along K), and the product, stored by the library's
// accumulator fragment layout (AccumulatorFragment), must match the
// host's.
// Public notes warn that prose about LBO/SBO is unreliable for MN-major and
// unswizzled layouts; this test is the authority.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/wgmma.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::ptx {
namespace {

constexpr int kM = 64;
constexpr int kN = 64;
constexpr int kK = 64;
constexpr int kTileBytes = kM * kK * 2;

struct Layout {
  MajorOrder major;
  Swizzle swizzle;
};

std::string Name(const Layout& layout) {
  return absl::StrCat(layout.major == MajorOrder::kK ? "K" : "MN", "major_",
                      SwizzleName(layout.swizzle));
}

// D stored by the library's accumulator fragment layout, which is
// separable: the thread's coordinate plus register i's.
absl::StatusOr<std::string> AccumulatorStores(
    const AccumulatorFragment& fragment) {
  std::string stores;
  for (int i = 0; i < fragment.registers(); ++i) {
    absl::StatusOr<FragmentCoordinate> offset = fragment.Coordinate(0, i);
    if (!offset.ok()) return offset.status();
    absl::StrAppend(&stores, "  d[(row + ", offset->row, ") * ", kN,
                    " + column + ", offset->column, "] = acc[", i, "];\n");
  }
  return stores;
}

// One warpgroup: scatter A and B into shared memory by the offset tables,
// run the K loop of wgmma, store D by the accumulator fragment layout.
absl::StatusOr<std::string> ProbeSource(const WgmmaMma& mma) {
  absl::StatusOr<Statement> wgmma = WgmmaMmaAsync(mma);
  absl::StatusOr<Statement> wait = WgmmaWaitGroup(0);
  absl::StatusOr<Statement> pin = WgmmaAccumulatorPin(ScalarType::kF32, kN);
  if (!wgmma.ok()) return wgmma.status();
  absl::StatusOr<AccumulatorFragment> fragment = AccumulatorFragment::Of(mma);
  if (!fragment.ok()) return fragment.status();
  absl::StatusOr<std::string> stores = AccumulatorStores(*fragment);
  if (!stores.ok()) return stores.status();
  const std::pair<const char*, Statement> statements[] = {
      {"mma", *wgmma},
      {"fence", WgmmaFence()},
      {"commit", WgmmaCommitGroup()},
      {"wait", *wait},
      {"pin", *pin},
      {"proxy_fence", FenceProxyAsyncSharedCta()}};
  std::string functions = fragment->DeviceFunctions();
  for (const auto& [name, statement] : statements) {
    absl::StatusOr<std::string> function = gen::DeviceFunction(name, statement);
    if (!function.ok()) return function.status();
    absl::StrAppend(&functions, *function);
  }
  return absl::StrCat(functions, R"(
extern "C" __global__ void __launch_bounds__(128, 1) layout_probe(
    const unsigned short* a, const unsigned short* b,
    const unsigned* a_offsets, const unsigned* b_offsets, float* d,
    unsigned long long a_fields, unsigned long long b_fields,
    const unsigned* a_steps, const unsigned* b_steps, int steps) {
  __shared__ __align__(1024) unsigned char tiles[)",
                      2 * kTileBytes, R"(];
  for (int i = threadIdx.x; i < )",
                      kM * kK, R"(; i += 128) {
    *(unsigned short*)(tiles + a_offsets[i]) = a[i];
    *(unsigned short*)(tiles + )",
                      kTileBytes, R"( + b_offsets[i]) = b[i];
  }
  proxy_fence();
  __syncthreads();
  const unsigned base = (unsigned)__cvta_generic_to_shared(tiles);
  float acc[)",
                      kN / 2, R"(];
  for (int i = 0; i < )",
                      kN / 2, R"(; ++i) acc[i] = 0.0f;
  pin(acc);
  fence();
  for (int s = 0; s < steps; ++s) {
    mma(acc, a_fields | )",
                      DescriptorAddressFieldExpression("base + a_steps[s]"),
                      R"(,
        b_fields | )",
                      DescriptorAddressFieldExpression(
                          absl::StrCat("base + ", kTileBytes, " + b_steps[s]")),
                      R"(, 1u);
  }
  commit();
  wait();
  pin(acc);
  const int t = threadIdx.x;
  const int row = accumulator_row(t, 0);
  const int column = accumulator_column(t, 0);
)",
                      *stores, R"(}
)");
}

WgmmaMma ProbeMma(const Layout& layout) {
  WgmmaMma mma;
  mma.n = kN;
  mma.transpose_a = mma.transpose_b = layout.major == MajorOrder::kMN;
  return mma;
}

const Layout kLayouts[] = {
    {MajorOrder::kK, Swizzle::kNone},  {MajorOrder::kK, Swizzle::k32B},
    {MajorOrder::kK, Swizzle::k64B},   {MajorOrder::kK, Swizzle::k128B},
    {MajorOrder::kMN, Swizzle::kNone}, {MajorOrder::kMN, Swizzle::k32B},
    {MajorOrder::kMN, Swizzle::k64B},  {MajorOrder::kMN, Swizzle::k128B},
};

// Without a GPU the probes are still compiled, so CI proves their text.
TEST(DescriptorProbeTest, ProbesCompileForSm90a) {
  for (const Layout& layout : kLayouts) {
    absl::StatusOr<std::string> source = ProbeSource(ProbeMma(layout));
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_TRUE(compile::CompileCuda("layout_probe", *source, {}).ok())
        << Name(layout);
  }
}

class DescriptorGpuTest : public testing_support::HopperTest,
                          public testing::WithParamInterface<Layout> {};

template <typename T>
runtime::DeviceBuffer Upload(const std::vector<T>& host) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(host.size() * sizeof(T));
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(buffer->CopyFromHost(host.data(), host.size() * sizeof(T)).ok());
  return *std::move(buffer);
}

TEST_P(DescriptorGpuTest, WgmmaReadsTheDescribedLayout) {
  const Layout layout = GetParam();
  const SharedTile a_tile{ScalarType::kF16, kM, kK, layout.major,
                          layout.swizzle};
  const SharedTile b_tile{ScalarType::kF16, kN, kK, layout.major,
                          layout.swizzle};
  absl::StatusOr<TileLayout> a_layout = DescribeTile(a_tile);
  absl::StatusOr<TileLayout> b_layout = DescribeTile(b_tile);
  ASSERT_TRUE(a_layout.ok()) << a_layout.status();
  ASSERT_TRUE(b_layout.ok()) << b_layout.status();

  // A is [m][k] and B is [n][k] in global memory, whatever the layout.
  std::vector<uint16_t> a(kM * kK), b(kN * kK);
  std::vector<uint32_t> a_offsets(a.size()), b_offsets(b.size());
  for (int row = 0; row < kM; ++row) {
    for (int k = 0; k < kK; ++k) {
      const int i = row * kK + k;
      a[i] = gemm::FloatToHalfBits(std::sin(0.37f * i), ScalarType::kF16);
      b[i] =
          gemm::FloatToHalfBits(std::cos(0.11f * i + 0.5f), ScalarType::kF16);
      a_offsets[i] = *TileElementOffset(a_tile, row, k);
      b_offsets[i] = *TileElementOffset(b_tile, row, k);
    }
  }
  std::vector<uint32_t> a_steps, b_steps;
  for (int k = 0; k < kK; k += 16) {
    a_steps.push_back(*TileOperandOffset(a_tile, 0, k));
    b_steps.push_back(*TileOperandOffset(b_tile, 0, k));
  }

  absl::StatusOr<std::string> source = ProbeSource(ProbeMma(layout));
  ASSERT_TRUE(source.ok()) << source.status();
  // Through the kernel cache: a GPU bundle holds it precompiled.
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      compile::KernelCache::Default().GetOrCompile("layout_probe", *source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<runtime::Module> module =
      runtime::Module::LoadCubin(**compiled);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<runtime::Function> function =
      module->GetFunction("layout_probe");
  ASSERT_TRUE(function.ok()) << function.status();

  runtime::DeviceBuffer a_device = Upload(a), b_device = Upload(b);
  runtime::DeviceBuffer a_table = Upload(a_offsets),
                        b_table = Upload(b_offsets);
  runtime::DeviceBuffer a_step_table = Upload(a_steps),
                        b_step_table = Upload(b_steps);
  runtime::DeviceBuffer d = Upload(std::vector<float>(kM * kN, NAN));
  CUdeviceptr pointers[] = {a_device.address(), b_device.address(),
                            a_table.address(), b_table.address(), d.address()};
  unsigned long long a_fields = *EncodeMatrixDescriptor(a_layout->descriptor);
  unsigned long long b_fields = *EncodeMatrixDescriptor(b_layout->descriptor);
  CUdeviceptr steps_a = a_step_table.address(),
              steps_b = b_step_table.address();
  int steps = static_cast<int>(a_steps.size());
  void* args[] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3],
                  &pointers[4], &a_fields,    &b_fields,    &steps_a,
                  &steps_b,     &steps};
  runtime::LaunchConfig launch;
  launch.block = {128, 1, 1};
  ASSERT_TRUE(function->Launch(launch, args).ok());
  std::vector<float> result(kM * kN);
  ASSERT_TRUE(d.CopyToHost(result.data(), result.size() * sizeof(float)).ok());

  double difference = 0, norm = 0;
  for (int row = 0; row < kM; ++row) {
    for (int column = 0; column < kN; ++column) {
      double sum = 0;
      for (int k = 0; k < kK; ++k) {
        sum +=
            double{gemm::HalfBitsToFloat(a[row * kK + k], ScalarType::kF16)} *
            gemm::HalfBitsToFloat(b[column * kK + k], ScalarType::kF16);
      }
      const double value = result[row * kN + column];
      difference += (value - sum) * (value - sum);
      norm += sum * sum;
    }
  }
  EXPECT_LT(std::sqrt(difference / norm), 1e-5) << Name(layout);
}

INSTANTIATE_TEST_SUITE_P(Layouts, DescriptorGpuTest,
                         testing::ValuesIn(kLayouts),
                         [](const testing::TestParamInfo<Layout>& info) {
                           return Name(info.param);
                         });

}  // namespace
}  // namespace ptxgen::ptx
