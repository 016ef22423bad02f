#include "ptxgen/compile/compiler.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

using Kind = CompilerDiagnostic::Kind;

bool HasDiagnostic(const CompiledModule& module, Kind kind) {
  for (const CompilerDiagnostic& diagnostic : module.diagnostics) {
    if (diagnostic.kind == kind) return true;
  }
  return false;
}

TEST(CompileCuda, ProducesPtxCubinAndResources) {
  absl::StatusOr<CompiledModule> module =
      CompileCuda("tiny", test_kernels::kTinyKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->name, "tiny");
  EXPECT_EQ(module->cuda_source, test_kernels::kTinyKernel);
  EXPECT_EQ(module->source, CacheSource::kCompiled);
  EXPECT_TRUE(Contains(module->ptx, ".target sm_90a"));
  EXPECT_TRUE(Contains(module->ptx, ".entry scale("));
  ASSERT_GE(module->cubin.size(), 4u);
  EXPECT_EQ(module->cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_TRUE(Contains(module->log, "Used"));  // -Xptxas=-v was passed.
  ASSERT_EQ(module->resources.size(), 1u);
  EXPECT_EQ(module->resources[0].kernel, "scale");
  EXPECT_EQ(module->resources[0].static_shared_bytes, 4000);
  EXPECT_GT(module->resources[0].registers, 0);
  EXPECT_GT(module->compile_ms, 0);
  EXPECT_TRUE(module->cache_key.empty());
}

TEST(CompileCuda, ReportsTheRegisterCapAndSpills) {
  CompileOptions options;
  options.flags = {"-maxrregcount=24"};
  absl::StatusOr<CompiledModule> module =
      CompileCuda("crowded", test_kernels::kCrowdedKernel, options);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->resources.size(), 1u);
  const KernelResources& crowded = module->resources[0];
  EXPECT_EQ(crowded.kernel, "crowded");
  EXPECT_EQ(crowded.registers, 24);
  EXPECT_EQ(crowded.static_shared_bytes, 2048);
  EXPECT_GT(crowded.spill_store_bytes, 0);
  EXPECT_GT(crowded.spill_load_bytes, 0);
  EXPECT_GE(crowded.stack_frame_bytes, crowded.spill_store_bytes);
}

