// PTXGEN_LIBCUDA takes only an absolute path, as the cache's folder
// variables do: a relative one would load whatever library lies in the
// current folder.

#include <cstdlib>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {
namespace {

// The driver's path is read once, at first load: set it before any test
// runs.
const bool kRelativeDriver =
    setenv(kDriverLibraryEnv, "./libcuda.so.1", 1) == 0;

TEST(DriverEnvironment, ARelativeLibraryPathIsRefusedNamingTheVariable) {
  ASSERT_TRUE(kRelativeDriver);
  const absl::StatusOr<const Driver*> driver = Driver::Get();
  ASSERT_TRUE(absl::IsFailedPrecondition(driver.status())) << driver.status();
  EXPECT_TRUE(absl::StrContains(
      driver.status().message(),
      "PTXGEN_LIBCUDA='./libcuda.so.1' is not an absolute path: refused"))
      << driver.status();
}

}  // namespace
}  // namespace ptxgen::runtime
