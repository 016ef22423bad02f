// A GEMM planned for a named device with no driver: the configuration, the
// grid, the generated and compiled kernel, and the rules that refuse a
// plan. The driver is hidden from this binary, so it proves the same on a
// GPU machine.
#include "ptxgen/gemm/plan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/driver.h"
#include "tests/kernels/kernel_bundle.h"
#include "tests/support/text.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;
using testing_support::Contains;
using testing_support::ReadFile;

// This run's writable kernel cache folder.
std::string CacheFolder() {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/kernel_cache");
}

// Read at the driver's first load, and by the default kernel cache at its
// first use: set before any test runs. The kernels the tests share come
// from the bundle (tests/kernels), the others are compiled into this run's
// folder; the command line below inherits both.
const bool kNoDriverBundledKernels =
    setenv(runtime::kDriverLibraryEnv, "/nonexistent/libcuda.so.1", 1) == 0 &&
    setenv("PTXGEN_CACHE_DIR", CacheFolder().c_str(), 1) == 0 &&
    setenv("PTXGEN_CACHE_PATH", testing_support::KernelBundle().c_str(), 1) ==
        0;

// The README's problems at the size of its command-line examples.
GemmProblem Plain() { return {4096, 4096, 4096, ScalarType::kF16}; }
GemmProblem Fused() {
  GemmProblem p{4096, 4096, 4096, ScalarType::kBF16};
  p.b_major = MajorOrder::kMN;
  p.output = ScalarType::kF32;
  p.bias = BiasAlong::kN;
  p.activation = Activation::kGelu;
  return p;
}

GemmTarget WithSms(int sm_count) {
  GemmTarget target = GemmTarget::H200();
  target.sm_count = sm_count;
  return target;
}

// What Prepare does before it loads anything, for both README problems on
// an H200 and on a 66-SM part.
TEST(PlanTest, PlansTheReadmesProblemsWithoutADriver) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  for (const GemmProblem& problem : {Plain(), Fused()}) {
    for (const int sms : {132, 66}) {
      const absl::StatusOr<GemmPlan> plan = PlanGemm(problem, WithSms(sms));
      ASSERT_TRUE(plan.ok()) << sms << " SMs: " << plan.status();
      const std::string what =
          absl::StrCat(gen::FormName(FormOf(problem)), " on ", sms, " SMs");
      EXPECT_EQ(plan->config, HeuristicConfig(problem, WithSms(sms))) << what;
      EXPECT_EQ(plan->resident_clusters, sms / plan->config.cluster_m) << what;
      EXPECT_LE(plan->grid.x,
                int64_t{plan->resident_clusters} * plan->config.cluster_m)
          << what;
      const absl::StatusOr<gen::GemmGrid> grid =
          PlanGemmLaunch(problem, plan->config, plan->resident_clusters);
      ASSERT_TRUE(grid.ok()) << what << ": " << grid.status();
      EXPECT_EQ(plan->grid.x, grid->x) << what;
      EXPECT_EQ(plan->grid.cluster_x, plan->config.cluster_m) << what;
      const absl::StatusOr<gen::GeneratedGemm> generated =
          gen::GenerateGemm(plan->config, FormOf(problem));
      ASSERT_TRUE(generated.ok()) << what << ": " << generated.status();
      EXPECT_TRUE(plan->generated.source == generated->source) << what;
      ASSERT_NE(plan->compiled, nullptr) << what;
      EXPECT_EQ(plan->compiled->options.arch, "sm_90a") << what;
      EXPECT_TRUE(Contains(plan->compiled->ptx, ".target sm_90a")) << what;
      EXPECT_TRUE(
          Contains(plan->compiled->ptx,
                   absl::StrCat(".entry ", plan->generated.kernel_name)))
          << what;
      EXPECT_FALSE(plan->compiled->cubin.empty()) << what;
      EXPECT_EQ(plan->problem.ldd, 4096) << what;  // resolved
    }
  }
  EXPECT_FALSE(runtime::Driver::Get().ok())
      << "the plans above needed no driver";
}

