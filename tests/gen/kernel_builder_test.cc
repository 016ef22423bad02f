// The generation machinery every kernel family shares: the plan block,
// template filling, sticky errors and the signature.
#include "lib/gen/common/kernel_builder.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/ptx/tma.h"

namespace ptxgen::gen {
namespace {

// The plan block holds each constant the source reads, once, in the
// planned order, and none it does not read: a name that only begins a
// longer one read does not count.
TEST(KernelBuilderTest, ThePlanBlockHoldsTheConstantsTheSourceReads) {
  std::string source = absl::StrCat(KernelBuilder::kPlanMarker,
                                    "int x = plan::kBlockM + plan::kStages;\n"
                                    "bool y = plan::kUsed;\n");
  const std::vector<PlannedConstant> read = KernelBuilder::PlaceThePlan(
      {PlanInt("kBlock", 1), PlanInt("kBlockM", 128), PlanBytes("kStages", 4),
       PlanBool("kUsed", true), PlanBool("kUnread", false)},
      "test::Planner", source);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].name, "kBlockM");
  EXPECT_EQ(read[1].name, "kStages");
  EXPECT_EQ(read[2].name, "kUsed");
  EXPECT_EQ(source,
            "// The numbers the host planned (test::Planner), each written "
            "once.\n"
            "namespace plan {\n"
            "constexpr int kBlockM = 128;\n"
            "constexpr unsigned kStages = 4u;\n"
            "constexpr bool kUsed = true;\n"
            "}  // namespace plan\n"
            "int x = plan::kBlockM + plan::kStages;\n"
            "bool y = plan::kUsed;\n");
}

// A family fills templates freely and looks at status() once: the first
// error is the one kept, its own or its device functions'.
TEST(KernelBuilderTest, KeepsTheFirstErrorAndReportsItOnce) {
  KernelBuilder builder;
  EXPECT_TRUE(builder.status().ok());
  EXPECT_EQ(builder.Fill("no_such_template.cu", {}), "");
  const absl::Status first = builder.status();
  EXPECT_FALSE(first.ok());
  EXPECT_TRUE(absl::StrContains(first.message(), "no_such_template.cu"))
      << first;
  builder.Check(absl::InternalError("later"));
  EXPECT_EQ(builder.status(), first);

  KernelBuilder other;
  other.ops().Define("bad", ptx::CpAsyncBulkTensorLoad({/*rank=*/9}));
  EXPECT_FALSE(other.status().ok());
}

TEST(KernelBuilderTest, FillsEmbeddedTemplates) {
  KernelBuilder builder;
  const std::string filled = builder.Fill("gemm_tile_order_raster.cu", {});
  EXPECT_TRUE(builder.status().ok()) << builder.status();
  EXPECT_TRUE(absl::StrContains(filled, "tile_of")) << filled;
}

TEST(KernelBuilderTest, RendersTheSignatureAndItsCommentFromOneTable) {
  const std::vector<KernelParameterText> parameters = {
      {"const float* __restrict__ q", "the queries"}, {"int n", "rows"}};
  EXPECT_EQ(KernelSignature("ptxgen_k", 384, parameters),
            "extern \"C\" __global__ void __launch_bounds__(384, 1)\n"
            "ptxgen_k(const float* __restrict__ q,\n    int n)");
  EXPECT_EQ(ParameterDocs("gen::Table", parameters),
            "// Parameters (gen::Table, in order):\n"
            "//   const float* __restrict__ q: the queries\n"
            "//   int n: rows\n");
}

}  // namespace
}  // namespace ptxgen::gen
