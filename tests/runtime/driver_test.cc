// Loading the driver library: the default path, a missing library, and a
// library that is not a driver.

#include "ptxgen/runtime/driver.h"

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ptxgen::runtime {
namespace {

TEST(Driver, LoadsLibcudaSo1ByDefault) {
  EXPECT_STREQ(kDriverLibrary, "libcuda.so.1");
  EXPECT_STREQ(kDriverLibraryEnv, "PTXGEN_LIBCUDA");
  if (std::getenv(kDriverLibraryEnv) != nullptr) {
    GTEST_SKIP() << "$" << kDriverLibraryEnv << " overrides the default path";
  }
  const absl::StatusOr<const Driver*> driver = Driver::Get();
  if (driver.ok()) {
    EXPECT_EQ((*driver)->library_path(), "libcuda.so.1");
    EXPECT_GE((*driver)->version(), 12000);
    return;
  }
  // The usual case on CPU-only machines: no driver installed.
  EXPECT_TRUE(absl::IsFailedPrecondition(driver.status())) << driver.status();
  EXPECT_TRUE(absl::StrContains(driver.status().message(), "libcuda.so.1"))
      << driver.status();
}

TEST(Driver, FailureIsRememberedAndRepeated) {
  const absl::StatusOr<const Driver*> first = Driver::Get();
  const absl::StatusOr<const Driver*> second = Driver::Get();
  EXPECT_EQ(first.status(), second.status());
  if (first.ok()) {
    EXPECT_EQ(*first, *second);
  }
}

TEST(Driver, MissingLibraryIsFailedPreconditionNamingIt) {
  const auto driver = Driver::Load("/nonexistent/libcuda.so.1");
  ASSERT_TRUE(absl::IsFailedPrecondition(driver.status())) << driver.status();
  const absl::string_view message = driver.status().message();
  EXPECT_TRUE(absl::StrContains(message, "no CUDA driver found")) << message;
  EXPECT_TRUE(
      absl::StrContains(message, "cannot load /nonexistent/libcuda.so.1"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "PTXGEN_LIBCUDA")) << message;
}

TEST(Driver, LibraryWithoutTheEntryPointsIsNotADriver) {
  // libm is loaded in every C++ process and exports no cu* symbol.
  const auto driver = Driver::Load("libm.so.6");
  ASSERT_TRUE(absl::IsFailedPrecondition(driver.status())) << driver.status();
  const absl::string_view message = driver.status().message();
  EXPECT_TRUE(
      absl::StrContains(message,
                        "libm.so.6 is not a usable CUDA driver: it "
                        "lacks cuGetErrorName, cuGetErrorString, cuInit"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "cuTensorMapEncodeTiled")) << message;
}

TEST(Driver, CheckCuPassesSuccess) {
  EXPECT_TRUE(CheckCu(CUDA_SUCCESS, "cuInit").ok());
}

TEST(Driver, CheckCuNamesTheCallAndKeepsTheKindOfError) {
  const struct {
    CUresult result;
    absl::StatusCode code;
  } cases[] = {
      {CUDA_ERROR_INVALID_VALUE, absl::StatusCode::kInvalidArgument},
      {CUDA_ERROR_OUT_OF_MEMORY, absl::StatusCode::kResourceExhausted},
      {CUDA_ERROR_NOT_FOUND, absl::StatusCode::kNotFound},
      {CUDA_ERROR_NO_DEVICE, absl::StatusCode::kFailedPrecondition},
      {CUDA_ERROR_ILLEGAL_ADDRESS, absl::StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    const absl::Status status = CheckCu(c.result, "cuSomething(42)");
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_TRUE(absl::StartsWith(status.message(), "cuSomething(42): "))
        << status;
  }
}

}  // namespace
}  // namespace ptxgen::runtime