// The bundle holds what these tests plan under the keys they look up, or
// they would each compile it again without a word.
TEST(PlanTest, TheReadmesProblemsAreReadFromTheSharedBundle) {
  compile::CacheConfig config;
  config.directory = absl::StrCat(CacheFolder(), "/bundle_check");
  config.read_only_directories = {testing_support::KernelBundle()};
  compile::KernelCache cache(config);
  GemmOptions options;
  options.cache = &cache;
  for (const GemmProblem& problem : {Plain(), Fused()}) {
    const absl::StatusOr<GemmPlan> plan =
        PlanGemm(problem, GemmTarget::H200(), options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->compiled->source, compile::CacheSource::kDiskCache)
        << gen::FormName(FormOf(problem)) << " was compiled, not read from '"
        << config.read_only_directories[0] << "'";
    EXPECT_TRUE(plan->compiled->cache_warnings.empty())
        << plan->compiled->cache_warnings[0];
  }
}

TEST(PlanTest, AGivenConfigIsPlannedAsGiven) {
  GemmOptions options;
  options.config =
      *gen::ParseConfigName("ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent");
  const absl::StatusOr<GemmPlan> plan = PlanGemm(Plain(), WithSms(66), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->config, *options.config);
  // Stream-K takes every cluster the target holds: 33 pairs of SMs.
  EXPECT_EQ(plan->resident_clusters, 33);
  EXPECT_EQ(plan->grid.x, 66);
  EXPECT_EQ(plan->grid.cluster_x, 2);
}

void ExpectRefused(const absl::StatusOr<GemmPlan>& plan,
                   absl::string_view rule) {
  ASSERT_FALSE(plan.ok()) << "planned, though it breaks: " << rule;
  EXPECT_TRUE(Contains(plan.status().message(), rule));
}

TEST(PlanTest, RefusesTargetsTheKernelsAreNotFor) {
  GemmTarget ampere = GemmTarget::H200();
  ampere.arch = "sm_80";
  ExpectRefused(PlanGemm(Plain(), ampere),
                "GEMM target: arch 'sm_80' is not one the GEMM kernels are "
                "generated for: only sm_90a has wgmma");
  ExpectRefused(PlanGemm(Plain(), WithSms(0)),
                "GEMM target: sm_count=0 is outside 1..1024");
  ExpectRefused(PlanGemm(Plain(), WithSms(1025)),
                "sm_count=1025 is outside 1..1024");
  GemmTarget tiny = GemmTarget::H200();
  tiny.max_shared_bytes_per_block_optin = 16 * 1024;
  ExpectRefused(
      PlanGemm(Plain(), tiny),
      "GEMM target: max_shared_bytes_per_block_optin=16384 is below the "
      "49152 bytes every CUDA GPU gives a block");
  ExpectRefused(PlanGemm(Plain(), GemmTarget{}), "sm_count=0");
}

// A target with 100 KiB of shared memory per block holds no two stages of
// the H200's pick (128x256 tiles): the heuristic picks what it holds.
TEST(PlanTest, PicksWhatTheTargetCanHold) {
  GemmTarget small = GemmTarget::H200();
  small.max_shared_bytes_per_block_optin = 100 * 1024;
  const absl::StatusOr<GemmPlan> plan = PlanGemm(Plain(), small);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->config, HeuristicConfig(Plain(), small));
  EXPECT_FALSE(plan->config == HeuristicConfig(Plain(), GemmTarget::H200()));
  EXPECT_LE(plan->generated.shared_bytes, 100 * 1024);
}

// A given config the target cannot hold is refused in the target's words:
// gen generates any ring of up to 8 stages, whatever a device gives.
TEST(PlanTest, RefusesWhatTheTargetCannotHold) {
  GemmTarget small = GemmTarget::H200();
  small.max_shared_bytes_per_block_optin = 100 * 1024;
  GemmOptions h200_pick;
  h200_pick.config = HeuristicConfig(Plain(), GemmTarget::H200());
  ExpectRefused(PlanGemm(Plain(), small, h200_pick),
                "bytes of shared memory per block; the target "
                "gives at most 102400");
  GemmOptions deep;
  deep.config =
      *gen::ParseConfigName("ws 128x256x64 s4 c2 w1 m2 tma g8 persistent");
  ASSERT_TRUE(gen::ValidateGemmConfig(*deep.config, ScalarType::kF16).ok());
  ExpectRefused(PlanGemm(Plain(), GemmTarget::H200(), deep),
                "GEMM config 'ws 128x256x64 s4 c2 w1 m2 tma g8 persistent' "
                "needs 263296 bytes of shared memory per block; the target "
                "gives at most 232448 (max_shared_bytes_per_block_optin)");
  GemmOptions pair;
  pair.config =
      *gen::ParseConfigName("ws 128x256x64 s3 c2 w1 m2 tma g16 persistent");
  ExpectRefused(PlanGemm(Plain(), WithSms(1), pair),
                "launches clusters of 2 CTAs, one per SM; the target has 1 SM");
}

