// Loading the cuBLAS reference: a library that lacks an entry point or
// cannot create a handle is refused by name, and nothing is left allocated
// on any path (under LeakSanitizer, --copt=-fsanitize=address
// --linkopt=-fsanitize=address, a leak fails the test). Stand-in libraries
// take cuBLAS's place, so no GPU is needed.
#include "lib/testing/cublas_library.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ptxgen::gemm {
namespace {

// Under `bazel test` the working directory is the runfiles root.
constexpr char kWorking[] = "tests/gemm/libcublas_stub_working.so";
constexpr char kFailing[] = "tests/gemm/libcublas_stub_failing.so";

TEST(LoadCublas, ResolvesTheEntryPointsAndCreatesAHandle) {
  const absl::StatusOr<CublasLibrary> cublas = LoadCublas(kWorking);
  ASSERT_TRUE(cublas.ok()) << cublas.status();
  EXPECT_NE(cublas->create, nullptr);
  EXPECT_NE(cublas->set_stream, nullptr);
  EXPECT_NE(cublas->gemm_ex, nullptr);
  EXPECT_NE(cublas->handle, nullptr);
}

TEST(LoadCublas, AMissingLibraryIsRefusedByName) {
  const absl::StatusOr<CublasLibrary> cublas =
      LoadCublas("tests/gemm/libcublas_absent.so");
  ASSERT_FALSE(cublas.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(cublas.status()));
  EXPECT_TRUE(absl::StrContains(cublas.status().message(),
                                "cuBLAS reference unavailable: cannot load "
                                "tests/gemm/libcublas_absent.so"))
      << cublas.status();
}

TEST(LoadCublas, ALibraryThatCannotCreateAHandleIsRefusedByName) {
  const absl::StatusOr<CublasLibrary> cublas = LoadCublas(kFailing);
  ASSERT_FALSE(cublas.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(cublas.status()));
  EXPECT_EQ(
      std::string(cublas.status().message()),
      "cuBLAS reference unavailable: tests/gemm/libcublas_stub_failing.so "
      "cannot create a handle (cublasCreate_v2 returned 3)");
}

TEST(LoadCublas, ALibraryWithoutTheEntryPointsIsRefusedNamingTheFirstMissing) {
  const absl::StatusOr<CublasLibrary> cublas = LoadCublas("libc.so.6");
  ASSERT_FALSE(cublas.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(cublas.status()));
  EXPECT_EQ(std::string(cublas.status().message()),
            "cuBLAS reference unavailable: libc.so.6 lacks cublasCreate_v2");
}

// Without a GPU, real cuBLAS loads but cannot create a handle: the path the
// leak was on.
TEST(LoadCublas, RealCublasGivesAHandleOrSaysWhyNot) {
  const absl::StatusOr<CublasLibrary> cublas = LoadCublas(kCublasLibrary);
  if (!cublas.ok() &&
      absl::StrContains(cublas.status().message(), "cannot load")) {
    GTEST_SKIP() << cublas.status();
  }
  if (cublas.ok()) {
    EXPECT_NE(cublas->handle, nullptr);
  } else {
    EXPECT_TRUE(absl::StrContains(cublas.status().message(),
                                  "libcublas.so.13 cannot create a handle"))
        << cublas.status();
  }
}

}  // namespace
}  // namespace ptxgen::gemm
