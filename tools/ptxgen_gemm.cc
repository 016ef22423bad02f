// `ptxgen gemm`: a GEMM kernel generated for a problem, shown in any
// compiled view, and with --run executed on the GPU beside cuBLAS.
// `ptxgen precompile`: the kernels of a list of problems compiled into a
// cache folder, without a GPU.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/inspect.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/target.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

// A leading dimension: 0 (packed) or a count of elements; the library
// checks it against the row.
absl::StatusOr<int64_t> LeadingDimension(const cli::ParsedFlags& flags,
                                         absl::string_view name) {
  const int value = flags.Integer(name);
  if (value < 0) {
    return cli::UsageError(absl::StrCat(
        "--", name, "=", flags.Text(name),
        " is negative: give 0 (packed) or the elements between rows"));
  }
  return value;
}

// --groups and --grouping: a grouped GEMM of --groups groups, m the total
// rows (contiguous) or each group's (masked), planned for uniform routing,
// with a bias per group.
absl::Status ReadGrouping(const cli::ParsedFlags& flags,
                          gemm::GemmProblem& problem) {
  const int64_t groups = flags.Integer("groups");
  if (groups < 0 || (groups == 0 && flags.Has("groups"))) {
    return cli::UsageError(
        absl::StrCat("--groups=", flags.Text("groups"),
                     " names no groups: a grouped GEMM has 1 or more (leave "
                     "--groups out for a plain GEMM)"));
  }
  if (groups == 0) {
    if (flags.Has("grouping")) {
      return cli::UsageError(
          "--grouping is a grouped GEMM's layout: give --groups too");
    }
    return absl::OkStatus();
  }
  if (flags.Has("batch")) {
    return cli::UsageError(
        "--groups and --batch exclude each other: a grouped GEMM's groups "
        "are not a strided batch");
  }
  absl::StatusOr<gemm::Grouping> grouping =
      gen::ParseGrouping(flags.Text("grouping"));
  if (!grouping.ok() || *grouping == gemm::Grouping::kNone) {
    return cli::UsageError("--grouping is contiguous or masked");
  }
  problem.batch = groups;
  problem.grouping = *grouping;
  return absl::OkStatus();
}

// The problem the flags describe, before the library's rules
// (gemm::ValidateProblem): only what the command line itself gets wrong is
// refused here, as a usage error naming the flag.
absl::StatusOr<gemm::GemmProblem> ParseProblem(const cli::ParsedFlags& flags) {
  absl::StatusOr<ptx::ScalarType> element =
      cli::ScalarTypeValue(flags, "dtype");
  if (!element.ok()) return element.status();
  gemm::GemmProblem problem;
  problem.m = flags.Integer("m");
  problem.n = flags.Integer("n");
  problem.k = flags.Integer("k");
  problem.element = *element;
  if (flags.Has("b-dtype")) {
    absl::StatusOr<ptx::ScalarType> b_element =
        cli::ScalarTypeValue(flags, "b-dtype");
    if (!b_element.ok()) return b_element.status();
    if (*b_element != problem.element) problem.b_element = *b_element;
  }
  absl::StatusOr<gen::GemmScaling> scaling =
      gen::ParseScaling(flags.Text("scaling"));
  if (!scaling.ok()) {
    return cli::UsageError(
        absl::StrCat("--scaling: ", scaling.status().message()));
  }
  problem.scaling = *scaling;
  problem.fast_accumulation = flags.Has("fast-accum");
  problem.record_amax = flags.Has("amax");
  if (flags.Has("out-dtype")) {
    absl::StatusOr<ptx::ScalarType> output =
        cli::ScalarTypeValue(flags, "out-dtype");
    if (!output.ok()) return output.status();
    problem.output = *output;
  }
  problem.a_major =
      flags.Text("a-major") == "m" ? ptx::MajorOrder::kMN : ptx::MajorOrder::kK;
  problem.b_major =
      flags.Text("b-major") == "n" ? ptx::MajorOrder::kMN : ptx::MajorOrder::kK;
  int64_t* const leading[] = {&problem.lda, &problem.ldb, &problem.ldc,
                              &problem.ldd};
  const char* const leading_names[] = {"lda", "ldb", "ldc", "ldd"};
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<int64_t> value = LeadingDimension(flags, leading_names[i]);
    if (!value.ok()) return value.status();
    *leading[i] = *value;
  }
  problem.batch = flags.Integer("batch");
  if (absl::Status grouped = ReadGrouping(flags, problem); !grouped.ok()) {
    return grouped;
  }
  for (auto [name, field] :
       {std::pair{"alpha", &problem.alpha}, std::pair{"beta", &problem.beta}}) {
    absl::StatusOr<float> value = cli::FloatValue(flags, name);
    if (!value.ok()) return value.status();
    *field = *value;
  }
  const std::string bias = flags.Text("bias");
  problem.bias = bias == "m"   ? gen::BiasAlong::kM
                 : bias == "n" ? gen::BiasAlong::kN
                               : gen::BiasAlong::kNone;
  absl::StatusOr<ptx::ScalarType> bias_type =
      cli::ScalarTypeValue(flags, "bias-dtype");
  if (!bias_type.ok()) return bias_type.status();
  problem.bias_type = *bias_type;
  // A grouped GEMM's bias is one per group.
  if (problem.grouping != gemm::Grouping::kNone &&
      problem.bias != gen::BiasAlong::kNone) {
    problem.stride_bias = problem.n;
  }
  absl::StatusOr<gen::Activation> activation =
      gen::ParseActivation(flags.Text("activation"));
  if (!activation.ok()) {
    return cli::UsageError(
        absl::StrCat("--activation: ", activation.status().message()));
  }
  problem.activation = *activation;

  // Flags that would change nothing.
  if (flags.Has("ldc") && problem.beta == 0) {
    return cli::UsageError(
        "--ldc is C's leading dimension, and C is read only with --beta other "
        "than 0: drop --ldc or give --beta");
  }
  if (flags.Has("bias-dtype") && problem.bias == gen::BiasAlong::kNone) {
    return cli::UsageError(
        "--bias-dtype is the bias vector's type, and there is none without "
        "--bias=m or --bias=n: drop --bias-dtype or give --bias");
  }
  return problem;
}

