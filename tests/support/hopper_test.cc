#include "tests/support/hopper_test.h"

#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::testing_support {
namespace {

// Recreating a primary context per test would cost a fraction of a second.
const absl::StatusOr<runtime::PrimaryContext>& Device0Context() {
  static const auto* const context =
      new absl::StatusOr<runtime::PrimaryContext>(
          runtime::PrimaryContext::Retain(0));
  return *context;
}

}  // namespace

void HopperTest::SetUp() {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) GTEST_SKIP() << "no CUDA driver: " << driver.status();
  const absl::StatusOr<runtime::DeviceProperties> properties =
      runtime::GetDeviceProperties(0);
  if (!properties.ok())
    GTEST_SKIP() << "no CUDA device: " << properties.status();
  if (properties->cc_major != 9 || properties->cc_minor != 0) {
    GTEST_SKIP() << "needs a compute capability 9.0 (Hopper) device; device 0 ("
                 << properties->name << ") is " << properties->cc_major << "."
                 << properties->cc_minor;
  }
  properties_ = *properties;
  ASSERT_TRUE(Device0Context().ok()) << Device0Context().status();
  ASSERT_TRUE(Device0Context()->SetCurrent().ok());
}

}  // namespace ptxgen::testing_support
