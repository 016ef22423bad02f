// The ptxgen tool as its users run it: the built binary in a subprocess,
// checked by exit status, stdout and stderr. Every run gets
// PTXGEN_CACHE_DIR under $TEST_TMPDIR, so nothing touches ~/.cache; runs
// that only need GEMM kernels read them from the shared bundle
// (PtxgenWithKernels).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/support/ptxgen_process.h"
#include "tests/support/text.h"

namespace {

using ptxgen::testing_support::Contains;
using ptxgen::testing_support::ListDirectory;

using ptxgen::testing_support::NewTestDirectory;
using ptxgen::testing_support::ReadFile;
using ptxgen::testing_support::RunPtxgen;
using ptxgen::testing_support::StdoutTarget;
using Result = ptxgen::testing_support::ProcessResult;

// Runs ptxgen with `args`. PTXGEN_CACHE_DIR is a new directory for this run
// alone unless `overrides` names one.
Result Ptxgen(const std::vector<std::string>& args,
              std::map<std::string, std::string> overrides = {}) {
  static int runs = 0;
  overrides.emplace("PTXGEN_CACHE_DIR",
                    NewTestDirectory(absl::StrCat("cache", runs++)));
  return RunPtxgen(args, overrides);
}

// Ptxgen with the kernels the tests share readable (WithKernelBundle): for
// runs that need kernels but test neither compiling nor the cache.
Result PtxgenWithKernels(const std::vector<std::string>& args) {
  return Ptxgen(args, ptxgen::testing_support::WithKernelBundle({}));
}

// The environment of runs whose kernels may be compiled once for the whole
// suite: the bundle, and one writable cache folder they all share (the
// help's examples and the attention tests plan the same kernels).
const std::map<std::string, std::string>& SharedKernels() {
  static const auto* const environment = new std::map<std::string, std::string>(
      ptxgen::testing_support::WithKernelBundle(
          {{"PTXGEN_CACHE_DIR", NewTestDirectory("shared_kernels")}}));
  return *environment;
}

std::vector<std::string> Args(absl::string_view line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

// ---- Instruction text ----

TEST(PtxgenTest, WgmmaAsmIsTheInlineAsmStatement) {
  const Result run =
      Ptxgen(Args("wgmma --shape=m64n8k16 --a=f16 --b=f16 --d=f32 --scale-b=-1 "
                  "--trans-b"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  // Immediates in order: scale-a, scale-b, transpose-a, transpose-b.
  EXPECT_EQ(run.out, R"(asm volatile(
    "{\n"
    ".reg .pred p_scale_d;\n"
    "setp.ne.b32 p_scale_d, %6, 0;\n"
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, "
    "%5, p_scale_d, %7, %8, %9, %10;\n"
    "}\n"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
    : "l"(a), "l"(b), "r"(scale_d), "n"(1), "n"(-1), "n"(0), "n"(1)
    : "memory");
)");
}

TEST(PtxgenTest, PtxLinesDeclareTheirRegisters) {
  const Result run = Ptxgen(Args("wgmma --shape=m64n8k16 --emit=ptx-lines"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out,
            ".reg .b64 %rd<2>;\n"
            ".reg .f32 %f<4>;\n"
            ".reg .pred %p<1>;\n"
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
            "{%f0, %f1, %f2, %f3}, %rd0, %rd1, %p0, 1, 1, 0, 0;\n");
}

TEST(PtxgenTest, EmitPtxIsACompleteSm90aModule) {
  const Result run = Ptxgen(Args("wgmma --shape=m64n128k16 --emit=ptx"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, ".target sm_90a"));
  EXPECT_TRUE(Contains(run.out, ".visible .entry probe_wgmma("));
  EXPECT_TRUE(
      Contains(run.out, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"));
}

TEST(PtxgenTest, EmitCudaIsTheProbeKernel) {
  const Result run = Ptxgen(Args("tma --op=load --rank=3 --emit=cuda"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "extern \"C\" __global__"));
  EXPECT_TRUE(Contains(run.out, "probe_tma_load("));
  EXPECT_TRUE(Contains(run.out, "cp.async.bulk.tensor.3d.shared::cluster"));
}

TEST(PtxgenTest, EveryFamilyPrintsItsInstruction) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wgmma-fence", "wgmma.fence.sync.aligned"},
      {"wgmma-commit", "wgmma.commit_group.sync.aligned"},
      {"wgmma-wait --pending=1", "wgmma.wait_group.sync.aligned"},
      {"tma --op=store --rank=5 --cache-hint",
       "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group.L2::cache_hint"},
      {"tma --op=wait --pending=2 --read", "cp.async.bulk.wait_group.read 2;"},
      {"mbarrier --op=expect-tx", "mbarrier.arrive.expect_tx.shared::cta.b64"},
      {"warp --op=setmaxnreg --dec --count=40",
       "setmaxnreg.dec.sync.aligned.u32 40;"},
      {"warp --op=stmatrix --matrices=2 --trans",
       "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r0], {%r1, %r2};"},
      {"convert --to=bf16 --pack", "cvt.rn.bf16x2.f32 %r0, %f0, %f1;"},
      {"warp --op=flag-acquire", "ld.acquire.gpu.global.b32 %r0, [%rd0];"},
  };
  for (const auto& [args, instruction] : cases) {
    const Result run = Ptxgen(Args(absl::StrCat(args, " --emit=ptx-lines")));
    EXPECT_EQ(run.status, 0) << args << ": " << run.err;
    EXPECT_TRUE(Contains(run.out, instruction)) << args;
  }
}

// ---- Refused requests: exit 1, the rule on stderr ----

TEST(PtxgenTest, IllegalRequestsExitOneNamingTheRule) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wgmma --shape=m64n120k32 --a=s8 --b=s8 --d=s32",
       "wgmma: N=120 is not legal for s8 inputs"},
      {"wgmma --shape=m64n64k16 --a=bf16 --b=bf16 --d=f16",
       "wgmma: bf16 inputs need an f32 accumulator, not f16"},
      {"wgmma --shape=m64n64k32 --a=e4m3 --b=e4m3 --d=f32 --trans-b",
       "wgmma: transpose exists for f16/bf16 inputs only, not e4m3"},
      {"wgmma --shape=m64n64k32 --a=f16", "wgmma: K=32 is not legal for f16"},
      {"wgmma --shape=m128n64k16", "wgmma: M=128 is not legal"},
      {"warp --op=setmaxnreg --inc --count=30",
       "setmaxnreg: 30 registers is not legal"},
      {"tma --op=load --rank=6", "tma: a 6-D tensor copy is not legal"},
      {"descriptor --type=e4m3 --major=mn",
       "shared tile 128x64 e4m3 MN-major 128B: only f16/bf16 tiles may be "
       "MN-major"},
      {"gemm --m=64 --n=64 --k=64 --dtype=e4m3 --b-major=n --emit=json",
       "GEMM: MN-major operands need f16 or bf16 inputs"},
      {"gemm --m=64 --n=64 --k=64 --dtype=f16 --b-dtype=e5m2 --emit=json",
       "GEMM: A and B differ in type only as e4m3 with e5m2"},
      {"gemm --m=64 --n=64 --k=64 --scaling=tensor --emit=json",
       "GEMM: per-tensor or block scales and fast accumulation are for fp8 "
       "inputs, "
       "not f16"},
      {"gemm --m=64 --n=64 --k=40 --dtype=e4m3 --emit=json",
       "GEMM: k=40 gives packed rows of a of 40 bytes"},
  };
  for (const auto& [args, message] : cases) {
    const Result run = Ptxgen(Args(args));
    EXPECT_EQ(run.status, 1) << args;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_TRUE(Contains(run.err, absl::StrCat("ptxgen: ", message)));
  }
}

TEST(PtxgenTest, CompiledViewsRefuseIllegalRequestsBeforeCompiling) {
  const Result run =
      Ptxgen(Args("wgmma --shape=m64n120k32 --a=s8 --d=s32 "
                  "--emit=json"));
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "ptxgen: wgmma: N=120 is not legal for s8 inputs (legal N: 8, 16, "
            "24, 32, then 48..256 step 16)\n");
}

// ---- Usage errors: exit 2 ----

TEST(PtxgenTest, UsageErrorsExitTwoNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wgmma --shape=m64n64k16 --bogus", "unknown flag --bogus (accepted"},
      {"wgmma --shape=m64n64k16 --emit=xml",
       "--emit=xml is not accepted (accepted values: asm, ptx-lines, cuda, "
       "ptx, sass, resources, json)"},
      {"wgmma --shape=m64n64k16 --a=f8", "--a=f8 is not accepted"},
      {"wgmma", "--shape is required"},
      {"wgmma --shape=64x64", "--shape=64x64 is not of the form m64nNkK"},
      {"wgmma --shape=m64n64k16 --trans-a=1", "--trans-a is a switch"},
      {"wgmma --shape=m64n64k16 --scale-a=minus", "--scale-a takes an integer"},
      {"tma --op=store --multicast",
       "--multicast does not apply to --op=store (only to --op=load)"},
      {"tma --op=upload", "--op=upload is not accepted"},
      {"warp --op=setmaxnreg --count=40", "exactly one of --inc and --dec"},
      {"descriptor --decode=0xZZ", "--decode=0xZZ is not a 64-bit hex value"},
      {"descriptor --decode=12", "--decode=12 is not a 64-bit hex value"},
      {"descriptor --decode=0x1 --rows=64", "--rows does not apply"},
      {"frobnicate", "unknown subcommand 'frobnicate'"},
      {"gemm --m=64 --n=64 --k=64 --dtype=tf32 --run",
       "--run compares f16 and bf16 GEMMs with cuBLAS; tf32 GEMMs are "
       "compared with cuBLASLt by gemm_bench --dtype=tf32"},
      {"gemm --m=64 --n=64 --k=64 --scaling=per-row",
       "--scaling=per-row is not accepted"},
      {"gemm --m=64 --n=64 --k=64 --dtype=e4m3 --scaling=NONE",
       "--scaling=NONE is not accepted (accepted values: none, tensor, "
       "block)"},
  };
  for (const auto& [args, message] : cases) {
    const Result run = Ptxgen(Args(args));
    EXPECT_EQ(run.status, 2) << args;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_TRUE(Contains(run.err, message)) << args;
  }
}