// The flags (as given, in --help order) that make `problem` other than the
// plain C = A * B^T, packed, of one batch; empty for the plain problem. A
// leading dimension equal to the packed row, alpha 1 and the like are plain.
std::vector<std::string> NonPlainFlags(const cli::ParsedFlags& flags,
                                       const gemm::GemmProblem& p) {
  const auto given = [&](const char* name) {
    return absl::StrCat("--", name, "=", flags.Text(name));
  };
  // The library's packed leading dimensions for these majors.
  gemm::GemmProblem unpadded = p;
  unpadded.lda = unpadded.ldb = unpadded.ldc = unpadded.ldd = 0;
  const gemm::GemmProblem packed = gemm::Resolved(unpadded);
  std::vector<std::string> found;
  if (p.a_major != ptx::MajorOrder::kK) found.push_back(given("a-major"));
  if (p.b_major != ptx::MajorOrder::kK) found.push_back(given("b-major"));
  if (p.lda != 0 && p.lda != packed.lda) found.push_back(given("lda"));
  if (p.ldb != 0 && p.ldb != packed.ldb) found.push_back(given("ldb"));
  if (p.ldc != 0 && p.ldc != packed.ldc) found.push_back(given("ldc"));
  if (p.ldd != 0 && p.ldd != packed.ldd) found.push_back(given("ldd"));
  if (p.batch != 1 && p.grouping == gemm::Grouping::kNone) {
    found.push_back(given("batch"));
  }
  if (p.grouping != gemm::Grouping::kNone) found.push_back(given("groups"));
  if (p.alpha != 1.0f) found.push_back(given("alpha"));
  if (p.beta != 0.0f) found.push_back(given("beta"));
  if (p.bias != gen::BiasAlong::kNone) found.push_back(given("bias"));
  if (p.activation != gen::Activation::kNone)
    found.push_back(given("activation"));
  if (p.output.has_value() && *p.output != gen::DefaultOutput(p.element))
    found.push_back(given("out-dtype"));
  if (p.b_element.has_value()) found.push_back(given("b-dtype"));
  if (p.scaling != gen::GemmScaling::kNone) found.push_back(given("scaling"));
  if (p.fast_accumulation) found.push_back("--fast-accum");
  if (p.record_amax) found.push_back("--amax");
  return found;
}

absl::StatusOr<gen::GemmConfig> ConfigWithBlock(const cli::ParsedFlags& flags,
                                                gen::GemmConfig config) {
  absl::StatusOr<gen::GemmConfig> tiled =
      gen::WithTile(config, flags.Text("block"));
  if (!tiled.ok()) {
    return cli::UsageError(absl::StrCat("--block=", flags.Text("block"), ": ",
                                        tiled.status().message(),
                                        " (write MxNxK, e.g. 128x128x64)"));
  }
  // The base staged its own tile's store in passes (e#): a value the user
  // never wrote, which need not divide this tile. Stage it whole.
  tiled->store_chunks = 0;
  return *tiled;
}

// The SM count --sms gives, or 0 without it.
absl::StatusOr<int> GivenSmCount(const cli::ParsedFlags& flags) {
  if (!flags.Has("sms")) return 0;
  const int sms = flags.Integer("sms");
  if (sms < 1 || sms > runtime::kMaxTargetSms) {
    return cli::UsageError(absl::StrCat(
        "--sms=", flags.Text("sms"), " is outside 1..", runtime::kMaxTargetSms,
        " (the SMs of the device to plan for)"));
  }
  return sms;
}

// The device to plan for: an H200 with --sms SMs (GPU 0 is not asked, so
// no note that there is none), else GPU 0, else an H200, said on stderr.
gemm::GemmTarget PlanningTarget(int given_sms) {
  gemm::GemmTarget assumed = gemm::GemmTarget::H200();
  if (given_sms > 0) {
    assumed.sm_count = given_sms;
    return assumed;
  }
  absl::StatusOr<runtime::DeviceProperties> device =
      runtime::GetDeviceProperties(0);
  absl::StatusOr<gemm::GemmTarget> found =
      device.ok() ? runtime::KernelTargetOf(*device, gemm::kGemmFamily)
                  : device.status();
  if (found.ok()) return *found;
  std::fprintf(stderr, "ptxgen: no GPU (%s); planning as for %d SMs\n",
               std::string(found.status().message()).c_str(), assumed.sm_count);
  return assumed;
}

// Flags that another flag given with them would silently override.
absl::Status RefuseConflictingFlags(const cli::ParsedFlags& flags) {
  const struct {
    const char* flag;
    const char* other;
    const char* why;
  } conflicts[] = {
      {"config", "schedule", "--config names the whole configuration"},
      {"config", "block", "--config names the whole configuration"},
      {"config", "autotune", "--config names the whole configuration"},
      {"autotune", "block", "--autotune chooses the tile"},
      {"run", "emit", "--run prints the check and the times, not a view"},
  };
  for (const auto& conflict : conflicts) {
    if (flags.Has(conflict.flag) && flags.Has(conflict.other)) {
      return cli::UsageError(absl::StrCat(
          conflict.why, ": drop --", conflict.other, " or --", conflict.flag));
    }
  }
  return absl::OkStatus();
}