TEST(PlanTest, RefusesTheProblemsAndConfigsPrepareRefuses) {
  GemmProblem empty = Plain();
  empty.k = 0;
  ExpectRefused(PlanGemm(empty, GemmTarget::H200()),
                "GEMM: k=0 is outside 1..2147483647");
  GemmProblem odd = Plain();
  odd.k = 4100;
  ExpectRefused(PlanGemm(odd, GemmTarget::H200()), "k must be a multiple of 8");
  GemmOptions
      tma;  // the fused form's D is f32, computed by the direct epilogue
  tma.config =
      *gen::ParseConfigName("ws 128x256x64 s3 c2 w1 m1 tma g16 persistent");
  ExpectRefused(PlanGemm(Fused(), GemmTarget::H200(), tma),
                "TMA-store epilogue");
}

// Timing needs the device; a plan refuses rather than quietly taking the
// heuristic's pick instead of the autotuner's.
TEST(PlanTest, RefusesToAutotuneWithoutADevice) {
  GemmOptions options;
  options.selection = Selection::kAutotune;
  const absl::StatusOr<GemmPlan> plan =
      PlanGemm(Plain(), GemmTarget::H200(), options);
  EXPECT_TRUE(absl::IsFailedPrecondition(plan.status())) << plan.status();
  ExpectRefused(
      plan,
      "autotuning (Selection::kAutotune) times the candidates on the device");
  // A given config needs no timing.
  options.config = HeuristicConfig(Plain(), GemmTarget::H200());
  EXPECT_TRUE(PlanGemm(Plain(), GemmTarget::H200(), options).ok());
}

// A decode-sized problem: its narrow tile compiles in a fraction of the
// large kernels' time.
GemmProblem Decode() { return {16, 4096, 4096, ScalarType::kF16}; }

// -lineinfo puts .loc directives in the PTX; the flags are part of what the
// cache keys, so the flagged kernel is a compile of its own.
TEST(PlanTest, NvrtcFlagsReachTheKernelsCompile) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  const absl::StatusOr<GemmPlan> plain = PlanGemm(Decode(), GemmTarget::H200());
  ASSERT_TRUE(plain.ok()) << plain.status();
  GemmOptions options;
  options.nvrtc_flags = {"-lineinfo"};
  const absl::StatusOr<GemmPlan> flagged =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  EXPECT_EQ(flagged->compiled->options.flags,
            (std::vector<std::string>{"--minimal", "-lineinfo"}));
  EXPECT_TRUE(Contains(flagged->compiled->ptx, ".loc"));
  EXPECT_FALSE(Contains(plain->compiled->ptx, ".loc"));
  EXPECT_NE(flagged->compiled->cache_key, plain->compiled->cache_key);
  EXPECT_EQ(flagged->generated.source, plain->generated.source);
  // Two identities: planned again, each finds its own kernel.
  EXPECT_NE(flagged->kernel_identity, plain->kernel_identity);
  const absl::StatusOr<GemmPlan> plain_again =
      PlanGemm(Decode(), GemmTarget::H200());
  const absl::StatusOr<GemmPlan> flagged_again =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(plain_again.ok() && flagged_again.ok());
  EXPECT_EQ(plain_again->compiled->cache_key, plain->compiled->cache_key);
  EXPECT_EQ(flagged_again->compiled->cache_key, flagged->compiled->cache_key);
  EXPECT_EQ(flagged_again->compiled->source,
            compile::CacheSource::kMemoryCache);
}

// --minimal only drops declarations the kernels do not use: the CUBIN is
// the one a compile without it gives.
TEST(PlanTest, GemmKernelsCompileMinimalToTheSameCubin) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  const absl::StatusOr<GemmPlan> plan = PlanGemm(Decode(), GemmTarget::H200());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->compiled->options.flags,
            std::vector<std::string>{"--minimal"});
  compile::CompileOptions full;
  full.arch = runtime::kKernelArch;
  const absl::StatusOr<compile::CompiledModule> without = compile::CompileCuda(
      plan->generated.kernel_name, plan->generated.source, full);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->cubin == plan->compiled->cubin);
}