TEST(PtxgenTest, NoArgumentsPrintTheHelpToStderrAndExitTwo) {
  const Result run = Ptxgen({});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, Ptxgen({"--help"}).out);
}

// ---- Help ----

void ExpectLinesFitEightyColumns(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    EXPECT_LT(line.size(), 80u) << line;
  }
}

constexpr const char* kSubcommands[] = {
    "wgmma",      "wgmma-fence",  "wgmma-commit", "wgmma-wait",
    "descriptor", "tma",          "mbarrier",     "warp",
    "convert",    "gemm",         "precompile",   "attention",
    "cache list", "cache verify", "cache prune",  "cache clear"};

TEST(PtxgenTest, HelpAndVersionTakeNothingAfterThem) {
  for (const char* first : {"--help", "--version"}) {
    const Result run = Ptxgen({first, "--bogus"});
    EXPECT_EQ(run.status, 2) << first;
    EXPECT_EQ(run.out, "") << first;
    EXPECT_TRUE(Contains(
        run.err,
        absl::StrCat(first, " takes nothing after it (got '--bogus')")))
        << run.err;
  }
}

TEST(PtxgenTest, HelpListsEverySubcommand) {
  const Result run = Ptxgen({"--help"});
  EXPECT_EQ(run.status, 0);
  ExpectLinesFitEightyColumns(run.out);
  for (const char* name : kSubcommands) {
    EXPECT_TRUE(Contains(run.out, absl::StrCat("\n  ", name, " ")));
    const Result help = Ptxgen({name, "--help"});
    EXPECT_EQ(help.status, 0) << name;
    EXPECT_TRUE(Contains(help.out, absl::StrCat("usage: ptxgen ", name)));
    ExpectLinesFitEightyColumns(help.out);
  }
}

TEST(PtxgenTest, HelpNamesEveryEnvironmentVariable) {
  const std::string help = Ptxgen({"--help"}).out;
  for (const char* variable :
       {"PTXGEN_CACHE_DIR", "PTXGEN_CACHE_DISABLE", "PTXGEN_CACHE_PATH",
        "PTXGEN_CACHE_MAX_BYTES", "PTXGEN_DUMP_DIR", "PTXGEN_LOG_LEVEL",
        "PTXGEN_PRINT_AUTOTUNING"}) {
    EXPECT_TRUE(Contains(help, absl::StrCat("\n  ", variable, " ")))
        << variable;
  }
}

// The examples in every --help must work as printed.
TEST(PtxgenTest, HelpExamplesRun) {
  for (const char* name : kSubcommands) {
    const std::string help = Ptxgen({name, "--help"}).out;
    const size_t examples = help.find("\nexamples:\n");
    ASSERT_NE(examples, std::string::npos) << name;
    for (absl::string_view line :
         absl::StrSplit(help.substr(examples + 11), '\n', absl::SkipEmpty())) {
      ASSERT_TRUE(absl::ConsumePrefix(&line, "  ptxgen ")) << line;
      const Result run = Ptxgen(Args(line), SharedKernels());
      EXPECT_EQ(run.status, 0) << line << ": " << run.err;
      EXPECT_NE(run.out, "") << line;
    }
  }
}

// fp8 and tf32 kernels from the command line: the form in the kernel's
// name and on stderr, wgmma of the input types in the source.
TEST(PtxgenTest, GemmTakesFp8AndTf32Inputs) {
  const Result mixed = PtxgenWithKernels(
      Args("gemm --m=256 --n=256 --k=256 --dtype=e4m3 --b-dtype=e5m2 "
           "--scaling=tensor --fast-accum --out-dtype=f32 --emit=cuda"));
  ASSERT_EQ(mixed.status, 0) << mixed.err;
  EXPECT_TRUE(Contains(
      mixed.err, "ptxgen: form e4m3xe5m2.kk->f32+tensor_scaled+fast_accum"))
      << mixed.err;
  EXPECT_TRUE(Contains(mixed.out, ".f32.e4m3.e5m2"));
  EXPECT_TRUE(Contains(mixed.out, "apply_tensor_scales(acc, tile_out);"));
  const Result promoted = PtxgenWithKernels(
      Args("gemm --m=8192 --n=8192 --k=8192 --dtype=e4m3 --emit=cuda"));
  ASSERT_EQ(promoted.status, 0) << promoted.err;
  EXPECT_TRUE(Contains(promoted.err, "ws 128x256x128 s3 c2 w0"));
  EXPECT_TRUE(Contains(promoted.out, "float stage_sums["));
  const Result tf32 = PtxgenWithKernels(
      Args("gemm --m=8192 --n=8192 --k=8192 --dtype=tf32 --emit=cuda"));
  ASSERT_EQ(tf32.status, 0) << tf32.err;
  EXPECT_TRUE(Contains(tf32.out, "m64n256k8.f32.tf32.tf32"));
}

// --schedule=pingpong: two consumers taking turns with whole 128x128 tiles,
// with --block another tile of that schedule.
TEST(PtxgenTest, GemmScheduleNamesTheConsumersSchedule) {
  const Result pingpong = Ptxgen(
      Args("gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --schedule=pingpong "
           "--emit=cuda"));
  ASSERT_EQ(pingpong.status, 0) << pingpong.err;
  EXPECT_TRUE(
      Contains(pingpong.err, "ptxgen: pp 128x128x64 s6 c2 w1 m1 tma e1"))
      << pingpong.err;
  EXPECT_TRUE(Contains(pingpong.out, "constexpr bool kPingPong = true;"));
  const Result narrow = Ptxgen(
      Args("gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --schedule=pingpong "
           "--block=64x128x64 --emit=cuda"));
  ASSERT_EQ(narrow.status, 0) << narrow.err;
  EXPECT_TRUE(Contains(narrow.err, "ptxgen: pp 64x128x64 s6")) << narrow.err;
  const Result cooperative =
      Ptxgen(Args("gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 "
                  "--schedule=cooperative --emit=cuda"));
  ASSERT_EQ(cooperative.status, 0) << cooperative.err;
  EXPECT_TRUE(Contains(cooperative.err, "ptxgen: ws 128x256x64"))
      << cooperative.err;
}

TEST(PtxgenTest, GemmBlockSetsTheTile) {
  const Result run =
      Ptxgen(Args("gemm --m=256 --n=256 --k=256 --schedule=v1 "
                  "--block=64x128x32 --emit=cuda"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "// v1 64x128x32, f16.kk->f16: f16 in"));
  const Result bad =
      Ptxgen(Args("gemm --m=256 --n=256 --k=256 --block=64x128"));
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(Contains(
      bad.err,
      "--block=64x128: '64x128' is not MxNxK (write MxNxK, e.g. 128x128x64)"))
      << bad.err;
  const Result huge =
      Ptxgen(Args("gemm --m=256 --n=256 --k=64 --block=99999999999x128x64"));
  EXPECT_TRUE(Contains(huge.err,
                       "tile '99999999999x128x64': 99999999999 is outside "
                       "-2147483648..2147483647"))
      << huge.err;
}

// ---- Hostile sizes: refused naming the rule, never wrapped into a request
// that prints as a legal one ----

struct Refusal {
  std::vector<std::string> args;
  int status;
  std::string message;
};

void ExpectRefused(const Refusal& refusal) {
  const Result run = Ptxgen(refusal.args);
  const std::string line = absl::StrJoin(refusal.args, " ");
  EXPECT_EQ(run.status, refusal.status) << line << ": " << run.err;
  EXPECT_EQ(run.out, "") << line;
  EXPECT_TRUE(Contains(run.err, refusal.message)) << line << ": " << run.err;
}

// 2147483640^2 tf32 elements are past 2^64 bytes: once printed as a tile of
// -1 columns with a valid-looking descriptor.
TEST(PtxgenTest, DescriptorRefusesExtentsWhoseBytesWouldWrap) {
  ExpectRefused(
      {Args("descriptor --type=tf32 --rows=2147483640 --k=2147483640 "
            "--swizzle=32B"),
       1,
       "the tile takes more than 262144 bytes (an extent of 2147483640 "
       "elements), but a matrix descriptor addresses only the first "
       "262144 bytes"});
}

// block_k = 64 - 2^31 makes rows of 128 bytes in 32-bit arithmetic.
TEST(PtxgenTest, GemmRefusesABlockKThatWouldWrapIntoALegalRow) {
  ExpectRefused(
      {{"gemm", "--m=64", "--n=64", "--k=64",
        "--config=ws 128x128x-2147483584 s3 c2 w1 m1 direct g16 tiles",
        "--emit=cuda"},
       1,
       "block_k must make a 32-, 64- or 128-byte row"});
}