// The --nvrtc-flags flag of the commands that compile GEMM kernels.
cli::Flag NvrtcFlagsFlag() {
  return cli::TextFlag(
      "nvrtc-flags", "\"FLAG ...\"",
      "Further NVRTC options for the GEMM kernel's compile "
      "(GemmOptions::nvrtc_flags), e.g. -lineinfo; part of the cache key. "
      "Flags that make ptxas serialize wgmma (--Ofast-compile, -G, "
      "-Xptxas=-O0) are refused.");
}

// The configuration the flags name, if any (else PlanGemm takes the
// heuristic's pick for the target), and the NVRTC flags.
absl::StatusOr<gemm::GemmOptions> OptionsFromFlags(
    const cli::ParsedFlags& flags, const gemm::GemmProblem& problem,
    const gemm::GemmTarget& target) {
  gemm::GemmOptions options;
  absl::StatusOr<std::vector<std::string>> nvrtc =
      gemm::ParseNvrtcFlags(flags.Text("nvrtc-flags"));
  if (!nvrtc.ok()) return nvrtc.status();
  options.nvrtc_flags = *std::move(nvrtc);
  if (flags.Has("config")) {
    absl::StatusOr<gen::GemmConfig> named =
        gen::ParseConfigName(flags.Text("config"));
    if (!named.ok()) return named.status();
    options.config = *named;
    return options;
  }
  const std::string schedule = flags.Text("schedule");
  const bool v1 = schedule == "v1";
  if (flags.Has("autotune")) {
    std::vector<gen::GemmConfig> candidates =
        v1 ? gemm::V1CandidateConfigs(problem.element)
           : gemm::CandidateConfigs(problem, target);
    // --schedule=cooperative or pingpong times that schedule's candidates.
    const auto other_schedule = [&](const gen::GemmConfig& config) {
      return (schedule == "cooperative" &&
              config.schedule != gen::GemmSchedule::kWarpSpecialized) ||
             (schedule == "pingpong" &&
              config.schedule != gen::GemmSchedule::kPingPong);
    };
    candidates.erase(
        std::remove_if(candidates.begin(), candidates.end(), other_schedule),
        candidates.end());
    absl::StatusOr<gen::GemmConfig> tuned = gemm::AutotunedConfig(
        problem, candidates, compile::KernelCache::Default());
    if (!tuned.ok()) return tuned.status();
    options.config = *tuned;
    return options;
  }
  if (schedule == "auto" && !flags.Has("block")) return options;
  const gen::GemmConfig base = v1 ? gen::GemmConfig{}
                               : schedule == "pingpong"
                                   ? gemm::PingPongConfig(problem, target)
                                   : gemm::HeuristicConfig(problem, target);
  absl::StatusOr<gen::GemmConfig> config =
      flags.Has("block") ? ConfigWithBlock(flags, base) : base;
  if (!config.ok()) return config.status();
  options.config = *config;
  return options;
}

const char* MajorName(ptx::MajorOrder major, const char* mn) {
  return major == ptx::MajorOrder::kK ? "k" : mn;
}

const char* BiasName(gen::BiasAlong bias) {
  switch (bias) {
    case gen::BiasAlong::kNone:
      return "none";
    case gen::BiasAlong::kM:
      return "m";
    case gen::BiasAlong::kN:
      return "n";
  }
  return "none";
}

// The problem as planned (packed dimensions resolved), in the flags' names
// and values.
std::string ProblemJson(const gemm::GemmProblem& p) {
  const auto type = [](ptx::ScalarType t) {
    return compile::JsonString(ptx::PtxName(t));
  };
  return absl::StrCat(
      "{\"m\":", p.m, ",\"n\":", p.n, ",\"k\":", p.k, ",\"batch\":", p.batch,
      ",\"dtype\":", type(p.element),
      ",\"out_dtype\":", type(p.output.value_or(p.element)), ",\"a_major\":\"",
      MajorName(p.a_major, "m"), "\",\"b_major\":\"", MajorName(p.b_major, "n"),
      "\",\"lda\":", p.lda, ",\"ldb\":", p.ldb, ",\"ldc\":", p.ldc,
      ",\"ldd\":", p.ldd, ",\"stride_a\":", p.stride_a,
      ",\"stride_b\":", p.stride_b, ",\"stride_c\":", p.stride_c,
      ",\"stride_d\":", p.stride_d, ",\"stride_bias\":", p.stride_bias,
      ",\"grouping\":\"", gen::GroupingName(p.grouping), "\"",
      ",\"alpha\":", absl::StrFormat("%.9g", p.alpha),
      ",\"beta\":", absl::StrFormat("%.9g", p.beta), ",\"bias\":\"",
      BiasName(p.bias), "\",\"bias_dtype\":", type(p.bias_type),
      ",\"activation\":",
      compile::JsonString(gen::ActivationName(p.activation)), "}");
}

// What the json view adds for a GEMM: what was planned and how it
// launches. The dynamic shared memory is the launch's, which ptxas's
// static figure does not count.
cli::JsonFields GemmJsonFields(const gemm::GemmPlan& plan) {
  const gen::GemmGrid& grid = plan.grid;
  return {
      {"problem", ProblemJson(plan.problem)},
      {"form", compile::JsonString(gen::FormName(plan.generated.form))},
      {"config", compile::JsonString(gen::ConfigName(plan.config))},
      {"sms", absl::StrCat(plan.target.sm_count)},
      {"grid", absl::StrCat("{\"x\":", grid.x, ",\"y\":", grid.y, ",\"z\":",
                            grid.z, ",\"cluster_x\":", grid.cluster_x, "}")},
      {"threads_per_block", absl::StrCat(plan.generated.threads_per_block)},
      {"dynamic_shared_bytes", absl::StrCat(plan.generated.shared_bytes)},
  };
}

