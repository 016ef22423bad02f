// The loaded-kernel registry every family shares (runtime/kernel_registry.h),
// against the stand-in driver (tests/support/fake_libcuda.c): a kernel is
// loaded once per context, family and identity; a failed load is not kept.
// A binary of its own: the driver's path is read once.
#include "ptxgen/runtime/kernel_registry.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {
namespace {

// Under `bazel test` the working directory is the runfiles root.
constexpr char kFakeDriver[] = "tests/support/libfakecuda.so";

const bool kEnvironment = [] {
  char* driver = realpath(kFakeDriver, nullptr);
  if (driver == nullptr) return false;
  setenv(kDriverLibraryEnv, driver, 1);
  std::free(driver);
  return true;
}();

// A family's loaded kernel: which load made it.
struct Loaded {
  int load;
};

class KernelRegistryTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kEnvironment) << "no " << kFakeDriver << " among the runfiles";
    absl::StatusOr<const PrimaryContext*> primary = RetainedPrimaryContext(0);
    ASSERT_TRUE(primary.ok()) << primary.status();
    primary_ = (*primary)->get();
  }

  // The kernel `identity` of `family` in `context`; a load counts itself.
  absl::StatusOr<std::shared_ptr<const Loaded>> Find(
      CUcontext context, const std::string& family,
      const std::string& identity) {
    return KernelLoadedIn<Loaded>(
        context, family, identity,
        [&]() -> absl::StatusOr<std::shared_ptr<const Loaded>> {
          return std::make_shared<const Loaded>(Loaded{++loads_});
        });
  }

  // A context of the test's own, not current afterwards; destroyed with the
  // test (the registry keeps its entries by the context's ID, never looked
  // up again).
  CUcontext CreatedContext() {
    absl::StatusOr<const Driver*> driver = Driver::Get();
    EXPECT_TRUE(driver.ok()) << driver.status();
    CUcontext context = nullptr;
    EXPECT_EQ((*driver)->cuCtxCreate(&context, nullptr, 0, 0), CUDA_SUCCESS);
    CUcontext popped = nullptr;
    EXPECT_EQ((*driver)->cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    created_ = context;
    return context;
  }

  void TearDown() override {
    if (created_ == nullptr) return;
    absl::StatusOr<const Driver*> driver = Driver::Get();
    ASSERT_TRUE(driver.ok()) << driver.status();
    EXPECT_EQ((*driver)->cuCtxDestroy(created_), CUDA_SUCCESS);
  }

  CUcontext primary_ = nullptr;
  CUcontext created_ = nullptr;
  int loads_ = 0;
};

TEST_F(KernelRegistryTest, LoadsAKernelOnceAContext) {
  absl::StatusOr<std::shared_ptr<const Loaded>> first =
      Find(primary_, "GEMM", "once");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::shared_ptr<const Loaded>> again =
      Find(primary_, "GEMM", "once");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(first->get(), again->get());
  EXPECT_EQ(loads_, 1);
}

TEST_F(KernelRegistryTest, ContextsFamiliesAndIdentitiesLoadTheirOwn) {
  const CUcontext other = CreatedContext();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(Find(primary_, "GEMM", "apart").ok());
  ASSERT_TRUE(Find(primary_, "attention", "apart").ok());
  ASSERT_TRUE(Find(other, "GEMM", "apart").ok());
  ASSERT_TRUE(Find(primary_, "GEMM", "apart too").ok());
  EXPECT_EQ(loads_, 4);
  absl::StatusOr<std::shared_ptr<const Loaded>> attention =
      Find(primary_, "attention", "apart");
  ASSERT_TRUE(attention.ok());
  EXPECT_EQ((*attention)->load, 2);
}

TEST_F(KernelRegistryTest, AFailedLoadIsNotKept) {
  absl::StatusOr<std::shared_ptr<const Loaded>> refused =
      KernelLoadedIn<Loaded>(
          primary_, "GEMM", "fails first",
          []() -> absl::StatusOr<std::shared_ptr<const Loaded>> {
            return absl::FailedPreconditionError("cannot be resident");
          });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "cannot be resident");
  absl::StatusOr<std::shared_ptr<const Loaded>> loaded =
      Find(primary_, "GEMM", "fails first");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loads_, 1);
}

TEST_F(KernelRegistryTest, NoContextIsRefusedBeforeAnythingLoads) {
  absl::StatusOr<std::shared_ptr<const Loaded>> refused =
      Find(nullptr, "GEMM", "nowhere");
  // The fake driver reads a null context as the current one: none here.
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(loads_, 0);
}

}  // namespace
}  // namespace ptxgen::runtime