// -4294967168 is 128 once narrowed to int: once run as v1 128x128x64.
TEST(PtxgenTest, SizesOutsideIntAreUsageErrorsNotNarrowed) {
  ExpectRefused(
      {Args("gemm --m=64 --n=64 --k=64 --block=-4294967168x128x64 "
            "--schedule=v1"),
       2,
       "--block=-4294967168x128x64: tile '-4294967168x128x64': -4294967168 "
       "is outside -2147483648..2147483647"});
  ExpectRefused({Args("descriptor --rows=-2147483649"), 2,
                 "--rows=-2147483649 is outside -2147483648..2147483647"});
  // Even past 64 bits a number is out of range, not malformed.
  ExpectRefused(
      {Args("descriptor --rows=99999999999999999999"), 2,
       "--rows=99999999999999999999 is outside -2147483648..2147483647"});
}

// Showing a kernel refuses what running it refuses (gemm::PlanGemmLaunch,
// which Gemm::Prepare runs), here the kernel's 32-bit tile count.
TEST(PtxgenTest, GemmViewsRefuseWhatRunningRefuses) {
  ExpectRefused(
      {Args("gemm --m=2147483647 --n=2147483647 --k=8 --emit=resources"), 1,
       "the kernel counts tiles in 32 bits"});
  ExpectRefused({{"gemm", "--m=64", "--n=63", "--k=64", "--emit=cuda",
                  "--config=ws 128x128x64 s4 c2 w1 m1 tma g8 persistent"},
                 1,
                 "stores D with TMA, which needs rows (and batches) of D on "
                 "16-byte boundaries"});
}

// v1 takes a grid row per tile column: 2^31-1 columns are 16777216 rows,
// beyond CUDA's 65535.
TEST(PtxgenTest, GemmViewsRefuseGridsBeyondCudaLimits) {
  ExpectRefused(
      {Args("gemm --m=128 --n=2147483647 --k=8 --schedule=v1 --emit=cuda"), 1,
       "a grid of 1 x 16777216 CTAs is beyond CUDA's 2147483647 x 65535"});
}

TEST(PtxgenTest, GemmRefusesFlagsThatWouldBeIgnored) {
  const std::pair<std::vector<std::string>, const char*> cases[] = {
      {{"--config=v1 128x128x64", "--block=64x128x32"},
       "--config names the whole configuration: drop --block or --config"},
      {{"--config=v1 128x128x64", "--schedule=v1"},
       "--config names the whole configuration: drop --schedule or --config"},
      {{"--config=v1 128x128x64", "--autotune"},
       "--config names the whole configuration: drop --autotune or --config"},
      {{"--autotune", "--block=64x128x32"},
       "--autotune chooses the tile: drop --block or --autotune"},
      {{"--run", "--emit=ptx"},
       "--run prints the check and the times, not a view: drop --emit or "
       "--run"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = Args("gemm --m=256 --n=256 --k=256");
    args.insert(args.end(), flags.begin(), flags.end());
    const Result run = Ptxgen(args);
    EXPECT_EQ(run.status, 2) << flags.back() << ": " << run.err;
    EXPECT_TRUE(Contains(run.err, message)) << flags.back() << ": " << run.err;
  }
}

// ---- Compiled views ----

TEST(PtxgenTest, JsonIsOneObjectWithTheExpectedKeys) {
  const Result run = Ptxgen(Args("wgmma --shape=m64n64k16 --emit=json"));
  EXPECT_EQ(run.status, 0) << run.err;
  ASSERT_TRUE(absl::StartsWith(run.out, "{")) << run.out;
  ASSERT_TRUE(absl::EndsWith(run.out, "}\n")) << run.out;
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1) << "more than one line";
  EXPECT_TRUE(absl::StartsWith(run.out, "{\"schema\":2,\"cache\":")) << run.out;
  for (const char* key :
       {"\"name\":\"probe_wgmma\"", "\"compile_ms\":", "\"kernels\":[",
        "\"registers\":", "\"static_shared_bytes\":", "\"spill_store_bytes\":",
        "\"spill_load_bytes\":", "\"warnings\":"}) {
    EXPECT_TRUE(Contains(run.out, key)) << key;
  }
}

// The kernel's own numbers beside ptxas's: a warp-specialized kernel has
// no static shared memory and some 200 KB of dynamic.
TEST(PtxgenTest, GemmJsonNamesTheProblemConfigThreadsAndDynamicSharedMemory) {
  const Result json = Ptxgen(
      {"gemm", "--m=256", "--n=512", "--k=64", "--b-major=n", "--bias=n",
       "--activation=relu", "--sms=132",
       "--config=ws 128x128x64 s4 c2 w1 m1 tma g8 persistent", "--emit=json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.find('\n'), json.out.size() - 1) << "more than one line";
  for (const char* field : {
           "\"static_shared_bytes\":0,",
           "\"problem\":{\"m\":256,\"n\":512,\"k\":64,\"batch\":1,\"dtype\":"
           "\"f16\","
           "\"out_dtype\":\"f16\",\"a_major\":\"k\",\"b_major\":\"n\",\"lda\":"
           "64,"
           "\"ldb\":512,",
           "\"alpha\":1,\"beta\":0,\"bias\":\"n\",\"bias_dtype\":\"f32\","
           "\"activation\":\"relu\"}",
           "\"config\":\"ws 128x128x64 s4 c2 w1 m1 tma g8 persistent\"",
           "\"sms\":132,\"grid\":{\"x\":",
           "\"threads_per_block\":384,\"dynamic_shared_bytes\":",
       }) {
    EXPECT_TRUE(Contains(json.out, field)) << field << "\n" << json.out;
  }
  const size_t at = json.out.find("\"dynamic_shared_bytes\":");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::atoi(json.out.c_str() + at + 23), 100 * 1024) << json.out;
}

TEST(PtxgenTest, SecondIdenticalJsonRunIsACacheHit) {
  const std::map<std::string, std::string> env = {
      {"PTXGEN_CACHE_DIR", NewTestDirectory("shared_cache")}};
  const Result first = Ptxgen(Args("warp --op=mapa --emit=json"), env);
  const Result second = Ptxgen(Args("warp --op=mapa --emit=json"), env);
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(second.status, 0) << second.err;
  EXPECT_TRUE(Contains(first.out, "{\"schema\":2,\"cache\":\"miss\""));
  EXPECT_TRUE(Contains(first.out, "\"source\":\"compiled\""));
  EXPECT_TRUE(Contains(second.out, "{\"schema\":2,\"cache\":\"hit\""));
  EXPECT_TRUE(Contains(second.out, "\"source\":\"disk_cache\""));
}

TEST(PtxgenTest, ResourcesReportRegistersAndSpills) {
  const Result run = Ptxgen(Args("convert --to=f16 --emit=resources"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "kernel probe_convert\n  registers "));
  EXPECT_TRUE(Contains(run.out, "  spill store bytes    0\n"));
  EXPECT_TRUE(Contains(run.out, "warnings: none\n"));
}

TEST(PtxgenTest, SassWithoutADisassemblerExitsOneNamingBoth) {
  const Result run = Ptxgen(Args("wgmma-fence --emit=sass"),
                            {{"PATH", NewTestDirectory("empty_path")}});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_TRUE(Contains(run.err, "nvdisasm"));
  EXPECT_TRUE(Contains(run.err, "cuobjdump"));
}

TEST(PtxgenTest, SassRunsNvdisasmFromPath) {
  const std::string bin = NewTestDirectory("bin");
  const std::string tool = bin + "/nvdisasm";
  std::ofstream(tool) << "#!/bin/sh\necho \"fake nvdisasm on $1\"\n";
  ASSERT_EQ(chmod(tool.c_str(), 0700), 0);
  const Result run = Ptxgen(Args("wgmma-fence --emit=sass"), {{"PATH", bin}});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "fake nvdisasm on "));
  EXPECT_TRUE(Contains(run.out, ".cubin"));
}

// ---- Descriptor ----