// ---- A kernel's identity ----

// A planned kernel is found again by its identity in the cache that
// compiled it: the warm plan is the cold one, its text generated and
// hashed once. Forgetting the cache's memory forgets the identities too.
TEST(PlanTest, AWarmPlanFindsItsKernelByIdentityWithoutGeneratingIt) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  compile::CacheConfig config;
  config.directory = absl::StrCat(CacheFolder(), "/identity");
  config.read_only_directories = {testing_support::KernelBundle()};
  compile::KernelCache cache(config);
  GemmOptions options;
  options.cache = &cache;
  const absl::StatusOr<GemmPlan> cold =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_EQ(cache.identity_lookups().missed, 1);
  const absl::StatusOr<GemmPlan> warm =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(cache.identity_lookups().found, 1);
  EXPECT_EQ(cache.identity_lookups().missed, 1) << "the warm plan generated";
  EXPECT_EQ(warm->kernel_identity, cold->kernel_identity);
  EXPECT_EQ(warm->kernel_identity,
            GemmKernelIdentity(FormOf(Decode()), warm->config,
                               runtime::KernelCompileOptions({})));
  EXPECT_EQ(warm->compiled->source, compile::CacheSource::kMemoryCache);
  EXPECT_EQ(warm->compiled->cache_key, cold->compiled->cache_key);
  // Warm plans share the resident module, not a copy each.
  const absl::StatusOr<GemmPlan> warmer =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(warmer.ok()) << warmer.status();
  EXPECT_EQ(warmer->compiled.get(), warm->compiled.get());
  EXPECT_EQ(warm->config, cold->config);
  EXPECT_EQ(warm->generated.kernel_name, cold->generated.kernel_name);
  EXPECT_TRUE(warm->generated.source == cold->generated.source);
  EXPECT_EQ(warm->generated.shared_bytes, cold->generated.shared_bytes);
  EXPECT_EQ(warm->grid.x, cold->grid.x);
  cache.ClearMemory();
  const absl::StatusOr<GemmPlan> cleared =
      PlanGemm(Decode(), GemmTarget::H200(), options);
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(cache.identity_lookups().missed, 2);
  EXPECT_EQ(cleared->compiled->source, compile::CacheSource::kDiskCache);
  EXPECT_EQ(cleared->compiled->cache_key, cold->compiled->cache_key);
}

// Two configurations of one form are two identities, each finding its
// own kernel (both from the bundle: the decode problem's and the plain
// one's picks).
TEST(PlanTest, TwoConfigsOfOneFormAreTwoKernels) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  compile::CacheConfig config;
  config.directory = absl::StrCat(CacheFolder(), "/two_configs");
  config.read_only_directories = {testing_support::KernelBundle()};
  compile::KernelCache cache(config);
  GemmOptions options;
  options.cache = &cache;
  const std::vector<GemmProblem> problems = {Decode(), Plain()};
  ASSERT_EQ(FormOf(problems[0]), FormOf(problems[1]));
  std::vector<GemmPlan> cold;
  for (const GemmProblem& problem : problems) {
    const absl::StatusOr<GemmPlan> plan =
        PlanGemm(problem, GemmTarget::H200(), options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    cold.push_back(*plan);
  }
  ASSERT_FALSE(cold[0].config == cold[1].config);
  EXPECT_NE(cold[0].kernel_identity, cold[1].kernel_identity);
  EXPECT_NE(cold[0].compiled->cache_key, cold[1].compiled->cache_key);
  EXPECT_EQ(cache.identity_lookups().missed, 2);
  for (size_t i = 0; i < problems.size(); ++i) {
    GemmOptions again = options;
    again.config = cold[i].config;
    const absl::StatusOr<GemmPlan> warm =
        PlanGemm(problems[i], GemmTarget::H200(), again);
    ASSERT_TRUE(warm.ok()) << warm.status();
    EXPECT_EQ(warm->compiled->cache_key, cold[i].compiled->cache_key);
    EXPECT_EQ(warm->generated.config, cold[i].config);
    EXPECT_EQ(warm->generated.kernel_name, cold[i].generated.kernel_name);
  }
  EXPECT_EQ(cache.identity_lookups().found, 2);
  EXPECT_EQ(cache.identity_lookups().missed, 2);
}