// Random inputs, one run checked against cuBLAS, then timings of both.
absl::StatusOr<std::string> RunOnGpu(const gemm::GemmProblem& problem,
                                     const gen::GemmConfig& config,
                                     gemm::GemmOptions options) {
  options.config = config;
  absl::StatusOr<gemm::Gemm> gemm = gemm::Gemm::Prepare(problem, options);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<gemm::CublasComparison> compared =
      gemm::CompareWithCublas(*gemm);
  if (!compared.ok()) return compared.status();
  const double ours = compared->milliseconds,
               theirs = compared->cublas_milliseconds;
  const std::string report = absl::StrFormat(
      "config: %s\nkernel: %s\nrelative error vs cuBLAS: %.2e (bound %.0e)\n"
      "ptxgen: %.4f ms, %.0f TFLOP/s\ncuBLAS: %.4f ms, %.0f TFLOP/s\n"
      "ratio (cuBLAS time / ptxgen time): %.3f\n",
      gen::ConfigName(config), gemm->generated().kernel_name,
      compared->relative_error, compared->error_bound, ours,
      gemm::Tflops(problem, ours), theirs, gemm::Tflops(problem, theirs),
      theirs / ours);
  if (!compared->passed()) {
    return absl::InternalError(absl::StrCat("result check failed\n", report));
  }
  return report;
}

absl::StatusOr<std::string> RunGemm(const cli::ParsedFlags& flags) {
  if (absl::Status alone = RefuseConflictingFlags(flags); !alone.ok())
    return alone;
  absl::StatusOr<gemm::GemmProblem> problem = ParseProblem(flags);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<int> given_sms = GivenSmCount(flags);
  if (!given_sms.ok()) return given_sms.status();
  const std::vector<std::string> general = NonPlainFlags(flags, *problem);
  if (flags.Has("run") && !general.empty()) {
    return cli::UsageError(absl::StrCat(
        "--run compares only the plain problem with cuBLAS (C = A * B^T, both "
        "K-major and packed, one batch, alpha 1, beta 0, no bias or "
        "activation, D in the input type), not one made general by ",
        absl::StrJoin(general, " "),
        ": drop those flags, or drop --run and view the kernel with --emit "
        "(a GPU test checks the general forms)"));
  }
  if (flags.Has("run") && ptx::SizeInBytes(problem->element) != 2) {
    const std::string type(ptx::PtxName(problem->element));
    return cli::UsageError(absl::StrCat(
        "--run compares f16 and bf16 GEMMs with cuBLAS; ", type,
        " GEMMs are compared with cuBLASLt by gemm_bench --dtype=", type,
        " (and checked by the GPU tests)"));
  }
  if (absl::Status valid = gemm::ValidateProblem(*problem); !valid.ok()) {
    return valid;
  }
  const gemm::GemmTarget target = PlanningTarget(*given_sms);
  absl::StatusOr<gemm::GemmOptions> options =
      OptionsFromFlags(flags, *problem, target);
  if (!options.ok()) return options.status();
  // What running would refuse, a view refuses too: both are this plan.
  absl::StatusOr<gemm::GemmPlan> plan =
      gemm::PlanGemm(*problem, target, *options);
  if (!plan.ok()) return plan.status();
  if (flags.Has("run")) return RunOnGpu(*problem, plan->config, *options);
  std::fprintf(stderr, "ptxgen: %s\n", gen::ConfigName(plan->config).c_str());
  if (!general.empty()) {
    std::fprintf(stderr, "ptxgen: form %s\n",
                 gen::FormName(plan->generated.form).c_str());
  }
  return cli::EmitCompiled(*plan->compiled, flags.Text("emit"),
                           GemmJsonFields(*plan));
}