TEST(PtxgenTest, DescriptorOfTheStandardTile) {
  const Result run = Ptxgen(
      Args("descriptor --type=f16 --rows=128 --k=64 --major=k --swizzle=128B"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(run.out, "descriptor: 0x4000004000010000\n"));
  EXPECT_TRUE(Contains(run.out, "span_bytes: 128\n"));
  EXPECT_TRUE(Contains(run.out, "alignment_bytes: 1024\n"));
  EXPECT_TRUE(Contains(run.out, "tma_box: 64 x 128 elements"));
  EXPECT_TRUE(Contains(run.out, "stride_byte_offset: 1024 bytes"));
}

TEST(PtxgenTest, DescriptorOfATallTileNeedsSeveralBoxesPerColumn) {
  const Result run = Ptxgen(
      Args("descriptor --type=f16 --rows=512 --k=64 --major=k --swizzle=128B"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(Contains(
      run.out, "tma_box: 64 x 256 elements (inner x rows), 2 boxes per column"))
      << run.out;
}

TEST(PtxgenTest, DescriptorRefusesATileBeyondTheDescriptorsReach) {
  const Result run =
      Ptxgen(Args("descriptor --type=f16 --rows=64 --k=1073741824"));
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_TRUE(Contains(
      run.err, "a matrix descriptor addresses only the first 262144 bytes"))
      << run.err;
}

TEST(PtxgenTest, DescriptorDecodesARawValue) {
  const Result run = Ptxgen(Args("descriptor --decode=0x4000004000010000"));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out,
            "descriptor: 0x4000004000010000\n"
            "  start_address: 0 bytes (bits 0-13)\n"
            "  leading_byte_offset: 16 bytes (bits 16-29)\n"
            "  stride_byte_offset: 1024 bytes (bits 32-45)\n"
            "  base_offset: 0 (bits 49-51)\n"
            "  swizzle: 128B (bits 62-63)\n");
  const Result reserved =
      Ptxgen(Args("descriptor --decode=0x0000c00000000000"));
  EXPECT_TRUE(Contains(reserved.out, "reserved bits set: 0x0000c00000000000"));
}

// ---- Determinism ----

TEST(PtxgenTest, SameRequestSameBytes) {
  for (const char* args : {
           "wgmma --shape=m64n256k16 --a=bf16 --a-regs",
           "tma --op=load --rank=4 --emit=ptx-lines",
           "descriptor --type=bf16 --major=mn --swizzle=64B",
           "mbarrier --op=wait --emit=cuda",
           "wgmma --shape=m64n64k32 --a=e4m3 --emit=ptx",
           "warp --op=elect --emit=resources",
           "--help",
       }) {
    // Each run has its own cache: compiled views are compiled twice.
    const Result first = Ptxgen(Args(args));
    const Result second = Ptxgen(Args(args));
    EXPECT_EQ(first.status, 0) << args << ": " << first.err;
    EXPECT_EQ(first.out, second.out) << args;
    EXPECT_NE(first.out, "") << args;
  }
}

// ---- Output that cannot be written: exit 1, the reason on stderr ----

// Runs ptxgen with its stdout on `device`, or closed when `device` is empty
// (the shell's >&-); stderr is captured.
Result PtxgenWritingTo(const std::string& device,
                       const std::vector<std::string>& args) {
  StdoutTarget target;
  target.kind = device.empty() ? StdoutTarget::Kind::kClosed
                               : StdoutTarget::Kind::kDevice;
  target.device = device;
  return RunPtxgen(
      args,
      ptxgen::testing_support::WithKernelBundle(
          {{"PTXGEN_CACHE_DIR", NewTestDirectory("stdout_cache")}}),
      target);
}

// Long output fails while it is written, short output only when flushed.
constexpr const char* kOutputs[] = {
    "gemm --m=64 --n=64 --k=64 --emit=ptx",
    "--version",
    "wgmma-fence",
};

TEST(PtxgenTest, AFullDiskExitsOneSayingSo) {
  for (const char* args : kOutputs) {
    const Result run = PtxgenWritingTo("/dev/full", Args(args));
    EXPECT_EQ(run.status, 1) << args;
    EXPECT_TRUE(Contains(
        run.err, "ptxgen: cannot write the output: No space left on device\n"))
        << args;
  }
}

TEST(PtxgenTest, AClosedStdoutExitsOneSayingSo) {
  for (const char* args : kOutputs) {
    const Result run = PtxgenWritingTo("", Args(args));
    EXPECT_EQ(run.status, 1) << args;
    EXPECT_TRUE(Contains(
        run.err, "ptxgen: cannot write the output: Bad file descriptor\n"))
        << args;
  }
}

// ---- Escape sequences on the command line reach stderr escaped ----

TEST(PtxgenTest, MessagesShowControlBytesEscaped) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"\x1b[31mfrobnicate"},
           {"wgmma", "--shape=m64n64k16", "--bogus\x1b[31m"},
           {"wgmma", "--shape=\x1b[31m"},
           {"wgmma", "--shape=m64n64k16", "--emit=\x1b[31m"}}) {
    const Result run = Ptxgen(args);
    EXPECT_EQ(run.status, 2) << args.back();
    EXPECT_TRUE(Contains(run.err, "\\x1b[31m")) << args.back();
    EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
  }
}

// ---- The general GEMM problem: majors, leading dimensions, batches,
// alpha/beta, bias, activation, output type, --sms ----

constexpr char kGemm256[] = "gemm --m=256 --n=256 --k=256 ";

TEST(PtxgenTest, GemmGeneralFlagsRefuseBadValuesNamingTheFlag) {
  const std::pair<const char*, const char*> cases[] = {
      {"--a-major=n", "--a-major=n is not accepted (accepted values: k, m)"},
      {"--b-major=m", "--b-major=m is not accepted (accepted values: k, n)"},
      {"--lda=wide", "--lda takes an integer, not 'wide'"},
      {"--ldb=", "--ldb needs a value"},
      {"--ldd=-8", "--ldd=-8 is negative: give 0 (packed)"},
      {"--batch=two", "--batch takes an integer, not 'two'"},
      {"--alpha=half", "--alpha takes a number, not 'half'"},
      {"--alpha=inf",
       "--alpha=inf is not a finite float: alpha must be finite"},
      {"--beta=nan", "--beta=nan is not a finite float: beta must be finite"},
      {"--beta=-1e39", "--beta=-1e39 is not a finite float"},
      // A nonzero value f32 rounds to 0 would silently zero the product.
      {"--alpha=1e-50",
       "--alpha=1e-50 underflows f32: a nonzero alpha must not round to 0"},
      {"--beta=+1e-46",
       "--beta=+1e-46 underflows f32: a nonzero beta must not round to 0"},
      {"--bias=k", "--bias=k is not accepted (accepted values: none, m, n)"},
      {"--bias=n --bias-dtype=e4m3",
       "--bias-dtype=e4m3 is not accepted (accepted values: f16, bf16, f32)"},
      {"--activation=tanh",
       "--activation=tanh is not accepted (accepted values: none, relu, gelu, "
       "gelu_tanh, silu)"},
      {"--out-dtype=u8",
       "--out-dtype=u8 is not accepted (accepted values: f16, "
       "bf16, f32, e4m3, e5m2, s8, s32)"},
      {"--sms=0", "--sms=0 is outside 1..1024"},
      {"--sms=1025", "--sms=1025 is outside 1..1024"},
      // Flags that would change nothing.
      {"--ldc=512",
       "--ldc is C's leading dimension, and C is read only with "
       "--beta other than 0"},
      {"--beta=0 --ldc=512", "--ldc is C's leading dimension"},
      {"--bias-dtype=f16",
       "--bias-dtype is the bias vector's type, and there "
       "is none without --bias=m or --bias=n"},
      // --run checks only the plain problem against cuBLAS.
      {"--run --b-major=n --bias=n --alpha=2",
       "--run compares only the plain problem with cuBLAS"},
  };
  for (const auto& [flags, message] : cases) {
    const Result run = Ptxgen(Args(absl::StrCat(kGemm256, flags)));
    EXPECT_EQ(run.status, 2) << flags << ": " << run.err;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_TRUE(Contains(run.err, message)) << flags << ": " << run.err;
  }
  const Result general = Ptxgen(
      Args(absl::StrCat(kGemm256, "--run --b-major=n --bias=n --alpha=2")));
  EXPECT_TRUE(Contains(general.err,
                       "not one made general by --b-major=n --alpha=2 "
                       "--bias=n: drop those flags"))
      << general.err;
}

// The plain problem spelled out flag by flag is the plain problem: the same
// kernel, no form line, and --run takes it (here without a GPU it fails
// later, not as a usage error).
TEST(PtxgenTest, GemmPlainValuesSpelledOutAreThePlainProblem) {
  const Result plain =
      PtxgenWithKernels(Args(absl::StrCat(kGemm256, "--sms=132")));
  const Result spelled = PtxgenWithKernels(Args(absl::StrCat(
      kGemm256,
      "--sms=132 --a-major=k --b-major=k --lda=256 --ldb=0 --ldd=256 "
      "--batch=1 --alpha=1.0 --beta=0 --bias=none --activation=none "
      "--out-dtype=f16")));
  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(spelled.status, 0) << spelled.err;
  EXPECT_EQ(plain.out, spelled.out);
  EXPECT_EQ(plain.err, spelled.err);
  EXPECT_FALSE(Contains(spelled.err, "form ")) << spelled.err;
  // --sms answers the question the GPU would: no note that there is none.
  EXPECT_FALSE(Contains(spelled.err, "no GPU")) << spelled.err;
  const Result run = PtxgenWithKernels(
      Args(absl::StrCat(kGemm256, "--lda=256 --alpha=1 --run")));
  EXPECT_NE(run.status, 2) << run.err;
  EXPECT_FALSE(Contains(run.err, "--run compares only")) << run.err;
}

// Every "spill ... bytes" line of a resources view says 0 (a view may hold
// several kernels).
void ExpectNoSpills(const std::string& request, const std::string& view) {
  int kernels = 0;
  for (absl::string_view line : absl::StrSplit(view, '\n')) {
    if (!absl::StartsWith(line, "  spill ")) continue;
    ++kernels;
    EXPECT_TRUE(absl::EndsWith(line, " 0")) << request << ": " << line;
  }
  EXPECT_GT(kernels, 0) << request << ":\n" << view;
}

// General forms generate, pass the library's rules and compile (NVRTC and
// ptxas, no GPU) without spilling.
TEST(PtxgenTest, GemmGeneralFormsCompileWithoutSpills) {
  for (const char* flags : {
           "--a-major=m",
           "--b-major=n",
           "--a-major=m --b-major=n --dtype=bf16",
           "--bias=n --activation=gelu --out-dtype=f32",
           "--beta=0.5 --ldc=264 --bias=m --bias-dtype=f16 --activation=silu",
           "--batch=3 --lda=264 --alpha=-0.25",
       }) {
    const std::string request =
        absl::StrCat(kGemm256, flags, " --emit=resources");
    const Result run = PtxgenWithKernels(Args(request));
    EXPECT_EQ(run.status, 0) << request << ": " << run.err;
    EXPECT_TRUE(Contains(run.out, "kernel ")) << request << ": " << run.out;
    ExpectNoSpills(request, run.out);
    EXPECT_TRUE(Contains(run.err, "ptxgen: form "))
        << request << ": " << run.err;
  }
}

