// mbarrier: the text of each barrier operation and of the wait loop.
#include "ptxgen/ptx/mbarrier.h"

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

TEST(MbarrierTest, EveryOperationTouchesMemory) {
  for (const Statement& statement :
       {MbarrierInit(), MbarrierArrive(MbarrierScope::kCta),
        MbarrierArrive(MbarrierScope::kCluster), MbarrierArriveExpectTx(),
        MbarrierTryWaitParity(), MbarrierInval(), FenceMbarrierInit()}) {
    EXPECT_TRUE(statement.touches_memory()) << statement.description();
  }
}

TEST(MbarrierTest, Init) {
  EXPECT_EQ(*RenderInlineAsm(MbarrierInit(),
                             {{"mbarrier", {"bar"}}, {"count", {"1"}}}),
            "asm volatile(\n"
            "    \"mbarrier.init.shared::cta.b64 [%0], %1;\\n\"\n"
            "    :\n"
            "    : \"r\"(bar), \"r\"(1)\n"
            "    : \"memory\");");
  EXPECT_EQ(*RenderInlineAsm(FenceMbarrierInit(), {}),
            "asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: "
            "\"memory\");");
}

TEST(MbarrierTest, ArriveDiscardsTheState) {
  EXPECT_EQ(*RenderInlineAsm(MbarrierArrive(MbarrierScope::kCta),
                             {{"mbarrier", {"bar"}}}),
            "asm volatile(\n"
            "    \"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\"\n"
            "    :\n"
            "    : \"r\"(bar)\n"
            "    : \"memory\");");
  EXPECT_EQ(
      *RenderPtx(MbarrierArrive(MbarrierScope::kCta), {{"mbarrier", {"%r5"}}}),
      "mbarrier.arrive.shared::cta.b64 _, [%r5];");
}

TEST(MbarrierTest, ArriveOnAPeerCtaReleasesAtClusterScope) {
  EXPECT_EQ(*RenderPtx(MbarrierArrive(MbarrierScope::kCluster),
                       {{"mbarrier", {"%r5"}}}),
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r5];");
}

TEST(MbarrierTest, RelaxedArriveOnAPeerCtaOrdersNothing) {
  EXPECT_EQ(*RenderPtx(MbarrierArrive(MbarrierScope::kClusterRelaxed),
                       {{"mbarrier", {"%r5"}}}),
            "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%r5];");
}

TEST(MbarrierTest, ArriveExpectTx) {
  EXPECT_EQ(
      *RenderInlineAsm(MbarrierArriveExpectTx(),
                       {{"mbarrier", {"bar"}}, {"tx_bytes", {"bytes"}}}),
      "asm volatile(\n"
      "    \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\"\n"
      "    :\n"
      "    : \"r\"(bar), \"r\"(bytes)\n"
      "    : \"memory\");");
}

TEST(MbarrierTest, TryWaitParityIsALoopInItsOwnScope) {
  EXPECT_EQ(*RenderInlineAsm(MbarrierTryWaitParity(),
                             {{"mbarrier", {"bar"}}, {"phase", {"phase"}}}),
            "asm volatile(\n"
            "    \"{\\n\"\n"
            "    \".reg .pred ready;\\n\"\n"
            "    \"WAIT:\\n\"\n"
            "    \"mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], "
            "%1;\\n\"\n"
            "    \"@ready bra DONE;\\n\"\n"
            "    \"bra WAIT;\\n\"\n"
            "    \"DONE:\\n\"\n"
            "    \"}\\n\"\n"
            "    :\n"
            "    : \"r\"(bar), \"r\"(phase)\n"
            "    : \"memory\");");
  EXPECT_EQ(*RenderPtx(MbarrierTryWaitParity(),
                       {{"mbarrier", {"%r1"}}, {"phase", {"%r2"}}}),
            "{\n"
            ".reg .pred ready;\n"
            "WAIT:\n"
            "mbarrier.try_wait.parity.shared::cta.b64 ready, [%r1], %r2;\n"
            "@ready bra DONE;\n"
            "bra WAIT;\n"
            "DONE:\n"
            "}");
}

TEST(MbarrierTest, ClusterScopeWaitAcquiresPeerWrites) {
  EXPECT_EQ(*RenderPtx(MbarrierTryWaitParity(MbarrierWaitScope::kCluster),
                       {{"mbarrier", {"%r1"}}, {"phase", {"%r2"}}}),
            "{\n"
            ".reg .pred ready;\n"
            "WAIT:\n"
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 ready, "
            "[%r1], %r2;\n"
            "@ready bra DONE;\n"
            "bra WAIT;\n"
            "DONE:\n"
            "}");
}

TEST(MbarrierTest, Inval) {
  EXPECT_EQ(*RenderPtx(MbarrierInval(), {{"mbarrier", {"%r1"}}}),
            "mbarrier.inval.shared::cta.b64 [%r1];");
}

TEST(MbarrierTest, RenderingIsDeterministic) {
  const OperandNames names = {{"mbarrier", {"bar"}}, {"phase", {"phase"}}};
  EXPECT_EQ(*RenderInlineAsm(MbarrierTryWaitParity(), names),
            *RenderInlineAsm(MbarrierTryWaitParity(), names));
}

}  // namespace
}  // namespace ptxgen::ptx
