#include "ptxgen/compile/inspect.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

// ---- JSON strings ----

TEST(JsonString, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonString(std::string("\0\x01\x1f", 3)),
            "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(JsonString("'/\x7f"), "\"'/\x7f\"");
}

TEST(JsonString, KeepsValidUtf8) {
  EXPECT_EQ(JsonString("\xc3\xa9"), "\"\xc3\xa9\"");                  // é
  EXPECT_EQ(JsonString("\xe2\x86\x92"), "\"\xe2\x86\x92\"");          // →
  EXPECT_EQ(JsonString("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");  // U+1F600
}

TEST(JsonString, ReplacesInvalidUtf8) {
  EXPECT_EQ(JsonString("\xff"), "\"\\ufffd\"");
  EXPECT_EQ(JsonString("a\xc3"), "\"a\\ufffd\"");           // Cut short.
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\ufffd\\ufffd\"");  // Overlong.
  EXPECT_EQ(JsonString("\xed\xa0\x80"),
            "\"\\ufffd\\ufffd\\ufffd\"");  // Surrogate.
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"),
            "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // Above U+10FFFF.
}

// ---- JSON modules ----

CompiledModule SampleModule() {
  CompiledModule module;
  module.name = "gemm \"v1\"";
  module.options.arch = "sm_90a";
  module.source = CacheSource::kDiskCache;
  module.compile_ms = 1.23456;
  module.cache_key = "ab12";
  module.resources = {{"k", 168, 1024, 16, 8, 4}};
  module.diagnostics = {
      {CompilerDiagnostic::Kind::kWgmmaSerialized, "C7511", "k",
       "ptxas info    : (C7511) ... in the function 'k'"},
      {CompilerDiagnostic::Kind::kSetmaxnregIgnored, "C7508", "",
       "ptxas info    : (C7508) 'setmaxnreg' ignored"},
  };
  module.cache_warnings = {"kernel cache entry /x discarded"};
  return module;
}

TEST(ToJson, RendersTheWholeModuleDeterministically) {
  EXPECT_EQ(
      ToJson(SampleModule()),
      "{\"name\":\"gemm "
      "\\\"v1\\\"\",\"source\":\"disk_cache\",\"compile_ms\":1.235,"
      "\"cache_key\":\"ab12\",\"arch\":\"sm_90a\",\"kernels\":[{\"name\":\"k\","
      "\"registers\":168,\"static_shared_bytes\":1024,\"stack_bytes\":16,"
      "\"spill_store_bytes\":8,\"spill_load_bytes\":4,\"warnings\":[{\"kind\":"
      "\"wgmma_serialized\",\"code\":\"C7511\",\"message\":\"ptxas info    : "
      "(C7511) ... in the function 'k'\"}]}],\"warnings\":[{\"kind\":"
      "\"setmaxnreg_ignored\",\"code\":\"C7508\",\"message\":\"ptxas info    : "
      "(C7508) 'setmaxnreg' ignored\"}],\"cache_warnings\":[\"kernel cache "
      "entry /x discarded\"]}");
  EXPECT_EQ(ToJson(SampleModule()), ToJson(SampleModule()));
}

TEST(ToJson, EmptyModuleIsStillValid) {
  EXPECT_EQ(ToJson(CompiledModule{}),
            "{\"name\":\"\",\"source\":\"compiled\",\"compile_ms\":0.000,"
            "\"cache_key\":\"\",\"arch\":\"sm_90a\",\"kernels\":[],"
            "\"warnings\":[],\"cache_warnings\":[]}");
}

// What a dump keeps: the module itself, nothing of the lookup that found it
// (so two lookups of one kernel give the same bytes).
TEST(ResourcesJson, IsToJsonWithoutTheLookup) {
  EXPECT_EQ(
      ResourcesJson(SampleModule()),
      "{\"name\":\"gemm \\\"v1\\\"\",\"cache_key\":\"ab12\",\"arch\":"
      "\"sm_90a\",\"kernels\":[{\"name\":\"k\",\"registers\":168,"
      "\"static_shared_bytes\":1024,\"stack_bytes\":16,\"spill_store_bytes\":8,"
      "\"spill_load_bytes\":4,\"warnings\":[{\"kind\":\"wgmma_serialized\","
      "\"code\":\"C7511\",\"message\":\"ptxas info    : (C7511) ... in the "
      "function 'k'\"}]}],\"warnings\":[{\"kind\":\"setmaxnreg_ignored\","
      "\"code\":\"C7508\",\"message\":\"ptxas info    : (C7508) 'setmaxnreg' "
      "ignored\"}]}");
  CompiledModule other_lookup = SampleModule();
  other_lookup.source = CacheSource::kCompiled;
  other_lookup.compile_ms = 900;
  other_lookup.cache_warnings.clear();
  EXPECT_EQ(ResourcesJson(other_lookup), ResourcesJson(SampleModule()));
}

// Every string of a module can come from a tampered cache entry; none may
// carry a raw control character into the JSON (RFC 8259 section 7).
TEST(ToJson, EscapesControlCharactersInEveryString) {
  const std::string hostile = std::string("\x1b[31m\r\0\x7f", 8);
  CompiledModule module = SampleModule();
  module.name = hostile;
  module.cache_key = hostile;
  module.resources[0].kernel = hostile;
  module.diagnostics[0] = {CompilerDiagnostic::Kind::kOtherWarning, hostile,
                           hostile, hostile};
  module.cache_warnings = {hostile};
  const std::string json = ToJson(module);
  const auto is_control = [](char c) {
    return static_cast<unsigned char>(c) < 0x20;
  };
  EXPECT_EQ(std::count_if(json.begin(), json.end(), is_control), 0) << json;
  EXPECT_NE(json.find("\"\\u001b[31m\\r\\u0000\x7f\""), std::string::npos)
      << json;
}