// The flags that describe a problem: `ptxgen gemm`'s, and a line of
// `ptxgen precompile --problems`.
std::vector<cli::Flag> ProblemFlags() {
  // Output and bias types: those a GEMM form takes (gen::ValidateGemmForm).
  const std::vector<cli::Choice> bias_types = {
      {"f16", ""}, {"bf16", ""}, {"f32", ""}};
  std::vector<cli::Choice> output_types = bias_types;
  output_types.push_back({"e4m3", ""});
  output_types.push_back({"e5m2", ""});
  output_types.push_back({"s8", ""});
  output_types.push_back({"s32", ""});
  cli::Flag alpha = cli::TextFlag(
      "alpha", "X",
      "Scales A * B: a finite float (e.g. 0.5, -2, 1e-3; absl::SimpleAtof's "
      "syntax).");
  alpha.default_value = "1";
  cli::Flag beta = cli::TextFlag(
      "beta", "X",
      "Scales C, which is added to alpha * A * B: a finite float; 0 never "
      "reads C.");
  beta.default_value = "0";

  return {
      cli::Required(cli::IntegerFlag("m", "N", "Rows of A and D.", "")),
      cli::Required(cli::IntegerFlag("n", "N", "Columns of B and D.", "")),
      cli::Required(cli::IntegerFlag(
          "k", "N",
          "The shared dimension (packed K-major operands: a multiple of 8).",
          "")),
      cli::ScalarTypeFlag("dtype",
                          "The type of A and B (8-bit and tf32: K-major). D "
                          "(and C) unless --out-dtype: f16 and bf16 their "
                          "own, bf16 from fp8, f32 from tf32 (stored as f32), "
                          "s32 from s8 and u8.",
                          "f16", gen::IsGemmElement),
      cli::ScalarTypeFlag("b-dtype",
                          "B's type where it differs from --dtype: e4m3 with "
                          "e5m2, s8 with u8. Default: the --dtype.",
                          "", gen::IsGemmElement),
      cli::ChoiceFlag(
          "scaling", "none|tensor|block",
          {{"none", "alpha alone scales A * B"},
           {"tensor",
            "fp8: alpha * scale_a * scale_b, two f32 scalars the kernel "
            "reads from device memory (cuBLASLt's A/B scale pointers)"},
           {"block",
            "fp8, DeepGEMM's recipe: an f32 scale of A per row and 128 of "
            "k, of B per 128x128 block, applied as each 128-k stage is "
            "promoted; D f16, bf16 or f32"}},
          "How fp8 inputs are scaled.", "none"),
      cli::SwitchFlag(
          "fast-accum",
          "fp8: accumulate in wgmma's reduced-precision accumulator instead "
          "of adding each stage's products into f32 registers (faster, less "
          "exact; cuBLASLt's fast accumulation)."),
      cli::ChoiceFlag("a-major", "k|m",
                      {{"k", "A stored [m,k]: rows of k elements (K-major)"},
                       {"m", "A stored [k,m]: rows of m elements (MN-major)"}},
                      "How A is stored.", "k"),
      cli::ChoiceFlag("b-major", "k|n",
                      {{"k", "B stored [n,k]: D = A * B^T (K-major)"},
                       {"n", "B stored [k,n]: D = A * B (MN-major)"}},
                      "How B is stored.", "k"),
      cli::IntegerFlag(
          "lda", "N",
          "Elements between consecutive rows of A as stored; at "
          "least a row, every row on a 16-byte boundary. 0: packed.",
          "0"),
      cli::IntegerFlag("ldb", "N",
                       "Elements between consecutive rows of B as stored, as "
                       "for --lda. 0: packed.",
                       "0"),
      cli::IntegerFlag("ldc", "N",
                       "Elements between consecutive rows of C, at least n; "
                       "only with --beta other than 0. 0: packed.",
                       "0"),
      cli::IntegerFlag("ldd", "N",
                       "Elements between consecutive rows of D, at least n. 0: "
                       "packed.",
                       "0"),
      cli::IntegerFlag("batch", "N",
                       "Problems in a strided batch (1..65535): A, B, C and D "
                       "each packed after the previous one; one bias vector "
                       "serves them all.",
                       "1"),
      cli::IntegerFlag(
          "groups", "G",
          "A grouped GEMM (mixture-of-experts) of G groups (1..65535), each "
          "with its own B [n,k] and bias, its rows known only on the device "
          "(planned for uniform routing). 0: not grouped.",
          "0"),
      cli::ChoiceFlag(
          "grouping", "contiguous|masked",
          {{"contiguous",
            "A [m,k] and D [m,n] hold every group's rows, group after group "
            "(m: their total; cumulative row ends on the device)"},
           {"masked",
            "A [G,m,k] and D [G,m,n]: each group uses its first rows (m: "
            "the room per group; row counts on the device)"}},
          "How a grouped GEMM's rows are laid out; only with --groups.",
          "contiguous"),
      alpha,
      beta,
      cli::ChoiceFlag(
          "bias", "none|m|n",
          {{"none", "no bias"},
           {"m", "a vector of m values: bias[i] added to row i of D"},
           {"n",
            "a vector of n values: bias[j] added to column j "
            "of D"}},
          "A bias added before the activation.", "none"),
      cli::ChoiceFlag("bias-dtype", "TYPE", bias_types,
                      "The bias vector's type; only with --bias=m or n.",
                      "f32"),
      cli::ChoiceFlag("activation", "NAME",
                      {{"none", "D = x"},
                       {"relu", "max(x, 0)"},
                       {"gelu", "x * Phi(x), the erf form"},
                       {"gelu_tanh",
                        "0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), "
                        "cuBLASLt's GELU"},
                       {"silu", "x * sigmoid(x)"}},
                      "Applied to x = alpha * A * B + beta * C + bias.",
                      "none"),
      cli::ChoiceFlag("out-dtype", "TYPE", output_types,
                      "The type of D (and C). Default: the --dtype's (see "
                      "--dtype). e4m3, e5m2 and s8 round with saturation and "
                      "take no C; with --scaling=tensor an fp8 D is "
                      "multiplied by *scale_d first. s8 and s32 from s8/u8 "
                      "inputs only: s8 is alpha times the sums, s32 the "
                      "exact sums (alpha 1, no bias, activation or amax).",
                      ""),
      cli::SwitchFlag("amax",
                      "Record the largest |D| before scale_d in an f32 the "
                      "kernel raises (cuBLASLt's amax of D)."),
  };
}

// ---- precompile ----

// A list of problems is a few lines per problem: this bounds what a wrong
// path reads into memory.
constexpr int64_t kMaxProblemsFileBytes = int64_t{1} << 20;

