// TMA: the rank and wait_group rules, the operand slots of each form and
// their text.
#include "ptxgen/ptx/tma.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ptxgen::ptx {
namespace {

const OperandNames kLoadPtx = {{"dst", {"%r1"}},
                               {"tensor_map", {"%rd1"}},
                               {"coords", {"%c"}},
                               {"mbarrier", {"%r2"}}};

TEST(TmaValidationTest, TensorCopiesAreOneToFiveDimensional) {
  for (int rank = 1; rank <= 5; ++rank) {
    EXPECT_TRUE(CpAsyncBulkTensorLoad({rank}).ok()) << rank;
    EXPECT_TRUE(CpAsyncBulkTensorStore({rank}).ok()) << rank;
    EXPECT_TRUE(CpAsyncBulkPrefetchTensor({rank}).ok()) << rank;
  }
  struct Case {
    int rank;
    std::string message;
  };
  const std::vector<Case> cases = {
      {6, "tma: a 6-D tensor copy is not legal (rank must be 1..5)"},
      {0, "tma: a 0-D tensor copy is not legal (rank must be 1..5)"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ValidateTensorRank(c.rank).message(), c.message);
    EXPECT_EQ(CpAsyncBulkTensorLoad({c.rank}).status().message(), c.message);
    EXPECT_EQ(CpAsyncBulkTensorStore({c.rank}).status().message(), c.message);
    EXPECT_EQ(CpAsyncBulkPrefetchTensor({c.rank}).status().message(),
              c.message);
  }
}

TEST(TmaValidationTest, WaitGroupTakesZeroTo63PendingGroups) {
  // The hardware counter is 6 bits wide; ptxas clamps larger values to 63.
  for (int pending : {0, 1, 63}) {
    EXPECT_TRUE(CpAsyncBulkWaitGroup(pending, false).ok()) << pending;
    EXPECT_TRUE(CpAsyncBulkWaitGroup(pending, true).ok()) << pending;
  }
  EXPECT_EQ(CpAsyncBulkWaitGroup(64, true).status().message(),
            "tma: bulk wait_group takes 0..63 pending groups, not 64");
  EXPECT_EQ(CpAsyncBulkWaitGroup(-1, false).status().message(),
            "tma: bulk wait_group takes 0..63 pending groups, not -1");
}

TEST(TmaSlotTest, OptionalOperandsExistOnlyWithTheirQualifier) {
  const Statement plain = *CpAsyncBulkTensorLoad({3});
  EXPECT_EQ(plain.FindSlot("coords")->count, 3);
  EXPECT_EQ(plain.FindSlot("tensor_map")->type, RegType::kB64);
  EXPECT_EQ(plain.FindSlot("cta_mask"), nullptr);
  EXPECT_EQ(plain.FindSlot("cache_policy"), nullptr);
  EXPECT_TRUE(plain.touches_memory());

  const Statement full = *CpAsyncBulkTensorLoad({3, true, true});
  EXPECT_EQ(full.FindSlot("cta_mask")->type, RegType::kB16);
  EXPECT_EQ(full.FindSlot("cache_policy")->type, RegType::kB64);
  EXPECT_EQ(CpAsyncBulkTensorStore({2, true})->FindSlot("cache_policy")->type,
            RegType::kB64);
  EXPECT_EQ(CpAsyncBulkPrefetchTensor({2})->FindSlot("cache_policy"), nullptr);
}

TEST(TmaTextTest, TwoDimensionalLoadInlineAsm) {
  EXPECT_EQ(
      *RenderInlineAsm(*CpAsyncBulkTensorLoad({}), {{"dst", {"smem"}},
                                                    {"tensor_map", {"map"}},
                                                    {"coords", {"xy"}},
                                                    {"mbarrier", {"full"}}}),
      "asm volatile(\n"
      "    \"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
      "complete_tx::bytes [%0], \"\n"
      "    \"[%1, {%2, %3}], [%4];\\n\"\n"
      "    :\n"
      "    : \"r\"(smem), \"l\"(map), \"r\"(xy[0]), \"r\"(xy[1]), "
      "\"r\"(full)\n"
      "    : \"memory\");");
}

TEST(TmaTextTest, MulticastLoadWithCacheHintInlineAsm) {
  EXPECT_EQ(*RenderInlineAsm(*CpAsyncBulkTensorLoad({5, true, true}),
                             {{"dst", {"smem"}},
                              {"tensor_map", {"map"}},
                              {"coords", {"c"}},
                              {"mbarrier", {"full"}},
                              {"cta_mask", {"mask"}},
                              {"cache_policy", {"policy"}}}),
            "asm volatile(\n"
            "    \"cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::"
            "complete_tx::bytes.multicast::cluster.L2::cache_hint [%0], \"\n"
            "    \"[%1, {%2, %3, %4, %5, %6}], [%7], %8, %9;\\n\"\n"
            "    :\n"
            "    : \"r\"(smem), \"l\"(map), \"r\"(c[0]), \"r\"(c[1]), "
            "\"r\"(c[2]), \"r\"(c[3]),\n"
            "      \"r\"(c[4]), \"r\"(full), \"h\"(mask), \"l\"(policy)\n"
            "    : \"memory\");");
}

TEST(TmaTextTest, LoadPtx) {
  OperandNames multicast = kLoadPtx;
  multicast["cta_mask"] = {"%rs1"};
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkTensorLoad({3, true}), multicast),
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
            "complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%c0, %c1, "
            "%c2}], [%r2], %rs1;");
  OperandNames hinted = kLoadPtx;
  hinted["cache_policy"] = {"%rd2"};
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkTensorLoad({2, false, true}), hinted),
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::"
            "complete_tx::bytes.L2::cache_hint [%r1], [%rd1, {%c0, %c1}], "
            "[%r2], %rd2;");
}

