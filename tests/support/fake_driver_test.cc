// The stand-in driver (fake_libcuda.c) as ptxgen sees it, and what it makes
// testable without a GPU: a Run goes through every host check to a launch
// of the planned grid, logged; what Run refuses is refused before anything
// is launched. It reports an H100 (compute capability 9.0, 132 SMs), so the
// GPU suites' fixtures run against it when tools/gpu_bundle.sh compiles
// their kernels. A binary of its own: the driver's path is read once.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/kernels/kernel_bundle.h"

namespace ptxgen {
namespace {

// Under `bazel test` the working directory is the runfiles root.
constexpr char kFakeDriver[] = "tests/support/libfakecuda.so";

// The launch log of this process, fresh.
std::string LaunchLog() {
  static const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/launches.log");
  return path;
}

// Before any test: the driver and the log named, kernels read from the
// bundle where it has them.
const bool kEnvironment = [] {
  char* driver = realpath(kFakeDriver, nullptr);
  if (driver == nullptr) return false;
  setenv(runtime::kDriverLibraryEnv, driver, 1);
  std::free(driver);
  setenv("PTXGEN_FAKE_CUDA_LOG", LaunchLog().c_str(), 1);
  setenv("PTXGEN_CACHE_PATH", testing_support::KernelBundle().c_str(), 1);
  return true;
}();

std::string ReadLog() {
  std::ifstream in(LaunchLog());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class FakeDriverTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kEnvironment) << "no " << kFakeDriver << " among the runfiles";
    std::remove(LaunchLog().c_str());
  }
};

TEST_F(FakeDriverTest, IsAHopperDeviceOf132Sms) {
  const absl::StatusOr<runtime::DeviceProperties> device =
      runtime::GetDeviceProperties(0);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->cc_major, 9);
  EXPECT_EQ(device->cc_minor, 0);
  EXPECT_EQ(device->sm_count, 132);
  EXPECT_TRUE(absl::StrContains(device->name, "fake driver")) << device->name;
}

// A buffer of `bytes` in the stand-in's "device" memory.
runtime::DeviceBuffer Buffer(size_t bytes) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(bytes);
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return *std::move(buffer);
}

TEST_F(FakeDriverTest, AGemmRunLaunchesItsPlannedGridAndRefusesDOnA) {
  const gemm::GemmProblem problem{4096, 4096, 4096, ptx::ScalarType::kF16};
  absl::StatusOr<gemm::Gemm> gemm = gemm::Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  const size_t bytes = size_t{4096} * 4096 * 2;
  runtime::DeviceBuffer a = Buffer(bytes), b = Buffer(bytes), d = Buffer(bytes);
  ASSERT_TRUE(gemm->Run(a.address(), b.address(), d.address(), nullptr).ok());
  const std::string log = ReadLog();
  EXPECT_TRUE(absl::StartsWith(
      log, absl::StrCat("launch ", gemm->generated().kernel_name, " grid=")))
      << log;

  std::remove(LaunchLog().c_str());
  const absl::Status refused =
      gemm->Run(a.address(), b.address(), a.address(), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "shares memory with A"))
      << refused;
  EXPECT_EQ(ReadLog(), "") << "a refused run launched";
}

// O as many heads as K: given K's address, O spans K's buffer and no other
// (with more query heads it would reach past K into whatever the allocator
// put there, Q under ASan's allocator, and be refused for that).
TEST_F(FakeDriverTest, AnAttentionRunLaunchesAndRefusesOOnK) {
  attention::AttentionProblem problem;
  problem.batch = 3;
  problem.heads_q = 2;
  problem.heads_kv = 2;
  problem.seq_q = problem.seq_k = 256;
  problem.head_dim = 64;
  problem.variable_lengths = true;
  problem.total_q = problem.total_k = 600;
  absl::StatusOr<attention::Attention> attention =
      attention::Attention::Prepare(problem);
  ASSERT_TRUE(attention.ok()) << attention.status();
  runtime::DeviceBuffer q = Buffer(600 * 2 * 64 * 2),
                        k = Buffer(600 * 2 * 64 * 2),
                        v = Buffer(600 * 2 * 64 * 2),
                        o = Buffer(600 * 2 * 64 * 2), cu = Buffer(16);
  attention::AttentionOperands operands;
  operands.q = q.address();
  operands.k = k.address();
  operands.v = v.address();
  operands.o = o.address();
  operands.cu_seqlens_q = operands.cu_seqlens_k = cu.address();
  ASSERT_TRUE(attention->Run(operands, nullptr).ok());
  EXPECT_TRUE(absl::StartsWith(
      ReadLog(), absl::StrCat("launch ", attention->generated().kernel_name)))
      << ReadLog();

  std::remove(LaunchLog().c_str());
  operands.o = operands.k;
  const absl::Status refused = attention->Run(operands, nullptr);
  EXPECT_TRUE(absl::StrContains(refused.message(), "O (at 0x")) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "shares memory with K"))
      << refused;
  EXPECT_EQ(ReadLog(), "") << "a refused run launched";
}

}  // namespace
}  // namespace ptxgen
