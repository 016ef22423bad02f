// Which architectures' code may load on which devices: the rule behind
// Module::LoadCubin's refusal of sm_90a code on anything but a 9.0 device.

#include <string>

#include "gtest/gtest.h"
#include "ptxgen/runtime/device.h"

namespace ptxgen::runtime {
namespace {

struct Case {
  std::string arch;
  int cc_major;
  int cc_minor;
  // Empty: the code runs. Otherwise a part of the refusal's message.
  std::string refusal;
};

class ArchSupportTest : public testing::TestWithParam<Case> {};

TEST_P(ArchSupportTest, FollowsTheCompatibilityRules) {
  const Case& c = GetParam();
  const absl::Status status =
      CheckArchSupported(c.arch, c.cc_major, c.cc_minor);
  const std::string device =
      std::to_string(c.cc_major) + "." + std::to_string(c.cc_minor);
  if (c.refusal.empty()) {
    EXPECT_TRUE(status.ok()) << c.arch << " on " << device << ": " << status;
    return;
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(status))
      << c.arch << " on " << device << ": " << status;
  EXPECT_NE(std::string(status.message()).find(c.refusal), std::string::npos)
      << c.arch << " on " << device << ": " << status;
  EXPECT_NE(std::string(status.message())
                .find("this device is compute capability " + device),
            std::string::npos)
      << status;
}

INSTANTIATE_TEST_SUITE_P(
    ArchSpecific, ArchSupportTest,
    testing::Values(
        Case{"sm_90a", 9, 0, ""},
        Case{"sm_90a", 8, 9, "runs only on compute capability 9.0"},
        Case{"sm_90a", 8, 0, "runs only on compute capability 9.0"},
        Case{"sm_90a", 10, 0, "runs only on compute capability 9.0"},
        Case{"sm_90a", 12, 0, "runs only on compute capability 9.0"},
        Case{"compute_90a", 9, 0, ""},
        Case{"compute_90a", 10, 0, "runs only on compute capability 9.0"},
        Case{"sm_100a", 10, 0, ""},
        Case{"sm_100a", 10, 3, "runs only on compute capability 10.0"}));

INSTANTIATE_TEST_SUITE_P(
    FamilySpecific, ArchSupportTest,
    testing::Values(Case{"sm_100f", 10, 0, ""}, Case{"sm_100f", 10, 3, ""},
                    Case{"sm_103f", 10, 0,
                         "runs only on compute capability 10.x with x >= 3"},
                    Case{"sm_100f", 12, 0,
                         "runs only on compute capability 10.x with x >= 0"}));

INSTANTIATE_TEST_SUITE_P(
    Cubin, ArchSupportTest,
    testing::Values(
        Case{"sm_90", 9, 0, ""}, Case{"sm_80", 8, 0, ""},
        Case{"sm_80", 8, 6, ""},
        Case{"sm_86", 8, 0,
             "(a CUBIN) runs only on compute capability 8.x with x >= 6"},
        Case{"sm_80", 9, 0,
             "(a CUBIN) runs only on compute capability 8.x with x >= 0"},
        Case{"sm_90", 8, 9,
             "(a CUBIN) runs only on compute capability 9.x with x >= 0"}));

INSTANTIATE_TEST_SUITE_P(
    Ptx, ArchSupportTest,
    testing::Values(Case{"compute_80", 8, 0, ""}, Case{"compute_80", 9, 0, ""},
                    Case{"compute_80", 12, 0, ""}, Case{"compute_86", 9, 0, ""},
                    Case{"compute_90", 8, 9,
                         "(PTX) needs compute capability 9.0 or newer"},
                    Case{"compute_80", 7, 5,
                         "(PTX) needs compute capability 8.0 or newer"}));

TEST(ArchSupport, UnknownNamesAreInvalidArguments) {
  for (const char* arch : {"", "sm90", "sm_9", "sm_1000", "sm_90b", "sm_9x",
                           "sm_+9", "gfx90a", "compute_", "sm_90aa"}) {
    const absl::Status status = CheckArchSupported(arch, 9, 0);
    EXPECT_TRUE(absl::IsInvalidArgument(status))
        << "'" << arch << "': " << status;
    EXPECT_NE(std::string(status.message()).find("unknown architecture"),
              std::string::npos)
        << status;
  }
}

}  // namespace
}  // namespace ptxgen::runtime