// Closes a file descriptor on every return path.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The text of the --problems file: a regular file (opened without blocking,
// so that a FIFO cannot stall the run, then checked) of at most
// kMaxProblemsFileBytes, however it grows while read.
absl::StatusOr<std::string> ProblemsText(const std::string& path) {
  const std::string flag = absl::StrCat("--problems=", path);
  const ScopedFd fd(
      open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat status {};
  if (fd.get() < 0 || fstat(fd.get(), &status) != 0) {
    return cli::UsageError(
        absl::StrCat(flag, ": cannot be read (", std::strerror(errno), ")"));
  }
  if (!S_ISREG(status.st_mode)) {
    return cli::UsageError(absl::StrCat(
        flag, " is not a regular file (a folder, FIFO or device)"));
  }
  std::string text(kMaxProblemsFileBytes + 1, '\0');
  size_t size = 0;
  while (size < text.size()) {
    const ssize_t got = read(fd.get(), text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return cli::UsageError(
          absl::StrCat(flag, ": cannot be read (", std::strerror(errno), ")"));
    }
    if (got == 0) break;
    size += static_cast<size_t>(got);
  }
  if (size > static_cast<size_t>(kMaxProblemsFileBytes)) {
    return cli::UsageError(
        absl::StrCat(flag, " is larger than 1 MiB: a problems file is at most ",
                     kMaxProblemsFileBytes, " bytes"));
  }
  text.resize(size);
  return text;
}

// The problems of a --problems file: a line each, written as `ptxgen
// gemm`'s problem flags ("--m=16 --n=4096 --k=4096 --bias=n"); blank lines
// and lines starting with # are skipped. An error names the file and line.
absl::StatusOr<std::vector<gemm::GemmProblem>> ProblemsOfFile(
    const std::string& path) {
  const absl::StatusOr<std::string> file = ProblemsText(path);
  if (!file.ok()) return file.status();
  const std::vector<cli::Flag> table = ProblemFlags();
  std::vector<gemm::GemmProblem> problems;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(*file, '\n')) {
    ++number;
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    const std::vector<std::string> args =
        absl::StrSplit(text, ' ', absl::SkipEmpty());
    absl::StatusOr<cli::ParsedFlags> flags =
        cli::ParsedFlags::Parse(table, args);
    absl::StatusOr<gemm::GemmProblem> problem =
        flags.ok() ? ParseProblem(*flags)
                   : absl::StatusOr<gemm::GemmProblem>(flags.status());
    if (!problem.ok()) {
      return cli::UsageError(
          absl::StrCat(path, ":", number, ": ", problem.status().message()));
    }
    problems.push_back(*problem);
  }
  if (problems.empty()) {
    return cli::UsageError(
        absl::StrCat("--problems=", path, " names no problem"));
  }
  return problems;
}

// The problems --shapes names (plain ones of the --dtype), or those of the
// --problems file: one of the two.
absl::StatusOr<std::vector<gemm::GemmProblem>> PrecompileProblems(
    const cli::ParsedFlags& flags) {
  if (flags.Has("shapes") == flags.Has("problems")) {
    return cli::UsageError("give --shapes or --problems (one of them)");
  }
  if (flags.Has("problems")) {
    if (flags.Has("dtype")) {
      return cli::UsageError(
          "--dtype applies to --shapes; a --problems line gives its own "
          "--dtype");
    }
    return ProblemsOfFile(flags.Text("problems"));
  }
  absl::StatusOr<ptx::ScalarType> element =
      cli::ScalarTypeValue(flags, "dtype");
  if (!element.ok()) return element.status();
  std::vector<gemm::GemmProblem> problems;
  for (absl::string_view shape : absl::StrSplit(flags.Text("shapes"), ',')) {
    absl::StatusOr<std::array<int64_t, 3>> dimensions =
        gen::ParseDimensions(shape);
    if (!dimensions.ok()) {
      return cli::UsageError(absl::StrCat("--shapes: '", shape,
                                          "': ", dimensions.status().message(),
                                          " (write MxNxK,MxNxK,...)"));
    }
    gemm::GemmProblem problem;
    problem.m = (*dimensions)[0];
    problem.n = (*dimensions)[1];
    problem.k = (*dimensions)[2];
    problem.element = *element;
    problems.push_back(problem);
  }
  return problems;
}

// --out as an absolute path (the cache takes no other), or "" without it.
absl::StatusOr<std::string> BundleFolder(const cli::ParsedFlags& flags) {
  const std::string out = flags.Text("out");
  if (out.empty() || absl::StartsWith(out, "/")) return out;
  std::vector<char> cwd(4096);
  if (getcwd(cwd.data(), cwd.size()) == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "--out=", out, " is relative, and the current folder cannot be read"));
  }
  return absl::StrCat(cwd.data(), "/", out);
}

// One line per kernel: what it is for, its name, and whether it was
// compiled or found.
std::string KernelLine(absl::string_view what,
                       const compile::CompiledModule& module) {
  return absl::StrFormat("%s  %s  %s (%.0f ms)\n", what, module.name,
                         module.source == compile::CacheSource::kCompiled
                             ? "compiled"
                             : "already there",
                         module.compile_ms);
}

// A bundle must hold every kernel: a warning of the cache (an entry not
// written) fails the command.
absl::Status CheckStored(const compile::CompiledModule& module, bool bundle) {
  if (!bundle || module.cache_warnings.empty()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("precompile: ", module.name, ": ",
                                             module.cache_warnings.front()));
}

// The kernels one problem needs: its GEMM kernel, and split-K's reduce
// kernel when the plan splits k (compiled as Gemm::Prepare compiles it).
absl::StatusOr<std::string> PrecompileProblem(
    const gemm::GemmProblem& problem, const gemm::GemmTarget& target,
    const std::vector<std::string>& nvrtc_flags, compile::KernelCache& cache,
    bool bundle) {
  const gen::GemmForm form = gemm::FormOf(problem);
  std::string shape = absl::StrCat(problem.m, "x", problem.n, "x", problem.k);
  if (!(form == gen::PlainForm(problem.element))) {
    absl::StrAppend(&shape, " ", gen::FormName(form));
  }
  gemm::GemmOptions options;
  options.cache = &cache;
  options.nvrtc_flags = nvrtc_flags;
  absl::StatusOr<gemm::GemmPlan> plan =
      gemm::PlanGemm(problem, target, options);
  if (!plan.ok()) {
    return absl::Status(
        plan.status().code(),
        absl::StrCat("precompile ", shape, ": ", plan.status().message()));
  }
  if (absl::Status stored = CheckStored(*plan->compiled, bundle);
      !stored.ok()) {
    return stored;
  }
  std::string text = KernelLine(shape, *plan->compiled);
  if (plan->config.split_k == 1) return text;
  absl::StatusOr<std::string> reduce = gen::SplitKReduceSource(problem.element);
  if (!reduce.ok()) return reduce.status();
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      cache.GetOrCompile(gen::SplitKReduceKernelName(problem.element), *reduce,
                         {});
  if (!compiled.ok()) return compiled.status();
  if (absl::Status stored = CheckStored(**compiled, bundle); !stored.ok())
    return stored;
  return absl::StrCat(text,
                      KernelLine(absl::StrCat(shape, " split-K"), **compiled));
}