TEST(ToJson, RealCompileNamesItsKernelAndWarnings) {
  auto module = CompileCuda("unpinned", test_kernels::kUnpinnedWgmmaKernel,
                            CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string json = ToJson(*module);
  EXPECT_TRUE(
      Contains(json, "\"kernels\":[{\"name\":\"unpinned\",\"registers\":"));
  EXPECT_TRUE(Contains(json, "\"kind\":\"injected_wait\",\"code\":\"C7517\""));
  EXPECT_TRUE(
      Contains(json, "\"kind\":\"wgmma_serialized\",\"code\":\"C7511\""));
  EXPECT_TRUE(Contains(json, "\"warnings\":[],\"cache_warnings\":[]}"));
}

// ---- SASS ----

CompiledModule ModuleWithCubin() {
  CompiledModule module;
  module.name = "m";
  module.cubin = std::string(
      "\x7f"
      "ELF\0 fake cubin",
      16);
  return module;
}

// An empty directory to serve as the whole search path.
std::string EmptyPathDirectory() {
  std::string directory = FreshTestDirectory();
  mkdir(directory.c_str(), 0700);
  return directory;
}

// A stand-in tool that reports its arguments and the file's size.
void WriteFakeTool(const std::string& path) {
  std::ofstream(path)
      << "#!/bin/sh\n"
         "for last; do :; done\n"
         "echo \"$(basename \"$0\") args: $* size: $(wc -c < \"$last\")\"\n";
  chmod(path.c_str(), 0755);
}

TEST(DisassembleSass, NeitherToolFoundIsNotFoundNamingBoth) {
  auto sass = DisassembleSass(ModuleWithCubin(), EmptyPathDirectory());
  ASSERT_FALSE(sass.ok());
  EXPECT_EQ(sass.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(sass.status().message(), "nvdisasm"));
  EXPECT_TRUE(Contains(sass.status().message(), "cuobjdump"));
}

TEST(DisassembleSass, ThisMachineHasNoDisassembler) {
  // The CI image carries neither tool; where one exists this checks nothing.
  auto sass = DisassembleSass(ModuleWithCubin());
  if (!sass.ok()) {
    EXPECT_EQ(sass.status().code(), absl::StatusCode::kNotFound);
  }
}

TEST(DisassembleSass, AFailingToolIsReportedWithItsExitStatus) {
  const std::string directory = EmptyPathDirectory();
  const std::string tool = directory + "/nvdisasm";
  std::ofstream(tool) << "#!/bin/sh\necho 'bad cubin' >&2\nexit 3\n";
  chmod(tool.c_str(), 0755);
  auto sass = DisassembleSass(ModuleWithCubin(), directory);
  ASSERT_FALSE(sass.ok());
  EXPECT_TRUE(Contains(sass.status().message(), "failed (exit status 3)"))
      << sass.status();
}

TEST(DisassembleSass, PrefersNvdisasmAndPassesTheCubinFile) {
  const std::string directory = EmptyPathDirectory();
  WriteFakeTool(directory + "/nvdisasm");
  WriteFakeTool(directory + "/cuobjdump");
  auto sass = DisassembleSass(ModuleWithCubin(), "/nonexistent:" + directory);
  ASSERT_TRUE(sass.ok()) << sass.status();
  EXPECT_TRUE(Contains(*sass, "nvdisasm args: "));
  EXPECT_TRUE(Contains(*sass, ".cubin size: 16"));
}

TEST(DisassembleSass, FallsBackToCuobjdumpSass) {
  const std::string directory = EmptyPathDirectory();
  WriteFakeTool(directory + "/cuobjdump");
  auto sass = DisassembleSass(ModuleWithCubin(), directory);
  ASSERT_TRUE(sass.ok()) << sass.status();
  EXPECT_TRUE(Contains(*sass, "cuobjdump args: -sass "));
}

TEST(DisassembleSass, FailingToolReturnsItsOutput) {
  const std::string directory = EmptyPathDirectory();
  std::ofstream(directory + "/nvdisasm")
      << "#!/bin/sh\necho 'bad cubin' >&2\nexit 3\n";
  chmod((directory + "/nvdisasm").c_str(), 0755);
  auto sass = DisassembleSass(ModuleWithCubin(), directory);
  ASSERT_FALSE(sass.ok());
  EXPECT_TRUE(Contains(sass.status().message(), "bad cubin"));
}

// PATH entries such as ".", "bin" or "" name the current folder, whatever
// it holds: only absolute folders are searched.
TEST(DisassembleSass, SkipsTheRelativeFoldersOfThePath) {
  const std::string directory = EmptyPathDirectory();
  ASSERT_EQ(mkdir((directory + "/bin").c_str(), 0700), 0);
  WriteFakeTool(directory + "/nvdisasm");
  WriteFakeTool(directory + "/bin/cuobjdump");
  char caller[4096];
  ASSERT_NE(getcwd(caller, sizeof(caller)), nullptr);
  ASSERT_EQ(chdir(directory.c_str()), 0);
  const std::string empty = FreshTestDirectory("empty");
  ASSERT_EQ(mkdir(empty.c_str(), 0700), 0);
  auto sass = DisassembleSass(ModuleWithCubin(), ".:bin::./bin:" + empty);
  ASSERT_EQ(chdir(caller), 0);
  EXPECT_EQ(sass.status().code(), absl::StatusCode::kNotFound) << sass.status();
}

TEST(DisassembleSass, ModuleWithoutCubinIsAPreconditionError) {
  auto sass = DisassembleSass(CompiledModule{}, EmptyPathDirectory());
  EXPECT_EQ(sass.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ptxgen::compile
