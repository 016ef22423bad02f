#ifndef PTXGEN_TESTS_SUPPORT_HOPPER_TEST_H_
#define PTXGEN_TESTS_SUPPORT_HOPPER_TEST_H_

// Base fixture of the GPU tests: skips, saying why, without a CUDA driver or
// a compute capability 9.0 device; otherwise makes device 0's primary
// context current (retained once per binary).

#include "gtest/gtest.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::testing_support {

class HopperTest : public testing::Test {
 protected:
  void SetUp() override;
  const runtime::DeviceProperties& properties() const { return properties_; }

 private:
  runtime::DeviceProperties properties_;
};

}  // namespace ptxgen::testing_support

#endif  // PTXGEN_TESTS_SUPPORT_HOPPER_TEST_H_