TEST(CompileCuda, SurfacesIgnoredSetmaxnreg) {
  absl::StatusOr<CompiledModule> module = CompileCuda(
      "producer", test_kernels::kSetmaxnregKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(HasDiagnostic(*module, Kind::kSetmaxnregIgnored)) << module->log;
  EXPECT_EQ(module->diagnostics[0].code, "C7508");
}

TEST(CompileCuda, SurfacesInjectedWaitsAndSerializedWgmma) {
  absl::StatusOr<CompiledModule> module = CompileCuda(
      "unpinned", test_kernels::kUnpinnedWgmmaKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(HasDiagnostic(*module, Kind::kInjectedWait)) << module->log;
  EXPECT_TRUE(HasDiagnostic(*module, Kind::kWgmmaSerialized)) << module->log;
  for (const CompilerDiagnostic& diagnostic : module->diagnostics) {
    EXPECT_EQ(diagnostic.kernel, "unpinned") << diagnostic.message;
  }
}

TEST(CompileCuda, CleanKernelHasNoDiagnostics) {
  absl::StatusOr<CompiledModule> module =
      CompileCuda("tiny", test_kernels::kTinyKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(module->diagnostics.empty()) << module->log;
}

TEST(CompileCuda, FrontEndErrorQuotesTheSourceLineAndFullLog) {
  absl::StatusOr<CompiledModule> module =
      CompileCuda("broken", test_kernels::kSyntaxErrorKernel, CompileOptions{});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(module.status().message());
  EXPECT_TRUE(Contains(message, "'broken' does not compile for sm_90a"));
  EXPECT_TRUE(Contains(
      message, "first error: broken(3): error: expected an expression"));
  EXPECT_TRUE(Contains(message, "  3 |   float x = ;"));
  EXPECT_TRUE(Contains(message, "full log:\n"));
  EXPECT_TRUE(Contains(message, "1 error detected in the compilation"));
}

TEST(CompileCuda, PtxasErrorQuotesThePtxLine) {
  absl::StatusOr<CompiledModule> module =
      CompileCuda("bad_asm", test_kernels::kBadAsmKernel, CompileOptions{});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(module.status().message());
  EXPECT_TRUE(Contains(message, "first error: ptxas"));
  EXPECT_TRUE(Contains(message, "| bogus.instruction %f1;"));
  EXPECT_TRUE(Contains(message, "ptxas fatal"));  // The full log follows.
}

TEST(CompileCuda, UnknownFlagIsAnErrorWithTheLog) {
  CompileOptions options;
  options.flags = {"--no-such-option"};
  absl::StatusOr<CompiledModule> module =
      CompileCuda("tiny", test_kernels::kTinyKernel, options);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      Contains(std::string(module.status().message()), "no-such-option"));
}

TEST(CompileCuda, RejectsRequestsThatEscapeTheRules) {
  const struct {
    const char* why;
    std::string name;
    std::string source;
    CompileOptions options;
    const char* rule;
  } kCases[] = {
      {"empty name", "", "", {}, "module name must be non-empty"},
      {"NUL in source", "m", std::string("a\0b", 3), {}, "NUL"},
      {"virtual arch", "m", "", {"compute_90a", {}}, "real architecture"},
      {"malformed arch",
       "m",
       "",
       {"sm_9x", {}},
       "unknown architecture 'sm_9x'"},
      {"arch flag",
       "m",
       "",
       {"sm_90a", {"-arch=sm_80"}},
       "set CompileOptions::arch"},
      {"long arch flag",
       "m",
       "",
       {"sm_90a", {"--gpu-architecture=sm_80"}},
       "set CompileOptions::arch"},
      {"include path",
       "m",
       "",
       {"sm_90a", {"-I/usr/include"}},
       "escape the cache key"},
      {"pre-include",
       "m",
       "",
       {"sm_90a", {"--pre-include=x.h"}},
       "escape the cache key"},
      {"empty flag", "m", "", {"sm_90a", {""}}, "flag must be non-empty"},
  };
  for (const auto& c : kCases) {
    absl::StatusOr<CompiledModule> module =
        CompileCuda(c.name, c.source, c.options);
    ASSERT_FALSE(module.ok()) << c.why;
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument)
        << c.why;
    EXPECT_TRUE(Contains(std::string(module.status().message()), c.rule))
        << c.why;
  }
}

// NVRTC appends to the file these name (following a symlink planted there);
// each spelling NVRTC takes is refused before it runs, and no file appears.
TEST(CompileCuda, RefusesFlagsThatWriteFilesByName) {
  const std::string directory = FreshTestDirectory();
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  const std::string file = directory + "/written_by_nvrtc";
  for (const std::string& flag : std::vector<std::string>{
           "--time=" + file, "-time=" + file, "--fdevice-time-trace=" + file,
           "-fdevice-time-trace=" + file, "--create-pch=" + file, "-pch",
           "--pch", "--pch-dir=" + file, "--use-pch=" + file}) {
    CompileOptions options;
    options.flags = {flag};
    absl::StatusOr<CompiledModule> module =
        CompileCuda("tiny", test_kernels::kTinyKernel, options);
    ASSERT_FALSE(module.ok()) << flag;
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(
        Contains(std::string(module.status().message()), "flag '" + flag + "'"))
        << module.status();
    EXPECT_TRUE(Contains(std::string(module.status().message()), "files"))
        << module.status();
  }
  EXPECT_TRUE(ListDirectory(directory).empty());
}

// These compile "successfully" into no kernel: an empty CUBIN (LTO IR,
// OptiX IR) or one ptxas compiled no entry of.
TEST(CompileCuda, RefusesFlagsThatProduceNoKernelByName) {
  for (const char* flag :
       {"-fdevice-syntax-only", "--fdevice-syntax-only", "-dlto",
        "--dlink-time-opt", "--optix-ir", "-optix-ir"}) {
    CompileOptions options;
    options.flags = {flag};
    const absl::Status valid = ValidateCompileOptions(options);
    EXPECT_FALSE(valid.ok()) << flag;
    EXPECT_TRUE(Contains(std::string(valid.message()),
                         absl::StrCat("flag '", flag, "'")))
        << valid;
    EXPECT_TRUE(Contains(std::string(valid.message()), "no kernel")) << valid;
  }
}

// The result itself is checked, whatever asked for it: a module must hold
// a kernel ptxas compiled.
TEST(CompileCuda, AModuleWithoutAKernelIsRefused) {
  absl::StatusOr<CompiledModule> module =
      CompileCuda("kernelless", "__device__ int counter;\n", CompileOptions{});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(module.status().message()),
                       "'kernelless' compiled into no kernel"))
      << module.status();
}

TEST(CompileCuda, AnotherLanguageStandardReplacesTheDefault) {
  CompileOptions options;
  options.flags = {"-std=c++20"};
  absl::StatusOr<CompiledModule> module =
      CompileCuda("tiny", test_kernels::kTinyKernel, options);
  ASSERT_TRUE(module.ok()) << module.status();
  // Passing both would make NVRTC warn that one overrides the other.
  EXPECT_TRUE(module->diagnostics.empty()) << module->log;
}

// On a GPU host NVRTC 13 serves a compile it has seen before from the
// driver's compute cache without running ptxas, and ptxas's report (the
// resources, the diagnostics) comes back empty: ptxgen turns that cache off
// and keys its own on every argument NVRTC gets. (This host has no driver,
// so NVRTC's cache is off here whatever the arguments.)
TEST(NvrtcArguments, TurnNvrtcsOwnCacheOffAndKeyTheKernelCache) {
  CompileOptions options;
  options.flags = {"-lineinfo"};
  const std::vector<std::string> arguments = NvrtcArguments(options);
  EXPECT_EQ(arguments, (std::vector<std::string>{"--gpu-architecture=sm_90a",
                                                 "-Xptxas=-v", "--no-cache",
                                                 "-std=c++17", "-lineinfo"}));
  CompileOptions c17 = options;
  c17.flags = {"-std=c++17", "-lineinfo"};
  EXPECT_EQ(KernelCacheKey("k", "source", options),
            KernelCacheKey("k", "source", c17))
      << "requests that give NVRTC the same arguments are one compile";
  CompileOptions plain;
  EXPECT_NE(KernelCacheKey("k", "source", options),
            KernelCacheKey("k", "source", plain));
}

TEST(NvrtcVersion, IsMajorDotMinor) {
  EXPECT_TRUE(absl::StrContains(NvrtcVersion(), ".")) << NvrtcVersion();
}

}  // namespace
}  // namespace ptxgen::compile