// What the command line gets right but the library refuses (gemm::
// ValidateProblem and the configuration's rules): exit 1, naming the rule.
TEST(PtxgenTest, GemmGeneralProblemsTheLibraryRefusesExitOne) {
  const std::pair<const char*, const char*> cases[] = {
      {"--lda=200", "lda=200"},              // shorter than a row of 256
      {"--a-major=m --lda=100", "lda=100"},  // A [k,m]: a row holds m = 256
      {"--b-major=n --ldb=260", "ldb=260"},  // 520 bytes: rows off 16 bytes
      {"--ldd=255", "ldd=255"},
      {"--beta=1 --ldc=128", "ldc=128"},
      {"--batch=0", "batch=0"},
      {"--batch=65536", "batch=65536"},
  };
  for (const auto& [flags, name] : cases) {
    const Result run =
        Ptxgen(Args(absl::StrCat(kGemm256, flags, " --emit=cuda")));
    EXPECT_EQ(run.status, 1) << flags << ": " << run.err;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_TRUE(Contains(run.err, name)) << flags << ": " << run.err;
  }
}

// ---- precompile, cache, the environment of the library ----

// A bundle made without a GPU is what a later plan finds: a hit from the
// read-only folder, nothing compiled, nothing written to the writable one.
TEST(PtxgenTest, PrecompiledBundleIsHitByALaterPlan) {
  const std::string bundle = NewTestDirectory("bundle") + "/kernels";
  const Result made = Ptxgen(Args(absl::StrCat(
      "precompile --shapes=256x256x64,512x256x128 --dtype=bf16 --sms=66 --out=",
      bundle)));
  ASSERT_EQ(made.status, 0) << made.err;
  EXPECT_EQ(made.err, "");
  EXPECT_EQ(std::count(made.out.begin(), made.out.end(), '\n'), 3) << made.out;
  EXPECT_TRUE(Contains(made.out, "256x256x64  ptxgen_gemm_bf16_")) << made.out;
  EXPECT_TRUE(Contains(made.out, "  compiled (")) << made.out;
  EXPECT_TRUE(Contains(made.out, absl::StrCat("in ", bundle, "\n")))
      << made.out;

  const Result again = Ptxgen(Args(absl::StrCat(
      "precompile --shapes=256x256x64 --dtype=bf16 --sms=66 --out=", bundle)));
  EXPECT_TRUE(Contains(again.out, "  already there (")) << again.out;

  const std::string writable = NewTestDirectory("writable");
  const Result planned = Ptxgen(
      Args("gemm --m=512 --n=256 --k=128 --dtype=bf16 --sms=66 --emit=json"),
      {{"PTXGEN_CACHE_PATH", bundle}, {"PTXGEN_CACHE_DIR", writable}});
  ASSERT_EQ(planned.status, 0) << planned.err;
  EXPECT_TRUE(absl::StartsWith(planned.out, "{\"schema\":2,\"cache\":\"hit\""))
      << planned.out;
  EXPECT_TRUE(Contains(planned.out, "\"source\":\"disk_cache\""))
      << planned.out;
  EXPECT_FALSE(Contains(planned.err, "warning")) << planned.err;
  EXPECT_EQ(Ptxgen(Args("cache list"), {{"PTXGEN_CACHE_DIR", writable}}).out,
            absl::StrCat(writable,
                         " (writable): 0 entries, 0 bytes\ntotal: 0 "
                         "entries, 0 bytes\n"));
}

// A --problems file names general problems as `ptxgen gemm` does, a line
// each; the bundle then holds the kernels their plans need.
TEST(PtxgenTest, PrecompilesTheProblemsOfAFile) {
  const std::string folder = NewTestDirectory("problems");
  const std::string list = folder + "/problems.txt";
  std::ofstream(list)
      << "# decode and a fused layer\n"
      << "--m=16 --n=4096 --k=4096 --dtype=bf16\n"
      << "\n"
      << "  --m=256 --n=512 --k=64 --b-major=n --bias=n --activation=gelu\n";
  const Result made = Ptxgen(Args(absl::StrCat(
      "precompile --problems=", list, " --sms=66 --out=", folder, "/kernels")));
  ASSERT_EQ(made.status, 0) << made.err;
  EXPECT_EQ(std::count(made.out.begin(), made.out.end(), '\n'), 3) << made.out;
  EXPECT_TRUE(Contains(
      made.out,
      "16x4096x4096  ptxgen_gemm_bf16_kk_to_bf16_d_transposed_ws_64x16x64"))
      << made.out;
  EXPECT_TRUE(Contains(made.out,
                       "256x512x64 f16.km->f16+bias_n.f32+gelu  ptxgen_gemm_"))
      << made.out;

  std::ofstream(list) << "--m=16 --n=4096 --k=4096\n--m=16 --n=4096\n";
  const Result bad = Ptxgen(Args(absl::StrCat("precompile --problems=", list)));
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(Contains(bad.err, absl::StrCat(list, ":2: "))) << bad.err;
  EXPECT_TRUE(Contains(bad.err, "--k")) << bad.err;
  const Result both = Ptxgen(
      Args(absl::StrCat("precompile --shapes=256x256x64 --problems=", list)));
  EXPECT_EQ(both.status, 2);
  EXPECT_TRUE(Contains(both.err, "give --shapes or --problems (one of them)"))
      << both.err;
  const Result dtype = Ptxgen(
      Args(absl::StrCat("precompile --problems=", list, " --dtype=bf16")));
  EXPECT_EQ(dtype.status, 2);
  EXPECT_TRUE(Contains(dtype.err, "--dtype applies to --shapes")) << dtype.err;
}

// NVRTC flags are part of the cache key: a bundle precompiled with them
// serves plans made with the same flags, and only those. Flags that make
// ptxas serialize the wgmma are refused.
TEST(PtxgenTest, NvrtcFlagsReachTheCompileAndTheBundle) {
  const std::string bundle = NewTestDirectory("flagged") + "/kernels";
  const Result made = Ptxgen(Args(absl::StrCat(
      "precompile --shapes=256x256x64 --nvrtc-flags=-lineinfo --out=",
      bundle)));
  ASSERT_EQ(made.status, 0) << made.err;
  const std::map<std::string, std::string> environment = {
      {"PTXGEN_CACHE_PATH", bundle},
      {"PTXGEN_CACHE_DIR", NewTestDirectory("flagged_writable")}};
  const Result flagged = Ptxgen(
      Args("gemm --m=256 --n=256 --k=64 --nvrtc-flags=-lineinfo --emit=json"),
      environment);
  ASSERT_EQ(flagged.status, 0) << flagged.err;
  EXPECT_TRUE(Contains(flagged.out, "\"source\":\"disk_cache\""))
      << flagged.out;
  const Result plain =
      Ptxgen(Args("gemm --m=256 --n=256 --k=64 --emit=json"), environment);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_TRUE(Contains(plain.out, "\"source\":\"compiled\"")) << plain.out;
  const Result ptx = Ptxgen(
      Args("gemm --m=256 --n=256 --k=64 --nvrtc-flags=-lineinfo --emit=ptx"),
      environment);
  EXPECT_TRUE(Contains(ptx.out, ".loc")) << ptx.err;
  ExpectRefused({Args("gemm --m=256 --n=256 --k=64 --nvrtc-flags=-arch=sm_80"),
                 1, "flag '-arch=sm_80' names the architecture"});
  ExpectRefused({Args("gemm --m=256 --n=256 --k=64 --nvrtc-flags=-Xptxas=-O0"),
                 1, "ptxas serialized the kernel's wgmma"});
}

// Flags that make NVRTC write files of its own, or compile into no kernel,
// are refused by name before NVRTC runs: nothing is written, no JSON of no
// kernels printed, no bundle entry without a kernel made.
// --problems reads a regular file of at most 1 MiB: a FIFO would block, a
// device (/dev/zero) grow without end, a folder read as empty.
TEST(PtxgenTest, AProblemsFileIsARegularFileOfAtMost1MiB) {
  const std::string folder = NewTestDirectory("problems_limits");
  const std::string fifo = folder + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {folder, fifo, std::string("/dev/zero")}) {
    ExpectRefused({Args("precompile --problems=" + path), 2,
                   "--problems=" + path +
                       " is not a regular file (a folder, FIFO or device)"});
  }
  const std::string large = folder + "/large.txt";
  std::ofstream(large) << std::string(1024 * 1024 + 1, '#');
  ExpectRefused({Args("precompile --problems=" + large), 2,
                 "--problems=" + large +
                     " is larger than 1 MiB: a problems file is at most "
                     "1048576 bytes"});
}