absl::StatusOr<std::string> RunPrecompile(const cli::ParsedFlags& flags) {
  absl::StatusOr<std::vector<gemm::GemmProblem>> problems =
      PrecompileProblems(flags);
  if (!problems.ok()) return problems.status();
  absl::StatusOr<int> given_sms = GivenSmCount(flags);
  if (!given_sms.ok()) return given_sms.status();
  gemm::GemmTarget target = gemm::GemmTarget::H200();
  if (*given_sms > 0) target.sm_count = *given_sms;
  absl::StatusOr<std::string> out = BundleFolder(flags);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::vector<std::string>> nvrtc =
      gemm::ParseNvrtcFlags(flags.Text("nvrtc-flags"));
  if (!nvrtc.ok()) return nvrtc.status();
  // A bundle is a cache folder of its own, nothing but its kernels: no
  // other folder is asked.
  std::unique_ptr<compile::KernelCache> bundle;
  if (!out->empty()) {
    // Refused before anything compiles (a link to a missing folder, a
    // folder others may write): a bundle must hold every kernel.
    absl::StatusOr<compile::TrustedFolder> folder =
        compile::TrustedFolder::Open(*out, /*create=*/true);
    if (!folder.ok()) return folder.status();
    bundle = std::make_unique<compile::KernelCache>(
        compile::CacheConfig{true, *out});
  }
  compile::KernelCache& cache =
      bundle ? *bundle : compile::KernelCache::Default();
  std::string text;
  for (const gemm::GemmProblem& problem : *problems) {
    absl::StatusOr<std::string> lines =
        PrecompileProblem(problem, target, *nvrtc, cache, bundle != nullptr);
    if (!lines.ok()) return lines.status();
    absl::StrAppend(&text, *lines);
  }
  return absl::StrCat(text, "in ", cache.config().directory, "\n");
}

}  // namespace

cli::Subcommand PrecompileSubcommand() {
  cli::Subcommand command;
  command.name = "precompile";
  command.summary =
      "compile, without a GPU, every kernel a list of GEMM problems needs into "
      "a cache folder an application can ship (PTXGEN_CACHE_PATH)";
  command.description =
      "Plans each plain problem (C = A * B^T, packed) of --shapes, or each\n"
      "problem of the --problems file (a line of 'ptxgen gemm' problem flags\n"
      "each: --m --n --k and --dtype, --a-major, --bias, --activation, ...;\n"
      "# starts a comment), for a device of --sms SMs as 'ptxgen gemm' and\n"
      "Gemm::Prepare would, and compiles the\n"
      "kernels the plan needs (split-K's reduce kernel too) into --out, else\n"
      "into the kernel cache. Prints one line per kernel: compiled, or "
      "already\n"
      "there. A folder made with --out serves as a read-only cache folder:\n"
      "  ptxgen precompile --shapes=8192x8192x8192 --out=/opt/app/kernels\n"
      "  PTXGEN_CACHE_PATH=/opt/app/kernels ./app\n"
      "It must then pass the cache's trust rule where it is read: owned by "
      "the\n"
      "user who runs the application (or root), writable by nobody else; so\n"
      "are its entries. A kernel the plan for another SM count or another\n"
      "ptxgen or NVRTC version needs is not in it: the key names them all.";
  command.flags = {
      cli::TextFlag("shapes", "MxNxK,...",
                    "Plain problems, e.g. 8192x8192x8192,4096x1024x512."),
      cli::TextFlag("problems", "FILE",
                    "Problems a line each, as 'ptxgen gemm' flags, e.g. "
                    "\"--m=16 --n=4096 --k=4096 --bias=n --activation=gelu\"."),
      cli::ScalarTypeFlag("dtype", "The type of A, B and D (--shapes only).",
                          "f16", gen::IsGemmElement),
      cli::IntegerFlag("sms", "N",
                       absl::StrCat("The SMs of the device to plan for (1..",
                                    runtime::kMaxTargetSms, ")."),
                       absl::StrCat(gemm::GemmTarget::H200().sm_count)),
      cli::TextFlag("out", "DIR",
                    "The folder to compile into (created with mode 0700). "
                    "Default: the kernel cache folder."),
      NvrtcFlagsFlag(),
  };
  command.examples = {
      "ptxgen precompile --shapes=4096x4096x4096,256x256x64",
      "ptxgen precompile --shapes=1024x1024x8192 --dtype=bf16 --sms=114",
  };
  command.run = RunPrecompile;
  return command;
}