TEST(TmaTextTest, OneCoordinateIsNamedLikeAnyOneRegisterOperand) {
  // A single name for a one-register slot is that register, not an array:
  // a 1-D copy from an array of coordinates names the element.
  OperandNames names = kLoadPtx;
  names["coords"] = {"%r3"};
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkTensorLoad({1}), names),
            "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::"
            "complete_tx::bytes [%r1], [%rd1, {%r3}], [%r2];");
  EXPECT_EQ(
      *RenderInlineAsm(*CpAsyncBulkTensorLoad({1}), {{"dst", {"smem"}},
                                                     {"tensor_map", {"map"}},
                                                     {"coords", {"x[0]"}},
                                                     {"mbarrier", {"full"}}}),
      "asm volatile(\n"
      "    \"cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::"
      "complete_tx::bytes [%0], \"\n"
      "    \"[%1, {%2}], [%3];\\n\"\n"
      "    :\n"
      "    : \"r\"(smem), \"l\"(map), \"r\"(x[0]), \"r\"(full)\n"
      "    : \"memory\");");
}

TEST(TmaTextTest, Store) {
  EXPECT_EQ(
      *RenderInlineAsm(
          *CpAsyncBulkTensorStore({}),
          {{"tensor_map", {"map"}}, {"coords", {"xy"}}, {"src", {"smem"}}}),
      "asm volatile(\n"
      "    \"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, "
      "{%1, %2}], \"\n"
      "    \"[%3];\\n\"\n"
      "    :\n"
      "    : \"l\"(map), \"r\"(xy[0]), \"r\"(xy[1]), \"r\"(smem)\n"
      "    : \"memory\");");
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkTensorStore({4, true}),
                       {{"tensor_map", {"%rd1"}},
                        {"coords", {"%c"}},
                        {"src", {"%r1"}},
                        {"cache_policy", {"%rd2"}}}),
            "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group.L2::"
            "cache_hint [%rd1, {%c0, %c1, %c2, %c3}], [%r1], %rd2;");
}

TEST(TmaTextTest, TensorMapPrefetchTakesTheMapsGenericAddress) {
  EXPECT_EQ(*RenderPtx(PrefetchTensorMap(), {{"tensor_map", {"%rd1"}}}),
            "prefetch.tensormap [%rd1];");
  EXPECT_EQ(*RenderInlineAsm(PrefetchTensorMap(), {{"tensor_map", {"map"}}}),
            "asm volatile(\n"
            "    \"prefetch.tensormap [%0];\\n\"\n"
            "    :\n"
            "    : \"l\"(map));");
}

TEST(TmaTextTest, BulkGroupsAndFence) {
  EXPECT_EQ(*RenderInlineAsm(FenceProxyAsyncSharedCta(), {}),
            "asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: "
            "\"memory\");");
  EXPECT_EQ(*RenderInlineAsm(CpAsyncBulkCommitGroup(), {}),
            "asm volatile(\"cp.async.bulk.commit_group;\\n\" ::: \"memory\");");
  EXPECT_EQ(*RenderInlineAsm(*CpAsyncBulkWaitGroup(1, true), {}),
            "asm volatile(\n"
            "    \"cp.async.bulk.wait_group.read %0;\\n\"\n"
            "    :\n"
            "    : \"n\"(1)\n"
            "    : \"memory\");");
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkWaitGroup(0, false), {}),
            "cp.async.bulk.wait_group 0;");
}

TEST(TmaTextTest, Prefetch) {
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkPrefetchTensor({}),
                       {{"tensor_map", {"%rd1"}}, {"coords", {"%c"}}}),
            "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%c0, "
            "%c1}];");
  EXPECT_EQ(*RenderInlineAsm(*CpAsyncBulkPrefetchTensor({3, true}),
                             {{"tensor_map", {"map"}},
                              {"coords", {"c"}},
                              {"cache_policy", {"policy"}}}),
            "asm volatile(\n"
            "    \"cp.async.bulk.prefetch.tensor.3d.L2.global.tile.L2::"
            "cache_hint [%0, {%1, \"\n"
            "    \"%2, %3}], %4;\\n\"\n"
            "    :\n"
            "    : \"l\"(map), \"r\"(c[0]), \"r\"(c[1]), \"r\"(c[2]), "
            "\"l\"(policy)\n"
            "    : \"memory\");");
}

TEST(TmaTextTest, RenderingIsDeterministic) {
  const TensorLoad load{4, true, true};
  const OperandNames names = {
      {"dst", {"smem"}},      {"tensor_map", {"map"}},
      {"coords", {"c"}},      {"mbarrier", {"full"}},
      {"cta_mask", {"mask"}}, {"cache_policy", {"policy"}}};
  EXPECT_EQ(*RenderInlineAsm(*CpAsyncBulkTensorLoad(load), names),
            *RenderInlineAsm(*CpAsyncBulkTensorLoad(load), names));
  EXPECT_EQ(*RenderPtx(*CpAsyncBulkTensorLoad(load), names),
            *RenderPtx(*CpAsyncBulkTensorLoad(load), names));
}

}  // namespace
}  // namespace ptxgen::ptx