// A value echoed in a message is cut: a line of 100000 bytes is quoted by
// its first 64 and its length.
TEST(PtxgenTest, LongValuesAreCutInMessages) {
  const std::string list = NewTestDirectory("long_value") + "/problems.txt";
  const std::string value(100000, 'x');
  std::ofstream(list) << "--m=16 --n=16 --k=16 --activation=" << value << "\n";
  const Result run = Ptxgen(Args("precompile --problems=" + list));
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(Contains(run.err, "--activation=" + std::string(64, 'x') +
                                    "... (100000 bytes) is not accepted"))
      << run.err.substr(0, 300);
  EXPECT_LT(run.err.size(), 1000u);
  const Result argument = Ptxgen(Args("gemm --m=" + std::string(5000, '9')));
  EXPECT_EQ(argument.status, 2);
  EXPECT_TRUE(Contains(argument.err, "--m=" + std::string(64, '9') +
                                         "... (5000 bytes) is outside"))
      << argument.err.substr(0, 300);
}

TEST(PtxgenTest, NvrtcFlagsThatWriteFilesOrYieldNoKernelAreRefused) {
  const std::string directory = NewTestDirectory("nvrtc_writes");
  const std::string timing = directory + "/timing.csv";
  ExpectRefused(
      {Args("gemm --m=128 --n=128 --k=128 --emit=json --nvrtc-flags=--time=" +
            timing),
       1, "flag '--time=" + timing + "' writes files"});
  ExpectRefused({Args("gemm --m=128 --n=128 --k=128 --emit=json "
                      "--nvrtc-flags=-fdevice-syntax-only"),
                 1, "flag '-fdevice-syntax-only' compiles into no kernel"});
  const std::string bundle = directory + "/bundle";
  ExpectRefused({Args("precompile --shapes=128x128x128 --nvrtc-flags=-dlto "
                      "--out=" +
                      bundle),
                 1, "flag '-dlto' compiles into no kernel"});
  struct stat status;
  EXPECT_NE(lstat(timing.c_str(), &status), 0) << timing;
  EXPECT_NE(lstat(bundle.c_str(), &status), 0) << bundle;
}

TEST(PtxgenTest, PrecompileRefusesABadShapeNamingIt) {
  const Result run = Ptxgen(Args("precompile --shapes=256x256x64,256x256"));
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(Contains(run.err, "--shapes: '256x256': ")) << run.err;
  const Result rule = Ptxgen(Args("precompile --shapes=256x256x60"));
  EXPECT_EQ(rule.status, 1);
  EXPECT_TRUE(Contains(rule.err, "precompile 256x256x60: ")) << rule.err;
}

TEST(PtxgenTest, CacheListVerifyPruneAndClear) {
  const std::map<std::string, std::string> env = {
      {"PTXGEN_CACHE_DIR", NewTestDirectory("maintained")}};
  const std::string folder = env.at("PTXGEN_CACHE_DIR");
  ASSERT_EQ(Ptxgen(Args("warp --op=mapa --emit=ptx"), env).status, 0);
  ASSERT_EQ(Ptxgen(Args("convert --to=f16 --emit=ptx"), env).status, 0);
  std::ofstream(folder + "/" + std::string(64, 'a') + ".kernel")
      << "not an entry";

  const Result list = Ptxgen(Args("cache list"), env);
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_TRUE(
      Contains(list.out, absl::StrCat(folder, " (writable): 3 entries, ")));
  EXPECT_TRUE(Contains(list.out, " bytes  last used ")) << list.out;
  EXPECT_TRUE(Contains(list.out, "total: 3 entries, ")) << list.out;

  const Result verify = Ptxgen(Args("cache verify"), env);
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_TRUE(Contains(verify.out, ".kernel  probe_warp_mapa\n")) << verify.out;
  EXPECT_TRUE(
      Contains(verify.out,
               absl::StrCat("  invalid  ", std::string(64, 'a'), ".kernel  ")))
      << verify.out;
  EXPECT_TRUE(Contains(verify.out, "3 entries: 2 valid, 1 invalid"))
      << verify.out;

  const Result pruned = Ptxgen(Args("cache prune"), env);
  EXPECT_EQ(pruned.status, 0) << pruned.err;
  EXPECT_TRUE(Contains(pruned.out, "removed 1 files, 12 bytes\n"))
      << pruned.out;
  const Result capped = Ptxgen(Args("cache prune --max-bytes=1"), env);
  EXPECT_TRUE(Contains(capped.out, "removed 2 files, ")) << capped.out;
  EXPECT_EQ(Ptxgen(Args("cache prune --max-bytes=lots"), env).status, 2);

  ASSERT_EQ(Ptxgen(Args("warp --op=mapa --emit=ptx"), env).status, 0);
  const Result cleared = Ptxgen(Args("cache clear"), env);
  EXPECT_TRUE(Contains(cleared.out, "removed 1 files, ")) << cleared.out;
  EXPECT_TRUE(
      Contains(Ptxgen(Args("cache list"), env).out, "total: 0 entries"));
}

TEST(PtxgenTest, CacheAloneNamesItsActions) {
  const Result run = Ptxgen(Args("cache"));
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(
      Contains(run.err, "'cache' needs one of: list, verify, prune, clear"))
      << run.err;
  EXPECT_EQ(Ptxgen(Args("cache shred")).status, 2);
}

// ---- the cache's folders, the user's files, the environment's values ----