cli::Subcommand GemmSubcommand() {
  cli::Subcommand command;
  command.name = "gemm";
  command.summary =
      "D = act(alpha * A * B + beta * C + bias) for an m x n x k problem: the "
      "generated kernel in any compiled view, or run on the GPU beside cuBLAS";
  command.description =
      "Picks a configuration for the problem (the heuristic, --autotune, or\n"
      "the one named by --config / --schedule and --block), generates the\n"
      "kernel and prints the requested view of it; the chosen configuration\n"
      "goes to stderr (then \"form ...\" for a problem other than the plain\n"
      "one). For each of --batch problems, all matrices row-major:\n"
      "  D = act(alpha * op(A) * op(B) + beta * C + bias)     C, D: [m,n]\n"
      "with A stored [m,k] (--a-major=k) or [k,m] (m), B stored [n,k]\n"
      "(--b-major=k) or [k,n] (n); f16 or bf16 in (fp8, tf32 and integers\n"
      "K-major only), f32 accumulation; fp8 (e4m3, e5m2) with per-tensor\n"
      "scales by --scaling=tensor (alpha * *scale_a * *scale_b, device\n"
      "scalars) or per block by --scaling=block, its sums promoted into\n"
      "f32 every 128 k unless --fast-accum; s8/u8 with exact s32 accumulation. "
      "The\n"
      "plain problem, no flags beyond --m --n --k --dtype, is C = A * B^T\n"
      "with A [m,k], B [n,k], C [m,n], packed.\n"
      "With --run (needs a GPU) it runs the kernel on random inputs, checks\n"
      "the result against cuBLAS and prints both times: the plain problem\n"
      "only (a general one is a usage error naming the flags that make it\n"
      "general).\n"
      "\n"
      "The same in cuBLAS, which is column-major: a row-major [r,c] matrix is\n"
      "a column-major c x r one with the same leading dimension, so cuBLAS\n"
      "computes D^T (n x m) = op(B) * op(A), with m and n and A and B "
      "swapped:\n"
      "  cublasGemmEx(handle, transa, transb, n, m, k, &alpha, B, ldb, A, "
      "lda,\n"
      "               &beta, C, ldc)   (types left out; CUBLAS_COMPUTE_32F)\n"
      "  A stored            B stored            transa        transb\n"
      "  [m,k] --a-major=k   [n,k] --b-major=k   CUBLAS_OP_T   CUBLAS_OP_N\n"
      "  [m,k] --a-major=k   [k,n] --b-major=n   CUBLAS_OP_N   CUBLAS_OP_N\n"
      "  [k,m] --a-major=m   [n,k] --b-major=k   CUBLAS_OP_T   CUBLAS_OP_T\n"
      "  [k,m] --a-major=m   [k,n] --b-major=n   CUBLAS_OP_N   CUBLAS_OP_T\n"
      "(transa applies to cuBLAS's first operand, ptxgen's B; transb to A.)\n"
      "--out-dtype is cublasGemmEx's Ctype, and --batch is\n"
      "cublasGemmStridedBatchedEx, the strides swapped like the operands.\n"
      "cublasGemmEx writes D over C; a D apart from C, a bias and an\n"
      "activation take cuBLASLt: cublasLtMatmul with the same operations,\n"
      "where CUBLASLT_EPILOGUE_BIAS adds n values, one per row of D^T, i.e.\n"
      "--bias=n; CUBLASLT_EPILOGUE_GELU_BIAS is --bias=n\n"
      "--activation=gelu_tanh (cuBLASLt's GELU is the tanh form), and\n"
      "CUBLASLT_EPILOGUE_RELU_BIAS is --bias=n --activation=relu; --bias=m\n"
      "has no cuBLASLt epilogue.";
  command.flags = ProblemFlags();
  for (cli::Flag flag : std::vector<cli::Flag>{
           cli::IntegerFlag(
               "sms", "N",
               absl::StrCat("Plan for a device with N SMs (1..",
                            runtime::kMaxTargetSms,
                            "), the heuristic's choice and the "
                            "persistent grid, instead of asking GPU 0 "
                            "or, without a GPU, assuming ",
                            gemm::GemmTarget::H200().sm_count,
                            ". With --run the kernel still runs on "
                            "GPU 0."),
               ""),
           cli::ChoiceFlag("schedule", "NAME",
                           {{"auto", "the heuristic's warp-specialized choice"},
                            {"cooperative",
                             "the heuristic's choice among kernels whose "
                             "consumers split each tile (ws)"},
                            {"pingpong",
                             "two consumers taking turns with whole 128x128 "
                             "tiles (pp)"},
                            {"v1", "the seed: one warpgroup, one stage"}},
                           "Which schedule family.", "auto"),
           cli::TextFlag("block", "MxNxK", "The tile, e.g. 128x128x64."),
           cli::TextFlag(
               "config", "NAME",
               "A full configuration name, e.g. \"ws 128x256x64 s3 c2 w1 m1 "
               "tma g16 persistent\"; not with --schedule, --block or "
               "--autotune."),
           cli::SwitchFlag(
               "autotune",
               "Time the schedule's candidates on the GPU and use the "
               "fastest (remembered in the cache folder); not with --block."),
           cli::SwitchFlag("run",
                           "Run on the GPU, check against cuBLAS, time both; "
                           "the plain problem only; not with --emit."),
           NvrtcFlagsFlag(),
           cli::EmitFlag(cli::CompiledViews(), "cuda"),
       }) {
    command.flags.push_back(std::move(flag));
  }
  command.examples = {
      "ptxgen gemm --m=8192 --n=8192 --k=8192 --emit=resources",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --schedule=v1 --block=128x128x64",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --dtype=bf16 --emit=ptx",
      "ptxgen gemm --m=1000 --n=999 --k=136 --emit=json",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --bias=n --activation=gelu",
      "ptxgen gemm --m=4096 --n=4096 --k=4096 --out-dtype=f32 --emit=resources",
      "ptxgen gemm --m=2048 --n=1024 --k=512 --a-major=m --beta=0.5 --ldc=1032",
      "ptxgen gemm --m=256 --n=512 --k=64 --batch=3 --lda=72 --sms=66",
      "ptxgen gemm --m=64 --n=64 --k=512 --dtype=s8 --out-dtype=s8 --alpha=.01",
  };
  command.run = RunGemm;
  return command;
}

}  // namespace ptxgen::tools