// Everything the identity is made from changes it; flags are fields of
// their own, not joined into one.
TEST(PlanTest, AKernelsIdentityNamesItsFormConfigArchAndFlags) {
  const gen::GemmForm form = FormOf(Plain());
  gen::GemmForm fused = FormOf(Fused());
  const gen::GemmConfig config = HeuristicConfig(Plain(), GemmTarget::H200());
  gen::GemmConfig deeper = config;
  deeper.stages -= 1;
  compile::CompileOptions other_arch = runtime::KernelCompileOptions({});
  other_arch.arch = "sm_100a";
  const std::set<std::string> identities = {
      GemmKernelIdentity(form, config, runtime::KernelCompileOptions({})),
      GemmKernelIdentity(fused, config, runtime::KernelCompileOptions({})),
      GemmKernelIdentity(form, deeper, runtime::KernelCompileOptions({})),
      GemmKernelIdentity(form, config, other_arch),
      GemmKernelIdentity(form, config,
                         runtime::KernelCompileOptions({"-lineinfo"})),
      GemmKernelIdentity(form, config,
                         runtime::KernelCompileOptions({"-DA=1 -DB=2"})),
      GemmKernelIdentity(form, config,
                         runtime::KernelCompileOptions({"-DA=1", "-DB=2"})),
  };
  EXPECT_EQ(identities.size(), 7u);
  EXPECT_EQ(
      GemmKernelIdentity(form, config, runtime::KernelCompileOptions({})),
      GemmKernelIdentity(form, config, runtime::KernelCompileOptions({})));
}

TEST(PlanTest, RefusesNvrtcFlagsTheCompilerRefuses) {
  GemmOptions options;
  options.nvrtc_flags = {"-arch=sm_80"};
  ExpectRefused(PlanGemm(Decode(), GemmTarget::H200(), options),
                "flag '-arch=sm_80' names the architecture");
}

TEST(PlanTest, ParsesACommandLinesNvrtcFlagsAndRefusesThemByName) {
  const absl::StatusOr<std::vector<std::string>> flags =
      ParseNvrtcFlags("  -lineinfo   -Xptxas=-O2 ");
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(*flags, (std::vector<std::string>{"-lineinfo", "-Xptxas=-O2"}));
  const absl::StatusOr<std::vector<std::string>> refused =
      ParseNvrtcFlags("-lineinfo -arch=sm_80");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.status().message(),
                       "--nvrtc-flags: compile: flag '-arch=sm_80' names the "
                       "architecture"));
}

// A kernel whose wgmma ptxas serialized ran 1.3x to 530x slower
// (bench/RESULTS.md, "Cold start"): the plan is refused, naming the flags
// and ptxas's code, whatever the code's number.
TEST(PlanTest, RefusesNvrtcFlagsThatSerializeTheKernelsWgmma) {
  ASSERT_TRUE(kNoDriverBundledKernels);
  for (const char* flag : {"--Ofast-compile=min", "-Xptxas=-O0"}) {
    GemmOptions options;
    options.nvrtc_flags = {"-lineinfo", flag};
    const absl::StatusOr<GemmPlan> plan =
        PlanGemm(Decode(), GemmTarget::H200(), options);
    EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << plan.status();
    EXPECT_TRUE(Contains(plan.status().message(),
                         absl::StrCat("GEMM nvrtc_flags '-lineinfo ", flag,
                                      "': ptxas serialized the kernel's "
                                      "wgmma (C75")))
        << plan.status();
  }
}