// Makes `path` two hours old: past the age of any live writer's temporary.
void MakeStale(const std::string& path) {
  const struct timeval two_hours_ago[2] = {{time(nullptr) - 7200, 0},
                                           {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimes(path.c_str(), two_hours_ago), 0) << path;
}

// Only "<entry>.tmp.<16 hex digits>" is a temporary of ptxgen's: a write
// and `cache prune` leave thesis.tmp.tex alone, and prune lists what it
// removed.
TEST(PtxgenTest, TheCacheRemovesOnlyItsOwnTemporariesAndPruneListsThem) {
  const std::string folder = NewTestDirectory("own_temporaries");
  const std::string thesis = folder + "/thesis.tmp.tex";
  const std::string stale =
      folder + "/" + std::string(64, 'a') + ".kernel.tmp.00000000deadbeef";
  std::ofstream(thesis) << "precious";
  std::ofstream(stale) << "half";
  MakeStale(thesis);
  ASSERT_EQ(Ptxgen(Args("convert --to=f16 --emit=ptx"),
                   {{"PTXGEN_CACHE_DIR", folder}})
                .status,
            0);
  const Result pruned =
      Ptxgen(Args("cache prune"), {{"PTXGEN_CACHE_DIR", folder}});
  EXPECT_EQ(pruned.status, 0) << pruned.err;
  EXPECT_EQ(ReadFile(thesis), "precious");
  MakeStale(stale);
  const Result swept =
      Ptxgen(Args("cache prune"), {{"PTXGEN_CACHE_DIR", folder}});
  EXPECT_EQ(swept.out, absl::StrCat("removed ", stale,
                                    "  4 bytes\nremoved 1 files, 4 bytes\n"));
  EXPECT_EQ(ReadFile(thesis), "precious");
}

// A link to a missing folder, as --out or as PTXGEN_CACHE_DIR, is refused
// by name: never a success that wrote nothing, never a silent miss.
TEST(PtxgenTest, ALinkToAMissingFolderIsRefusedByName) {
  const std::string root = NewTestDirectory("dangling");
  const std::string link = root + "/bundle";
  ASSERT_EQ(symlink((root + "/missing").c_str(), link.c_str()), 0);
  const std::string rule = link + " is a symbolic link to a missing folder";
  const Result precompiled = Ptxgen(
      Args(absl::StrCat("precompile --shapes=128x128x128 --out=", link)));
  EXPECT_EQ(precompiled.status, 1);
  EXPECT_EQ(precompiled.out, "");
  EXPECT_TRUE(Contains(precompiled.err, rule)) << precompiled.err;

  const std::map<std::string, std::string> env = {{"PTXGEN_CACHE_DIR", link}};
  const Result looked_up = Ptxgen(Args("convert --to=f16 --emit=ptx"), env);
  EXPECT_EQ(looked_up.status, 0) << looked_up.err;
  EXPECT_TRUE(
      Contains(looked_up.err, "ptxgen: warning: kernel cache folder not used"))
      << looked_up.err;
  EXPECT_TRUE(Contains(looked_up.err, rule)) << looked_up.err;
  const Result cleared = Ptxgen(Args("cache clear"), env);
  EXPECT_EQ(cleared.status, 1);
  EXPECT_TRUE(Contains(cleared.err, rule)) << cleared.err;
  EXPECT_EQ(ListDirectory(root), std::vector<std::string>{"bundle"});
}

// `ptxgen cache` says what a lookup says about the environment.
TEST(PtxgenTest, CacheCommandsPrintTheEnvironmentsWarnings) {
  for (const char* action : {"list", "prune", "clear"}) {
    const Result run = Ptxgen(
        Args(absl::StrCat("cache ", action)),
        {{"PTXGEN_CACHE_MAX_BYTES", "100KB"}, {"PTXGEN_CACHE_PATH", "bundle"}});
    EXPECT_EQ(run.status, 0) << action << ": " << run.err;
    EXPECT_TRUE(Contains(run.err,
                         "ptxgen: warning: PTXGEN_CACHE_MAX_BYTES: '100KB' is "
                         "not a byte count"))
        << action << ": " << run.err;
    EXPECT_TRUE(Contains(run.err,
                         "ptxgen: warning: PTXGEN_CACHE_PATH='bundle' is not "
                         "an absolute path"))
        << action << ": " << run.err;
  }
}

// With PTXGEN_CACHE_DIR refused, $HOME/.cache/ptxgen stands in for lookups,
// but prune and clear remove nothing from a folder the user did not name.
TEST(PtxgenTest, PruneAndClearRefuseTheStandInForARefusedCacheDir) {
  const std::string home = NewTestDirectory("home");
  const std::string stand_in = home + "/.cache/ptxgen";
  ASSERT_EQ(Ptxgen(Args("convert --to=f16 --emit=ptx"),
                   {{"PTXGEN_CACHE_DIR", stand_in}})
                .status,
            0);
  const std::map<std::string, std::string> env = {
      {"HOME", home}, {"XDG_CACHE_HOME", ""}, {"PTXGEN_CACHE_DIR", "rel"}};
  for (const char* action : {"clear", "prune --max-bytes=1"}) {
    const Result run = Ptxgen(Args(absl::StrCat("cache ", action)), env);
    EXPECT_EQ(run.status, 1) << action;
    EXPECT_TRUE(Contains(run.err,
                         "ptxgen: warning: PTXGEN_CACHE_DIR='rel' is not an "
                         "absolute path"))
        << action << ": " << run.err;
    EXPECT_TRUE(Contains(run.err, absl::StrCat("PTXGEN_CACHE_DIR is set but "
                                               "refused (not an absolute "
                                               "path), so nothing is removed "
                                               "from ",
                                               stand_in)))
        << action << ": " << run.err;
  }
  EXPECT_EQ(ListDirectory(stand_in).size(), 1u);
}

// A newline in a value (a log level, a folder's name) is shown escaped: it
// cannot start a line that reads as ptxgen's own.
TEST(PtxgenTest, ANewlineInAValueCannotForgeALine) {
  const std::string forged = "\nptxgen: error: forged";
  const Result run = Ptxgen(Args("convert --to=f16 --emit=ptx"),
                            {{"PTXGEN_LOG_LEVEL", "info" + forged}});
  EXPECT_EQ(run.status, 0);
  EXPECT_TRUE(Contains(run.err, "'info\\x0aptxgen: error: forged'")) << run.err;
  EXPECT_FALSE(Contains(run.err, forged)) << run.err;

  const std::string folder = NewTestDirectory("listed") + "/cache" + forged;
  ASSERT_EQ(mkdir(folder.c_str(), 0700), 0);
  const Result list =
      Ptxgen(Args("cache list"), {{"PTXGEN_CACHE_DIR", folder}});
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_TRUE(Contains(list.out, "cache\\x0aptxgen: error: forged (writable)"))
      << list.out;
  EXPECT_FALSE(Contains(list.out, forged)) << list.out;

  // The loader's message quotes the path it could not load.
  const Result loader =
      Ptxgen(Args("gemm --m=128 --n=128 --k=128 --emit=resources"),
             {{"PTXGEN_LIBCUDA", "/tmp/x" + forged}});
  EXPECT_TRUE(Contains(loader.err, "/tmp/x\\x0aptxgen: error: forged"))
      << loader.err;
  EXPECT_FALSE(Contains(loader.err, forged)) << loader.err;
}

// A byte outside UTF-8 (0x9b: CSI on an 8-bit terminal) is shown escaped.
TEST(PtxgenTest, ABrokenUtf8ByteInAValueIsShownEscaped) {
  const std::string folder = NewTestDirectory("listed") +
                             "/cache\x9b"
                             "2J";
  ASSERT_EQ(mkdir(folder.c_str(), 0700), 0);
  const Result list =
      Ptxgen(Args("cache list"), {{"PTXGEN_CACHE_DIR", folder}});
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_TRUE(Contains(list.out, "cache\\x9b2J (writable)")) << list.out;
  EXPECT_EQ(list.out.find('\x9b'), std::string::npos) << list.out;
}

// A disassembler in the current folder is not run, whatever PATH says.
TEST(PtxgenTest, SassIgnoresRelativePathEntries) {
  const std::string work = NewTestDirectory("work");
  ASSERT_EQ(mkdir((work + "/bin").c_str(), 0700), 0);
  for (const std::string tool : {"/nvdisasm", "/bin/nvdisasm"}) {
    std::ofstream(work + tool) << "#!/bin/sh\necho \"ran $0\"\n";
    ASSERT_EQ(chmod((work + tool).c_str(), 0700), 0);
  }
  const Result run =
      RunPtxgen(Args("wgmma-fence --emit=sass"),
                {{"PATH", ".:bin::" + NewTestDirectory("empty")},
                 {"PTXGEN_CACHE_DIR", NewTestDirectory("cache")}},
                {}, work);
  EXPECT_EQ(run.status, 1) << run.out;
  EXPECT_FALSE(Contains(run.out, "ran ")) << run.out;
  EXPECT_TRUE(Contains(run.err, "neither nvdisasm nor cuobjdump")) << run.err;
}

TEST(PtxgenTest, LogLevelInfoSaysWhatWasCompiled) {
  const Result quiet = Ptxgen(Args("convert --to=f16 --emit=ptx"));
  EXPECT_EQ(quiet.err, "");
  const Result told = Ptxgen(Args("convert --to=f16 --emit=ptx"),
                             {{"PTXGEN_LOG_LEVEL", "info"}});
  EXPECT_EQ(told.status, 0);
  EXPECT_TRUE(absl::StartsWith(
      told.err, "ptxgen: info: kernel cache: compiled probe_convert in "))
      << told.err;
}

TEST(PtxgenTest, ABadLogLevelIsAWarningNamingTheAcceptedOnes) {
  // The relative dump folder makes the library say something.
  const Result run =
      Ptxgen(Args("convert --to=f16 --emit=ptx"),
             {{"PTXGEN_LOG_LEVEL", "loud"}, {"PTXGEN_DUMP_DIR", "dumps"}});
  EXPECT_EQ(run.status, 0);
  EXPECT_TRUE(
      Contains(run.err,
               "ptxgen: warning: PTXGEN_LOG_LEVEL: 'loud' is not a log level "
               "(accepted: error, warning, info, debug); using warning\n"))
      << run.err;
  EXPECT_TRUE(Contains(run.err,
                       "ptxgen: warning: PTXGEN_DUMP_DIR='dumps' is not an "
                       "absolute path"))
      << run.err;
}

TEST(PtxgenTest, DumpDirReceivesEachKernelsFiles) {
  const std::string dumps = NewTestDirectory("dumps") + "/d";
  const Result run =
      Ptxgen(Args("convert --to=f16 --emit=ptx"), {{"PTXGEN_DUMP_DIR", dumps}});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  std::vector<std::string> extensions;
  if (DIR* dir = opendir(dumps.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const absl::string_view name = entry->d_name;
      if (absl::StartsWith(name, "probe_convert.")) {
        extensions.emplace_back(name.substr(name.rfind('.')));
      }
    }
    closedir(dir);
  }
  std::sort(extensions.begin(), extensions.end());
  EXPECT_EQ(extensions,
            (std::vector<std::string>{".cu", ".json", ".log", ".ptx"}));
}

TEST(PtxgenTest, GemmHelpShowsTheGeneralFlagsAndTheCublasCall) {
  const Result help = Ptxgen(Args("gemm --help"));
  EXPECT_EQ(help.status, 0);
  for (const char* text : {
           "--a-major=k|m",
           "--b-major=k|n",
           "--lda=N",
           "--ldb=N",
           "--ldc=N",
           "--ldd=N",
           "--batch=N",
           "--alpha=X",
           "--beta=X",
           "--bias=none|m|n",
           "--bias-dtype=TYPE",
           "--activation=NAME",
           "--out-dtype=TYPE",
           "--sms=N",
           "cublasGemmEx(handle, transa, transb, n, m, k, &alpha, B, ldb, A, "
           "lda,",
           "  [m,k] --a-major=k   [n,k] --b-major=k   CUBLAS_OP_T   "
           "CUBLAS_OP_N\n",
           "  [m,k] --a-major=k   [k,n] --b-major=n   CUBLAS_OP_N   "
           "CUBLAS_OP_N\n",
           "  [k,m] --a-major=m   [n,k] --b-major=k   CUBLAS_OP_T   "
           "CUBLAS_OP_T\n",
           "  [k,m] --a-major=m   [k,n] --b-major=n   CUBLAS_OP_N   "
           "CUBLAS_OP_T\n",
           "CUBLASLT_EPILOGUE_BIAS adds n values",
           "CUBLASLT_EPILOGUE_GELU_BIAS is --bias=n\n--activation=gelu_tanh (",
       }) {
    EXPECT_TRUE(Contains(help.out, text)) << text;
  }
}

// ---- attention ----

// A valid problem the usage errors below add one flag to.
constexpr char kAttention[] =
    "attention --batch=2 --heads=8 --seq=512 --head-dim=64 ";

// What the command line gets wrong: exit 2 before anything is planned.
TEST(PtxgenTest, AttentionFlagsRefuseBadValuesNamingTheFlag) {
  const std::pair<const char*, const char*> cases[] = {
      {"--dtype=e4m3",
       "--dtype=e4m3 is not accepted (accepted values: f16, bf16)"},
      {"--layout=sbhd",
       "--layout=sbhd is not accepted (accepted values: bshd, bhsd)"},
      {"--causal=yes", "--causal is a switch and takes no value"},
      {"--kv-heads=0", "--kv-heads=0 names no heads"},
      {"--kv-heads=two", "--kv-heads takes an integer, not 'two'"},
      {"--seq-k=99999999999", "--seq-k=99999999999 is outside"},
      {"--scale=half", "--scale takes a number, not 'half'"},
      {"--scale=inf", "--scale=inf is not a finite float"},
      {"--scale=1e-50", "--scale=1e-50 underflows f32"},
      {"--sms=0", "--sms=0 is outside 1..1024"},
      {"--emit=asm", "--emit=asm is not accepted"},
      // Flags that would change nothing.
      {"--total-q=4096",
       "--total-q is the rows of variable-length sequences as allocated: "
       "give --varlen too"},
      {"--total-k=4096", "--total-k is the rows of variable-length"},
  };
  for (const auto& [flags, message] : cases) {
    const Result run = Ptxgen(Args(absl::StrCat(kAttention, flags)));
    EXPECT_EQ(run.status, 2) << flags << ": " << run.err;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_TRUE(Contains(run.err, message)) << flags << ": " << run.err;
  }
  ExpectRefused({Args("attention --batch=2 --heads=8 --seq=512"), 2,
                 "--head-dim is required"});
}

// What the command line gets right but the problem's rules refuse
// (attention::ValidateAttentionProblem): exit 1 naming the rule, before
// anything is generated.
TEST(PtxgenTest, AttentionProblemsTheLibraryRefusesExitOne) {
  const std::pair<const char*, const char*> cases[] = {
      {"--batch=2 --heads=8 --kv-heads=3 --seq=512 --head-dim=64",
       "attention: heads_q=8 must be a multiple of heads_kv=3"},
      {"--batch=2 --heads=8 --seq=512 --head-dim=72",
       "attention: head_dim=72 must be a multiple of 16 and at most 256"},
      {"--batch=2 --heads=8 --seq=512 --head-dim=512",
       "attention: head_dim=512 must be a multiple of 16"},
      {"--batch=0 --heads=8 --seq=512 --head-dim=64",
       "attention: batch=0 is outside 1..2147483647"},
      {"--batch=2 --heads=8 --seq=512 --seq-k=-1 --head-dim=64",
       "attention: seq_k=-1 is outside 1..2147483647"},
      {"--batch=2 --heads=8 --seq=512 --head-dim=64 --scale=-0.5",
       "attention: scale=-0.5 must be finite and positive"},
      {"--batch=2 --heads=8 --seq=512 --head-dim=64 --varlen --layout=bhsd",
       "attention: variable lengths store Q, K, V and O [total, heads, dim]"},
      {"--batch=2 --heads=8 --seq=512 --head-dim=64 --varlen --total-q=0",
       "attention: total_q=0 is outside"},
      // --total-q's default, --batch times --seq, past int32 offsets: in
      // the flags the user wrote, even where the product wraps.
      {"--batch=2 --heads=8 --seq=2147483647 --head-dim=64 --varlen",
       "--total-q's default, --batch x --seq = 2 x 2147483647, is more than "
       "2147483647 rows (int32 offsets): give --total-q"},
      {"--batch=2147483647 --heads=8 --seq=2147483647 --head-dim=64 "
       "--varlen",
       "--total-q's default, --batch x --seq = 2147483647 x 2147483647, is "
       "more than 2147483647 rows"},
      {"--batch=2 --heads=8 --seq=512 --seq-k=2147483647 --head-dim=64 "
       "--varlen --total-q=1024",
       "--total-k's default, --batch x --seq-k = 2 x 2147483647"},
      // The longest sequence must fit in the rows given.
      {"--batch=2 --heads=8 --seq=256 --head-dim=128 --varlen --total-q=100 "
       "--total-k=100",
       "attention: seq_q=256 (the longest sequence) is more than "
       "total_q=100"},
      // A scale the kernel's base-2 form makes infinite.
      {"--batch=1 --heads=1 --seq=128 --head-dim=64 --scale=3e38",
       "attention: scale=3e+38 is too large"},
  };
  for (const auto& [flags, message] : cases) {
    const Result run = Ptxgen(Args(absl::StrCat("attention ", flags)));
    EXPECT_EQ(run.status, 1) << flags << ": " << run.err;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_TRUE(Contains(run.err, absl::StrCat("ptxgen: ", message)))
        << flags << ": " << run.err;
  }
}

// The integer after "key": in a json view; -1 when there is none.
int64_t JsonInteger(const std::string& json, absl::string_view key) {
  const std::string field = absl::StrCat("\"", key, "\":");
  const size_t at = json.find(field);
  if (at == std::string::npos) return -1;
  return std::atoll(json.c_str() + at + field.size());
}

// The json view: the problem resolved (kv-heads, packed strides, the
// scale), the configuration stderr names, the launch. Kernels planned
// alike as the help's examples: a hit in SharedKernels().
TEST(PtxgenTest, AttentionJsonNamesTheProblemConfigAndLaunch) {
  const Result json =
      Ptxgen(Args("attention --batch=2 --heads=8 --kv-heads=2 --seq=512 "
                  "--head-dim=64 --emit=json"),
             SharedKernels());
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.find('\n'), json.out.size() - 1) << "more than one line";
  EXPECT_TRUE(absl::StartsWith(json.out, "{\"schema\":2,\"cache\":"));
  // bshd: Q [2, 512, 8, 64], K and V [2, 512, 2, 64].
  EXPECT_TRUE(Contains(
      json.out,
      "\"problem\":{\"batch\":2,\"heads\":8,\"kv_heads\":2,\"seq\":512,"
      "\"seq_k\":512,\"head_dim\":64,\"dtype\":\"bf16\",\"causal\":false,"
      "\"scale\":0.125,\"layout\":\"bshd\","
      "\"q_stride\":{\"batch\":262144,\"seq\":512,\"head\":64},"
      "\"k_stride\":{\"batch\":65536,\"seq\":128,\"head\":64},"
      "\"v_stride\":{\"batch\":65536,\"seq\":128,\"head\":64},"
      "\"o_stride\":{\"batch\":262144,\"seq\":512,\"head\":64},"
      "\"varlen\":false,\"total_q\":0,\"total_k\":0}"))
      << json.out;
  ASSERT_TRUE(absl::StartsWith(json.err, "ptxgen: bf16 d64")) << json.err;
  const std::string config(
      absl::StripSuffix(absl::StripPrefix(json.err, "ptxgen: "), "\n"));
  EXPECT_TRUE(Contains(json.out, absl::StrCat("\"config\":\"", config, "\"")))
      << json.out;
  EXPECT_TRUE(Contains(json.out, "\"sms\":132,")) << json.out;
  const int64_t block_m = JsonInteger(json.out, "block_m");
  ASSERT_GT(block_m, 0) << json.out;
  EXPECT_EQ(JsonInteger(json.out, "x"), (512 + block_m - 1) / block_m);
  EXPECT_EQ(JsonInteger(json.out, "y"), 8);
  EXPECT_EQ(JsonInteger(json.out, "z"), 2);
  EXPECT_GT(JsonInteger(json.out, "block_n"), 0) << json.out;
  EXPECT_GT(JsonInteger(json.out, "threads_per_block"), 128) << json.out;
  EXPECT_GT(JsonInteger(json.out, "dynamic_shared_bytes"), 0) << json.out;
}

