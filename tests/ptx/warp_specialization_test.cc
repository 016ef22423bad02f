// Warp specialization and clusters: elect, setmaxnreg, cluster barriers,
// stmatrix, the CTA rank and mapa.
#include "ptxgen/ptx/warp_specialization.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

constexpr RegisterAdjustment kIncrease = RegisterAdjustment::kIncrease;
constexpr RegisterAdjustment kDecrease = RegisterAdjustment::kDecrease;

TEST(ElectSyncTest, ThePredicateComesBackAsZeroOrOne) {
  EXPECT_EQ(*RenderInlineAsm(ElectSync(), {{"elected", {"leader"}}}),
            "asm volatile(\n"
            "    \"{\\n\"\n"
            "    \".reg .pred p_elected;\\n\"\n"
            "    \"elect.sync _|p_elected, 0xffffffff;\\n\"\n"
            "    \"selp.u32 %0, 1, 0, p_elected;\\n\"\n"
            "    \"}\\n\"\n"
            "    : \"=r\"(leader));");
  EXPECT_EQ(*RenderPtx(ElectSync(), {{"elected", {"%p1"}}}),
            "elect.sync _|%p1, 0xffffffff;");
}

TEST(SetMaxNRegTest, CountsAreMultiplesOfEightFrom24To256) {
  for (int count : {24, 40, 232, 240, 256}) {
    EXPECT_TRUE(SetMaxNReg(kIncrease, count).ok()) << count;
    EXPECT_TRUE(SetMaxNReg(kDecrease, count).ok()) << count;
  }
  struct Case {
    int count;
    std::string message;
  };
  const std::vector<Case> cases = {
      {30,
       "setmaxnreg: 30 registers is not legal (counts are multiples of 8 in "
       "24..256)"},
      {20,
       "setmaxnreg: 20 registers is not legal (counts are multiples of 8 in "
       "24..256)"},
      {264,
       "setmaxnreg: 264 registers is not legal (counts are multiples of 8 "
       "in 24..256)"},
      {16,
       "setmaxnreg: 16 registers is not legal (counts are multiples of 8 in "
       "24..256)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ValidateMaxNReg(c.count).message(), c.message);
    EXPECT_EQ(SetMaxNReg(kDecrease, c.count).status().message(), c.message);
  }
  EXPECT_EQ(
      SetMaxNReg(static_cast<RegisterAdjustment>(3), 40).status().message(),
      "setmaxnreg: adjustment 3 is neither an increase nor a decrease");
}

TEST(SetMaxNRegTest, TheCountIsAnImmediate) {
  EXPECT_EQ(*RenderInlineAsm(*SetMaxNReg(kIncrease, 240), {}),
            "asm volatile(\n"
            "    \"setmaxnreg.inc.sync.aligned.u32 %0;\\n\"\n"
            "    :\n"
            "    : \"n\"(240));");
  EXPECT_EQ(*RenderPtx(*SetMaxNReg(kDecrease, 40), {}),
            "setmaxnreg.dec.sync.aligned.u32 40;");
}

TEST(ClusterBarrierTest, OrderingIsSpelledOut) {
  EXPECT_EQ(*RenderInlineAsm(
                BarrierClusterArrive(ClusterArriveOrdering::kRelease), {}),
            "asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\" ::: "
            "\"memory\");");
  EXPECT_EQ(
      *RenderPtx(BarrierClusterArrive(ClusterArriveOrdering::kRelaxed), {}),
      "barrier.cluster.arrive.relaxed.aligned;");
  EXPECT_EQ(*RenderInlineAsm(BarrierClusterWait(), {}),
            "asm volatile(\"barrier.cluster.wait.acquire.aligned;\\n\" ::: "
            "\"memory\");");
}

TEST(StMatrixTest, OneTwoOrFourMatrices) {
  for (int matrices : {1, 2, 4}) {
    for (bool transpose : {false, true}) {
      absl::StatusOr<Statement> statement =
          StMatrixSharedB16({matrices, transpose});
      ASSERT_TRUE(statement.ok()) << statement.status();
      EXPECT_EQ(statement->FindSlot("values")->count, matrices);
    }
  }
  EXPECT_EQ(StMatrixSharedB16({3}).status().message(),
            "stmatrix: .x3 is not legal (1, 2 or 4 matrices per instruction)");
  EXPECT_EQ(StMatrixSharedB16({8}).status().message(),
            "stmatrix: .x8 is not legal (1, 2 or 4 matrices per instruction)");
  EXPECT_FALSE(StMatrixSharedB16({0}).ok());
}

TEST(StMatrixTest, Text) {
  const Statement x4 = *StMatrixSharedB16({});
  EXPECT_TRUE(x4.touches_memory());
  EXPECT_EQ(*RenderInlineAsm(x4, {{"address", {"row"}}, {"values", {"v"}}}),
            "asm volatile(\n"
            "    \"stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, "
            "%4};\\n\"\n"
            "    :\n"
            "    : \"r\"(row), \"r\"(v[0]), \"r\"(v[1]), \"r\"(v[2]), "
            "\"r\"(v[3])\n"
            "    : \"memory\");");
  EXPECT_EQ(*RenderPtx(*StMatrixSharedB16({2, true}),
                       {{"address", {"%r1"}}, {"values", {"%v"}}}),
            "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r1], {%v0, "
            "%v1};");
  EXPECT_EQ(*RenderPtx(*StMatrixSharedB16({1}),
                       {{"address", {"%r1"}}, {"values", {"%r2"}}}),
            "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r1], {%r2};");
}

TEST(ClusterAddressingTest, CtaRankReadsTheSpecialRegister) {
  EXPECT_EQ(*RenderInlineAsm(ClusterCtaRank(), {{"rank", {"rank"}}}),
            "asm volatile(\n"
            "    \"mov.u32 %0, %%cluster_ctarank;\\n\"\n"
            "    : \"=r\"(rank));");
  EXPECT_EQ(*RenderPtx(ClusterCtaRank(), {{"rank", {"%r1"}}}),
            "mov.u32 %r1, %cluster_ctarank;");
}

TEST(ClusterAddressingTest, MapaTranslatesToAPeerCta) {
  EXPECT_EQ(*RenderInlineAsm(MapaSharedCluster(), {{"mapped", {"peer_bar"}},
                                                   {"address", {"bar"}},
                                                   {"cta_rank", {"peer"}}}),
            "asm volatile(\n"
            "    \"mapa.shared::cluster.u32 %0, %1, %2;\\n\"\n"
            "    : \"=r\"(peer_bar)\n"
            "    : \"r\"(bar), \"r\"(peer));");
  EXPECT_EQ(*RenderPtx(MapaSharedCluster(), {{"mapped", {"%r3"}},
                                             {"address", {"%r1"}},
                                             {"cta_rank", {"%r2"}}}),
            "mapa.shared::cluster.u32 %r3, %r1, %r2;");
}

TEST(ClusterAddressingTest, LoadsFourFloatsOfAPeerCtasSharedMemory) {
  const Statement load = LoadSharedClusterF32x4();
  EXPECT_TRUE(load.touches_memory());
  EXPECT_EQ(*RenderPtx(load, {{"values", {"%f1", "%f2", "%f3", "%f4"}},
                              {"address", {"%r1"}}}),
            "ld.shared::cluster.v4.f32 {%f1, %f2, %f3, %f4}, [%r1];");
}

TEST(SharedMemoryTest, LoadsSixteenBytesOfThisCtasSharedMemory) {
  const Statement load = LoadSharedB32x4();
  EXPECT_TRUE(load.touches_memory());
  EXPECT_EQ(*RenderPtx(load, {{"values", {"%r1", "%r2", "%r3", "%r4"}},
                              {"address", {"%r5"}}}),
            "ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r5];");
}

TEST(WarpSpecializationTest, RenderingIsDeterministic) {
  const OperandNames names = {{"address", {"row"}}, {"values", {"v"}}};
  EXPECT_EQ(*RenderInlineAsm(*StMatrixSharedB16({4, true}), names),
            *RenderInlineAsm(*StMatrixSharedB16({4, true}), names));
  EXPECT_EQ(*RenderPtx(ElectSync(), {{"elected", {"%p1"}}}),
            *RenderPtx(ElectSync(), {{"elected", {"%p1"}}}));
}

}  // namespace
}  // namespace ptxgen::ptx