// Prepare checks the flags before it selects, compiles or asks for a
// device, so these refusals need no GPU.
TEST(PlanTest, PrepareRefusesBadNvrtcFlagsAndFlagsWithAutotuning) {
  GemmOptions options;
  options.nvrtc_flags = {"-I/usr/include"};
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(Decode(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(gemm.status())) << gemm.status();
  EXPECT_TRUE(Contains(gemm.status().message(),
                       "GEMM nvrtc_flags: compile: flag '-I/usr/include' "
                       "adds headers"))
      << gemm.status();
  options.nvrtc_flags = {"-lineinfo"};
  options.selection = Selection::kAutotune;
  gemm = Gemm::Prepare(Decode(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(gemm.status())) << gemm.status();
  EXPECT_TRUE(Contains(gemm.status().message(),
                       "nvrtc_flags with Selection::kAutotune"))
      << gemm.status();
}

// ---- The command line prints this plan ----

struct CliRun {
  std::string out;
  std::string err;
};

// tools/ptxgen (a data dependency; the working directory is the runfiles
// root) with `flags`, this binary's environment: no driver, the bundle.
CliRun Ptxgen(const std::string& flags) {
  const std::string err_path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/ptxgen.err");
  CliRun run;
  FILE* out =
      popen(absl::StrCat("tools/ptxgen ", flags, " 2>", err_path).c_str(), "r");
  if (out == nullptr) return run;
  char buffer[4096];
  for (size_t got; (got = fread(buffer, 1, sizeof buffer, out)) > 0;) {
    run.out.append(buffer, got);
  }
  EXPECT_EQ(pclose(out), 0) << flags;
  run.err = ReadFile(err_path);
  return run;
}

TEST(PlanTest, TheCommandLinePrintsThePlan) {
  const absl::StatusOr<GemmPlan> plan = PlanGemm(Fused(), WithSms(66));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const CliRun run = Ptxgen(
      "gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --b-major=n "
      "--out-dtype=f32 "
      "--bias=n --activation=gelu --sms=66 --emit=ptx");
  EXPECT_TRUE(run.out == plan->compiled->ptx)
      << "the CLI's PTX is not the plan's";
  EXPECT_TRUE(Contains(
      run.err, absl::StrCat("ptxgen: ", gen::ConfigName(plan->config), "\n")));
}

// ---- The README's library example ----

// The README's lines that need no GPU, as written there (between the
// markers; TheReadmeShowsThisCode checks README.md has them verbatim).
TEST(PlanTest, TheReadmesExampleWorksWithoutAGpu) {
  const int64_t m = 4096, n = 4096, k = 4096;
  // The README's lines as written there:
  // clang-format off
  // From README.md:
  ptxgen::gemm::GemmProblem p{m, n, k, ptxgen::ptx::ScalarType::kBF16};
  p.b_major = ptxgen::ptx::MajorOrder::kMN;       // B stored [k,n]
  p.output = ptxgen::ptx::ScalarType::kF32;
  p.bias = ptxgen::gemm::BiasAlong::kN;           // D = gelu(A·B + bias)
  p.activation = ptxgen::gemm::Activation::kGelu;
  // End of README.md.
  // From README.md:
  absl::StatusOr<ptxgen::gemm::GemmPlan> plan =   // for an H200; GemmTarget: arch, SMs, shared memory
      ptxgen::gemm::PlanGemm(p, ptxgen::gemm::GemmTarget::H200());
  // End of README.md.
  ASSERT_TRUE(plan.ok()) << plan.status();
  // From README.md:
  const std::string& cuda = plan->generated.source;  // plan->config, ->grid: what Prepare would pick
  const std::string& ptx = plan->compiled->ptx;      // NVRTC's; ->cubin, ->resources too
  // End of README.md.
  // clang-format on
  EXPECT_TRUE(Contains(cuda, plan->generated.kernel_name));
  EXPECT_TRUE(
      Contains(ptx, absl::StrCat(".entry ", plan->generated.kernel_name)));
  EXPECT_EQ(plan->config, HeuristicConfig(Fused(), GemmTarget::H200()));
}

// The blocks of `source` between "// From README.md:" and "// End of
// README.md." lines, without the first line's indentation.
std::vector<std::string> ReadmeBlocks(const std::string& source) {
  std::vector<std::string> blocks;
  std::string* block = nullptr;
  size_t indent = 0;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    const absl::string_view code = absl::StripLeadingAsciiWhitespace(line);
    if (code == "// From README.md:") {
      block = &blocks.emplace_back();
      indent = line.size() - code.size();
    } else if (code == "// End of README.md.") {
      block = nullptr;
    } else if (block != nullptr) {
      absl::StrAppend(block, line.substr(std::min(indent, line.size())), "\n");
    }
  }
  return blocks;
}

TEST(PlanTest, TheReadmeShowsThisCode) {
  const std::string readme = ReadFile("README.md");
  const std::vector<std::string> blocks =
      ReadmeBlocks(ReadFile("tests/gemm/plan_test.cc"));
  ASSERT_EQ(blocks.size(), 3u);
  size_t after = 0;
  for (const std::string& block : blocks) {
    const size_t at = readme.find(block, after);
    EXPECT_NE(at, std::string::npos)
        << "README.md lacks, after its earlier blocks:\n"
        << block;
    if (at != std::string::npos) after = at + block.size();
  }
}

}  // namespace
}  // namespace ptxgen::gemm
