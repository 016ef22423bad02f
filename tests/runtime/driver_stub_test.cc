// The CUDA toolkit's stub libcuda exports every entry point but runs
// nothing: loading it is refused with a message that says it is the stub.
// A binary of its own: the driver's path is read once, at first load.

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {
namespace {

constexpr char kStub[] = "/usr/local/cuda/lib64/stubs/libcuda.so";

TEST(DriverStub, IsRecognisedAndRefusedByName) {
  if (access(kStub, R_OK) != 0) GTEST_SKIP() << "no stub library at " << kStub;
  ASSERT_EQ(setenv(kDriverLibraryEnv, kStub, 1), 0);
  const absl::StatusOr<const Driver*> driver = Driver::Get();
  ASSERT_FALSE(driver.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(driver.status())) << driver.status();
  EXPECT_TRUE(absl::StrContains(driver.status().message(),
                                "is the CUDA toolkit's stub libcuda"))
      << driver.status();
}

}  // namespace
}  // namespace ptxgen::runtime
