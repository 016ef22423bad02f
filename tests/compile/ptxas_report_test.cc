#include "ptxgen/compile/ptxas_report.h"

#include <iterator>

#include "gtest/gtest.h"

namespace ptxgen::compile {
namespace {

using Kind = CompilerDiagnostic::Kind;

// Lines captured from NVRTC 13.0 (-Xptxas=-v, sm_90a), put together into one
// log: a front-end warning, two entries, and a device function ptxas kept
// separate (its frame set to 64 bytes so a misattribution shows).
constexpr char kTwoKernelLog[] =
    "probe(3): warning #177-D: variable \"unused\" was declared but never "
    "referenced\n"
    "    int unused;\n"
    "        ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress "
    "<warning-number>\"\n"
    "\n"
    "ptxas info    : Overriding maximum register limit 256 for 'k' with  32 of "
    "maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
    "ptxas info    : Function properties for k\n"
    "ptxas         .     2384 bytes stack frame, 2148 bytes spill stores, 5332 "
    "bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers, 2384 bytes cumulative "
    "stack size\n"
    "ptxas info    : Compile time = 157.879 ms\n"
    "ptxas info    : Function properties for _Z6helperPfi\n"
    "ptxas         .     64 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Compiling entry function '_Z1tILi3EEvPf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1tILi3EEvPf\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
    "spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem\n"
    "ptxas info    : Compile time = 1.678 ms\n"
    "ptxas warning : Registers are spilled to local memory in function 'k', "
    "2148 bytes spill stores, 5332 bytes spill loads\n";

TEST(ParsePtxasReport, ReadsEveryEntryFunction) {
  const PtxasReport report = ParsePtxasReport(kTwoKernelLog);
  ASSERT_EQ(report.resources.size(), 2u);
  const KernelResources& k = report.resources[0];
  EXPECT_EQ(k.kernel, "k");
  EXPECT_EQ(k.registers, 32);
  EXPECT_EQ(k.static_shared_bytes, 0);
  EXPECT_EQ(k.stack_frame_bytes, 2384);
  EXPECT_EQ(k.spill_store_bytes, 2148);
  EXPECT_EQ(k.spill_load_bytes, 5332);
  const KernelResources& t = report.resources[1];
  EXPECT_EQ(t.kernel, "_Z1tILi3EEvPf");
  EXPECT_EQ(t.registers, 10);
  EXPECT_EQ(t.static_shared_bytes, 1024);
  EXPECT_EQ(t.stack_frame_bytes, 0);
}

TEST(ParsePtxasReport, SumsPtxasCompileTimes) {
  EXPECT_DOUBLE_EQ(ParsePtxasReport(kTwoKernelLog).ptxas_milliseconds,
                   157.879 + 1.678);
  EXPECT_EQ(ParsePtxasReport("ptxas info    : Compile time = soon\n")
                .ptxas_milliseconds,
            0);
}

TEST(ParsePtxasReport, DeviceFunctionPropertiesBelongToNoKernel) {
  // The helper's 64-byte frame must not land on 'k' (2384) or the next entry
  // (0).
  const PtxasReport report = ParsePtxasReport(kTwoKernelLog);
  for (const KernelResources& kernel : report.resources) {
    EXPECT_NE(kernel.stack_frame_bytes, 64) << kernel.kernel;
  }
}

TEST(ParsePtxasReport, KeepsFrontEndAndPtxasWarnings) {
  const PtxasReport report = ParsePtxasReport(kTwoKernelLog);
  ASSERT_EQ(report.diagnostics.size(), 2u);
  EXPECT_EQ(report.diagnostics[0].kind, Kind::kOtherWarning);
  EXPECT_EQ(report.diagnostics[0].code, "177-D");
  EXPECT_EQ(report.diagnostics[0].kernel, "");
  EXPECT_EQ(report.diagnostics[1].kind, Kind::kOtherWarning);
  EXPECT_EQ(report.diagnostics[1].kernel, "k");
  EXPECT_EQ(report.diagnostics[1].message,
            "ptxas warning : Registers are spilled to local memory in function "
            "'k', 2148 bytes spill stores, 5332 bytes spill loads");
}

// Classified by ptxas's phrase, whatever its code: C7517, C7511 and C7508
// as captured, C7519 and C7510 in their form, and the codes ptxas 13.0
// gives GEMM kernels compiled with --Ofast-compile, -G or -Xptxas=-O0
// (C7504, C7505, C7520, C7509).
TEST(ParsePtxasReport, ClassifiesWgmmaPerformanceDiagnosticsByPhrase) {
  const PtxasReport report = ParsePtxasReport(
      "ptxas info    : (C7517) warpgroup.wait is injected in around line 50 by "
      "compiler to allow use of registers defined by GMMA in function 'k'\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 12 "
      "by compiler to allow use of registers in GMMA in function 'k'\n"
      "ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to the presence of Extern calls in the "
      "function 'k'\n"
      "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to insufficient register resources for "
      "the wgmma pipeline in the function 'k'\n"
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' "
      "ignored; unable to determine register count at entry.\n"
      "ptxas info    : (C7999) Some future note in function 'k'\n"
      "ptxas info    : (C7504) Potential Performance Loss: 'setmaxnreg' "
      "ignored to maintain compatibility across compilation units.\n"
      "ptxas info    : (C7505) Potential Performance Loss: 'setmaxnreg' "
      "ignored to allow debugging.\n"
      "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to program dependence on "
      "compiler-inserted WG.AR in divergent path in the function 'k'\n"
      "ptxas info    : (C7509) Potential Performance Loss: wgmma.mma_async "
      "instructions are serialized due to the presence of Extern calls in the "
      "function 'k'\n");
  const Kind expected[] = {Kind::kInjectedWait,      Kind::kInjectedWait,
                           Kind::kWgmmaSerialized,   Kind::kWgmmaSerialized,
                           Kind::kSetmaxnregIgnored, Kind::kOtherWarning,
                           Kind::kSetmaxnregIgnored, Kind::kSetmaxnregIgnored,
                           Kind::kWgmmaSerialized,   Kind::kWgmmaSerialized};
  const char* codes[] = {"C7517", "C7519", "C7510", "C7511", "C7508",
                         "C7999", "C7504", "C7505", "C7520", "C7509"};
  ASSERT_EQ(report.diagnostics.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(report.diagnostics[i].kind, expected[i]) << i;
    EXPECT_EQ(report.diagnostics[i].code, codes[i]) << i;
  }
  EXPECT_EQ(report.diagnostics[0].kernel, "k");
  EXPECT_EQ(report.diagnostics[3].kernel, "k");
  EXPECT_EQ(report.diagnostics[4].kernel, "");  // C7508 names no function.
  EXPECT_EQ(report.diagnostics[8].kernel, "k");
}

TEST(ParsePtxasReport, NvrtcOptionWarningsAreDiagnostics) {
  const PtxasReport report = ParsePtxasReport(
      "nvrtc: warning: \"--std (-std)=c++17\" followed by \"--std "
      "(-std)=c++20\"\n");
  ASSERT_EQ(report.diagnostics.size(), 1u);
  EXPECT_EQ(report.diagnostics[0].kind, Kind::kOtherWarning);
  EXPECT_EQ(report.diagnostics[0].code, "");
}

TEST(ParsePtxasReport, QuotedSourceLinesAreNotWarnings) {
  // A front-end message quotes source indented; that text is not a message.
  const PtxasReport report = ParsePtxasReport(
      "    printf(\"x(1): warning #1: fake\");\n"
      "    ptxas warning : not a ptxas line either\n");
  EXPECT_TRUE(report.diagnostics.empty());
}

TEST(ParsePtxasReport, ToleratesEmptyAndGarbledLogs) {
  EXPECT_TRUE(ParsePtxasReport("").resources.empty());
  const PtxasReport report = ParsePtxasReport(
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Used many registers, x bytes smem\n"
      "ptxas         .     bytes stack frame\r\n"
      "ptxas info    : Compiling entry function 'unterminated\n");
  ASSERT_EQ(report.resources.size(), 2u);
  EXPECT_EQ(report.resources[0].registers, 0);
  EXPECT_EQ(report.resources[1].kernel, "unterminated");
}

}  // namespace
}  // namespace ptxgen::compile
