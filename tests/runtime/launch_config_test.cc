// The launch shapes Function::Launch accepts before it calls the driver.

#include <string>

#include "gtest/gtest.h"
#include "ptxgen/runtime/module.h"

namespace ptxgen::runtime {
namespace {

LaunchConfig Config(Dim3 grid, Dim3 block, Dim3 cluster = {1, 1, 1},
                    int shared_bytes = 0) {
  LaunchConfig config;
  config.grid = grid;
  config.block = block;
  config.cluster = cluster;
  config.shared_bytes = shared_bytes;
  return config;
}

TEST(LaunchConfig, DefaultsAreOneBlockOfOneThreadWithoutClusters) {
  const LaunchConfig config;
  EXPECT_EQ(config.cluster.x * config.cluster.y * config.cluster.z, 1u);
  EXPECT_EQ(config.shared_bytes, 0);
  EXPECT_EQ(config.stream, nullptr);
  EXPECT_TRUE(ValidateLaunchConfig(config).ok());
}

TEST(LaunchConfig, AcceptsLegalShapes) {
  for (const LaunchConfig& config : {
           Config({132, 1, 1}, {384, 1, 1}, {1, 1, 1}, 227 * 1024),
           Config({2147483647, 65535, 65535}, {1024, 1, 1}),
           Config({1, 1, 1}, {32, 32, 1}),
           Config({1, 1, 1}, {1, 16, 64}),
           Config({132, 1, 1}, {128, 1, 1}, {2, 1, 1}),
           Config({4, 4, 4}, {128, 1, 1}, {2, 2, 2}),
           Config({8, 2, 1}, {128, 1, 1}, {8, 1, 1}),
       }) {
    EXPECT_TRUE(ValidateLaunchConfig(config).ok())
        << ValidateLaunchConfig(config);
  }
}

struct Illegal {
  LaunchConfig config;
  std::string message;
};

TEST(LaunchConfig, RefusesIllegalShapesNamingTheRule) {
  for (const Illegal& c : std::initializer_list<Illegal>{
           {Config({0, 1, 1}, {1, 1, 1}),
            "launch: grid 0x1x1 must be within 1..2147483647 x 1..65535 x "
            "1..65535 blocks"},
           {Config({2147483648u, 1, 1}, {1, 1, 1}), "grid 2147483648x1x1"},
           {Config({1, 65536, 1}, {1, 1, 1}), "grid 1x65536x1"},
           {Config({1, 1, 0}, {1, 1, 1}), "grid 1x1x0"},
           {Config({1, 1, 1}, {0, 1, 1}),
            "launch: block 0x1x1 must have 1..1024 threads in all, with z at "
            "most 64"},
           {Config({1, 1, 1}, {1025, 1, 1}), "block 1025x1x1"},
           {Config({1, 1, 1}, {32, 32, 2}), "block 32x32x2"},
           {Config({1, 1, 1}, {1, 1, 65}), "block 1x1x65"},
           {Config({1, 1, 1}, {1, 1, 1}, {1, 1, 1}, -1),
            "launch: shared_bytes must not be negative (got -1)"},
           {Config({2, 1, 1}, {1, 1, 1}, {0, 1, 1}),
            "launch: cluster 0x1x1 must be at least 1 in every dimension"},
           {Config({3, 1, 1}, {128, 1, 1}, {2, 1, 1}),
            "launch: grid 3x1x1 is not a whole number of clusters 2x1x1"},
           {Config({4, 3, 1}, {128, 1, 1}, {1, 2, 1}),
            "grid 4x3x1 is not a whole number of clusters 1x2x1"},
           {Config({16, 1, 1}, {128, 1, 1}, {16, 1, 1}),
            "launch: cluster 16x1x1 has 16 blocks; the portable maximum is 8"},
           {Config({4, 4, 1}, {128, 1, 1}, {4, 4, 1}),
            "cluster 4x4x1 has 16 blocks"},
       }) {
    const absl::Status status = ValidateLaunchConfig(c.config);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.message << ": " << status;
    EXPECT_NE(std::string(status.message()).find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << status;
  }
}

}  // namespace
}  // namespace ptxgen::runtime
