// gpu_test's kernels assemble for sm_90a (NVRTC and ptxas), on any machine.

#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "tests/runtime/test_kernels.h"

namespace ptxgen::runtime::testing_kernels {
namespace {

void ExpectAssembles(absl::string_view name, absl::string_view source) {
  const absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda(name, source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(compiled->cubin.empty()) << name;
  EXPECT_NE(compiled->ptx.find(".target sm_90a"), std::string::npos) << name;
}

TEST(GpuTestKernels, Affine) { ExpectAssembles("affine", AffineKernel(3, 7)); }
TEST(GpuTestKernels, ClusterRank) {
  ExpectAssembles("cluster_rank", kClusterKernel);
}
TEST(GpuTestKernels, SharedSum) {
  ExpectAssembles("shared_sum", kSharedKernel);
}
TEST(GpuTestKernels, TmaBox) {
  const absl::StatusOr<std::string> source = TmaKernel();
  ASSERT_TRUE(source.ok()) << source.status();
  ExpectAssembles("tma_box", *source);
}

TEST(GpuTestKernels, AffineAlsoAssemblesForSm80) {
  compile::CompileOptions options;
  options.arch = "sm_80";
  const absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda("affine", AffineKernel(1, 0), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_FALSE(compiled->cubin.empty());
}

TEST(GpuTestKernels, AffinePtxEndsItsKernelWithRet) {
  // JitErrorsCarryTheDriverLog breaks the PTX by replacing "ret;".
  const absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda("affine", AffineKernel(1, 0), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_NE(compiled->ptx.find("ret;"), std::string::npos) << compiled->ptx;
}

}  // namespace
}  // namespace ptxgen::runtime::testing_kernels