// Variable lengths: no batch stride, the rows allocated by default room
// for every sequence at its longest, and a kernel of their own.
TEST(PtxgenTest, AttentionVariableLengthsAreTheirOwnKernel) {
  const Result json = Ptxgen(
      Args("attention --batch=4 --heads=8 --seq=512 --head-dim=64 --varlen "
           "--emit=json"),
      SharedKernels());
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_TRUE(Contains(json.err, "ptxgen: bf16 d64 varlen")) << json.err;
  EXPECT_TRUE(
      Contains(json.out, "\"q_stride\":{\"batch\":0,\"seq\":512,\"head\":64},"))
      << json.out;
  EXPECT_TRUE(
      Contains(json.out, "\"varlen\":true,\"total_q\":2048,\"total_k\":2048}"))
      << json.out;
}

// The views of one kernel: its source, its PTX for sm_90a, ptxas's report
// with no spills.
TEST(PtxgenTest, AttentionViewsShowOneCompiledKernel) {
  const std::string problem =
      "attention --batch=2 --heads=32 --seq=4096 --head-dim=128 --causal ";
  const Result cuda =
      Ptxgen(Args(absl::StrCat(problem, "--emit=cuda")), SharedKernels());
  ASSERT_EQ(cuda.status, 0) << cuda.err;
  EXPECT_TRUE(Contains(cuda.err, "ptxgen: bf16 d128 causal")) << cuda.err;
  EXPECT_TRUE(Contains(cuda.out, "__global__")) << cuda.out.substr(0, 2000);
  const Result ptx =
      Ptxgen(Args(absl::StrCat(problem, "--emit=ptx")), SharedKernels());
  ASSERT_EQ(ptx.status, 0) << ptx.err;
  EXPECT_TRUE(Contains(ptx.out, ".target sm_90a"));
  EXPECT_TRUE(Contains(ptx.out, ".visible .entry "));
  EXPECT_TRUE(Contains(ptx.out, "wgmma.mma_async"));
  const Result resources =
      Ptxgen(Args(absl::StrCat(problem, "--emit=resources")), SharedKernels());
  ASSERT_EQ(resources.status, 0) << resources.err;
  EXPECT_TRUE(Contains(resources.out, "\n  registers ")) << resources.out;
  EXPECT_TRUE(Contains(resources.out, "  spill store bytes    0\n"))
      << resources.out;
  EXPECT_TRUE(Contains(resources.out, "  spill load bytes     0\n"))
      << resources.out;
}

}  // namespace
