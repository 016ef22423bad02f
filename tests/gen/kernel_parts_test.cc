// The parts every warp-specialized family shares, as numbers: what
// setmaxnreg may give the consumers.
#include "lib/gen/common/kernel_parts.h"

#include "gtest/gtest.h"

namespace ptxgen::gen {
namespace {

// The registers a block of `threads` is launched with: each thread's
// __launch_bounds__(threads, 1) allotment, in steps of 8.
int LaunchPool(int threads) {
  return kRegistersPerSm / threads / 8 * 8 * threads;
}

// setmaxnreg can only move registers within the block's launch pool: a
// consumer share past it hangs the kernel (what a 4-consumer GEMM asked
// before: 112 a thread, 62464 in all, from a pool of 61440).
TEST(KernelPartsTest, TheConsumersShareStaysInsideTheLaunchPool) {
  for (const int producer : {24, 40}) {
    for (const int consumers : {1, 2, 3, 4}) {
      const int threads = kThreadsPerWarpgroup * (consumers + 1);
      const int share = ConsumerRegisterShare(consumers, producer);
      EXPECT_EQ(share % 8, 0) << consumers << " consumers";
      EXPECT_LE(kThreadsPerWarpgroup * (producer + consumers * share),
                LaunchPool(threads))
          << consumers << " consumers, a producer of " << producer;
      // Nothing a step of 8 could add is left over.
      EXPECT_GT(kThreadsPerWarpgroup * (producer + consumers * (share + 8)),
                LaunchPool(threads))
          << consumers << " consumers, a producer of " << producer;
    }
  }
  EXPECT_EQ(ConsumerRegisterShare(2, 40), 232);  // GEMM's ws kernels
  EXPECT_EQ(ConsumerRegisterShare(4, 40), 104);
  EXPECT_EQ(ConsumerRegisterShare(2, 24), 240);  // attention's
  EXPECT_EQ(ConsumerRegisterShare(3, 24), 160);
}

TEST(KernelPartsTest, RoundUpReachesTheNextMultiple) {
  EXPECT_EQ(RoundUp(0, 128), 0);
  EXPECT_EQ(RoundUp(1, 128), 128);
  EXPECT_EQ(RoundUp(128, 128), 128);
  EXPECT_EQ(RoundUp(129, 16), 144);
}

}  // namespace
}  // namespace ptxgen::gen
