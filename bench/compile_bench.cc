// Compile and cache timings of the GEMM kernels the library generates: the
// heuristic's pick for an 8192^3 f16 problem on 132 SMs (what Gemm::Prepare
// compiles for a large problem on an H100/H200) and the seed schedule
// v1 128x128x64.
//
//   bazel run -c opt //bench:compile_bench -- [cold_runs] [memory_runs]
//   bazel run -c opt //bench:compile_bench -- picks [--dtype=TYPE]
//       [--nvrtc-flags="FLAG ..."]
//
// Prints, per kernel, its size and ptxas report, then one Markdown table:
// the first compile of each kernel (the very first one in the process for
// the kernel timed first), cold compiles (a fresh empty cache directory each
// time), disk-cache hits (a new cache object over a filled directory, as a
// new process would see it) and memory-cache hits.
//
// picks: the phases of a cold request, for every kernel the heuristic
// picks on gemm_bench's two suites (f16 unless --dtype says, 132 SMs):
// generate, NVRTC's C++ front end, NVVM and ptxas (NVRTC's own -time
// report) of a compile alone, then the
// kernel cache's cold lookup (the same compile and the entry's write; the
// write is within the run-to-run spread of the compile, so it has no
// column of its own), and the source and PTX sizes; then the median and
// worst request against the cold-start issue's 250 ms and 400 ms. With a
// GPU, also the module load (the cubin loaded into device 0's primary
// context, its kernel found and its shared memory raised, as Prepare
// does); without one that column says so and requests leave it out.
// --nvrtc-flags compiles with further NVRTC options (GemmOptions::
// nvrtc_flags) and adds a column saying whether each CUBIN is the one
// the library's own compile gives: the same CUBIN runs at the same speed.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/shapes.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/compile/ptxas_report.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/target.h"
#include "ptxgen/version.h"

namespace {

using ptxgen::compile::CacheConfig;
using ptxgen::compile::CacheSource;
using ptxgen::compile::CompiledModule;
using ptxgen::compile::CompileOptions;
using ptxgen::compile::KernelCache;
using ptxgen::compile::KernelResources;
using ptxgen::compile::ParsePtxasReport;
using ptxgen::gen::GeneratedGemm;

struct BenchKernel {
  std::string role;  // why this kernel is in the benchmark
  GeneratedGemm generated;
};

struct Row {
  std::string kernel;
  std::string what;
  std::vector<double> ms;
};

struct KernelTimings {
  std::vector<Row> rows;
  std::shared_ptr<const CompiledModule> last_cold;
};

absl::StatusOr<BenchKernel> Generate(std::string role,
                                     const ptxgen::gen::GemmConfig& config) {
  absl::StatusOr<GeneratedGemm> generated =
      ptxgen::gen::GenerateGemm(config, ptxgen::ptx::ScalarType::kF16);
  if (!generated.ok()) return generated.status();
  return BenchKernel{std::move(role), *std::move(generated)};
}

// The heuristic kernel goes first, so that its first compile is also the
// process's first use of NVRTC.
absl::StatusOr<std::vector<BenchKernel>> BenchKernels() {
  absl::StatusOr<BenchKernel> heuristic =
      Generate("heuristic pick, 8192^3 f16, 132 SMs",
               ptxgen::gemm::HeuristicConfig(
                   {8192, 8192, 8192, ptxgen::ptx::ScalarType::kF16},
                   ptxgen::gemm::GemmTarget::H200()));
  if (!heuristic.ok()) return heuristic.status();
  absl::StatusOr<ptxgen::gen::GemmConfig> seed =
      ptxgen::gen::ParseConfigName("v1 128x128x64");
  if (!seed.ok()) return seed.status();
  absl::StatusOr<BenchKernel> v1 = Generate("seed schedule", *seed);
  if (!v1.ok()) return v1.status();
  return std::vector<BenchKernel>{*std::move(heuristic), *std::move(v1)};
}

// A lookup served from anywhere but `expected` would time the wrong thing.
absl::StatusOr<std::shared_ptr<const CompiledModule>> Lookup(
    KernelCache& cache, const GeneratedGemm& kernel,
    const CompileOptions& options, CacheSource expected) {
  absl::StatusOr<std::shared_ptr<const CompiledModule>> module =
      cache.GetOrCompile(kernel.kernel_name, kernel.source, options);
  if (!module.ok()) return module.status();
  if ((*module)->source != expected) {
    return absl::InternalError(
        absl::StrCat(kernel.kernel_name, ": unexpected cache source"));
  }
  return module;
}

// Run 0 is the kernel's first compile; every run compiles into its own
// directory under `root` so that nothing earlier can answer it.
absl::StatusOr<KernelTimings> TimeKernel(const GeneratedGemm& kernel,
                                         bool first_in_process,
                                         const std::filesystem::path& root,
                                         int cold_runs, int memory_runs) {
  const std::string name = ptxgen::gen::ConfigName(kernel.config);
  Row first{name,
            first_in_process ? "cold compile, first in process"
                             : "cold compile, first of this kernel",
            {}};
  Row cold{name, "cold compile (fresh cache dir)", {}};
  Row disk{name, "disk-cache hit (new cache object)", {}};
  Row memory{name, "memory-cache hit", {}};
  KernelTimings timings;
  for (int run = 0; run <= cold_runs; ++run) {
    KernelCache cache(
        CacheConfig{true, (root / absl::StrCat("run", run)).string()});
    auto compiled =
        Lookup(cache, kernel, ptxgen::runtime::KernelCompileOptions({}),
               CacheSource::kCompiled);
    if (!compiled.ok()) return compiled.status();
    (run == 0 ? first : cold).ms.push_back((*compiled)->compile_ms);
    timings.last_cold = *compiled;
    KernelCache reader(cache.config());
    auto loaded =
        Lookup(reader, kernel, ptxgen::runtime::KernelCompileOptions({}),
               CacheSource::kDiskCache);
    if (!loaded.ok()) return loaded.status();
    disk.ms.push_back((*loaded)->compile_ms);
    for (int i = 0; run == 0 && i < memory_runs; ++i) {
      auto hit =
          Lookup(reader, kernel, ptxgen::runtime::KernelCompileOptions({}),
                 CacheSource::kMemoryCache);
      if (!hit.ok()) return hit.status();
      memory.ms.push_back((*hit)->compile_ms);
    }
  }
  timings.rows = {first, cold, disk, memory};
  return timings;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The report of the kernel itself: ptxas lists every entry of the module.
absl::StatusOr<KernelResources> ResourcesOf(const CompiledModule& module,
                                            const std::string& kernel) {
  for (const KernelResources& resources : module.resources) {
    if (resources.kernel == kernel) return resources;
  }
  return absl::NotFoundError(
      absl::StrCat("no ptxas report for kernel ", kernel));
}

absl::Status PrintKernel(const BenchKernel& kernel,
                         const CompiledModule& compiled) {
  const GeneratedGemm& generated = kernel.generated;
  absl::StatusOr<KernelResources> resources =
      ResourcesOf(compiled, generated.kernel_name);
  if (!resources.ok()) return resources.status();
  std::cout << absl::StrFormat(
      "%s: `%s` (%s), %d source bytes, %d threads, %d B dynamic smem\n"
      "  registers %d, static smem %d B, spills %d/%d B, %d ptxas "
      "diagnostics, ptxas share of the last cold compile %.1f ms\n",
      kernel.role, ptxgen::gen::ConfigName(generated.config),
      generated.kernel_name, generated.source.size(),
      generated.threads_per_block, generated.shared_bytes, resources->registers,
      resources->static_shared_bytes, resources->spill_store_bytes,
      resources->spill_load_bytes, compiled.diagnostics.size(),
      ParsePtxasReport(compiled.log).ptxas_milliseconds);
  for (const auto& diagnostic : compiled.diagnostics) {
    std::cout << "    " << diagnostic.message << "\n";
  }
  return absl::OkStatus();
}

void PrintTable(const std::vector<Row>& rows) {
  std::cout << "| kernel | case | runs | median ms | min ms | max ms |\n"
               "|---|---|---:|---:|---:|---:|\n";
  for (const Row& row : rows) {
    std::cout << absl::StrFormat(
        "| `%s` | %s | %d | %.3f | %.3f | %.3f |\n", row.kernel, row.what,
        row.ms.size(), Median(row.ms),
        *std::min_element(row.ms.begin(), row.ms.end()),
        *std::max_element(row.ms.begin(), row.ms.end()));
  }
}

// Prints each kernel's report as it is timed; appends its rows to `rows`.
absl::Status TimeKernels(const std::vector<BenchKernel>& kernels,
                         const std::filesystem::path& root, int cold_runs,
                         int memory_runs, std::vector<Row>& rows) {
  for (size_t i = 0; i < kernels.size(); ++i) {
    absl::StatusOr<KernelTimings> timings =
        TimeKernel(kernels[i].generated, i == 0,
                   root / absl::StrCat("kernel", i), cold_runs, memory_runs);
    if (!timings.ok()) return timings.status();
    absl::Status printed = PrintKernel(kernels[i], *timings->last_cold);
    if (!printed.ok()) return printed;
    rows.insert(rows.end(), timings->rows.begin(), timings->rows.end());
  }
  return absl::OkStatus();
}

// ---- picks ----

// What `picks` compiles: the suites in one input type, with further NVRTC
// flags (none: the library's own compile).
struct PicksFlags {
  ptxgen::ptx::ScalarType dtype = ptxgen::ptx::ScalarType::kF16;
  std::vector<std::string> nvrtc_flags;
};

// One distinct kernel the heuristic picks, and the shapes that pick it.
struct Pick {
  GeneratedGemm generated;
  double generate_ms = 0;
  std::vector<std::string> shapes;
};

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

absl::StatusOr<std::vector<Pick>> SuitePicks(ptxgen::ptx::ScalarType dtype) {
  std::vector<ptxgen::gemm::GemmProblem> problems = ptxgen::gemm::SuiteShapes();
  for (const ptxgen::gemm::GemmProblem& small : ptxgen::gemm::SmallShapes()) {
    problems.push_back(small);
  }
  std::vector<Pick> picks;
  for (ptxgen::gemm::GemmProblem& problem : problems) {
    problem.element = dtype;
    const auto start = std::chrono::steady_clock::now();
    const ptxgen::gen::GemmConfig config = ptxgen::gemm::HeuristicConfig(
        problem, ptxgen::gemm::GemmTarget::H200());
    absl::StatusOr<GeneratedGemm> generated =
        ptxgen::gen::GenerateGemm(config, ptxgen::gemm::FormOf(problem));
    if (!generated.ok()) return generated.status();
    const double generate_ms = MillisecondsSince(start);
    const std::string shape =
        absl::StrCat(problem.m, "x", problem.n, "x", problem.k);
    auto same = std::find_if(picks.begin(), picks.end(), [&](const Pick& pick) {
      return pick.generated.kernel_name == generated->kernel_name;
    });
    if (same != picks.end()) {
      same->shapes.push_back(shape);
    } else {
      picks.push_back(Pick{*std::move(generated), generate_ms, {shape}});
    }
  }
  return picks;
}

// Milliseconds to load `compiled` and ready its kernel for a launch of
// `shared_bytes` of dynamic shared memory, in the current context.
absl::StatusOr<double> ModuleLoadMilliseconds(const CompiledModule& compiled,
                                              const GeneratedGemm& generated) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ptxgen::runtime::Module> module =
      ptxgen::runtime::Module::LoadCubin(compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<ptxgen::runtime::Function> function =
      module->GetFunction(generated.kernel_name);
  if (!function.ok()) return function.status();
  if (absl::Status raised =
          function->SetMaxDynamicSharedMemory(generated.shared_bytes);
      !raised.ok()) {
    return raised;
  }
  return MillisecondsSince(start);
}

// NVRTC's own phases of one compile, as its -time report gives them.
struct NvrtcPhases {
  double front_end_ms = -1;  // "CUDA C++ Frontend"
  double nvvm_ms = -1;       // "NVVM Optimizer": LLVM, then PTX out
  double ptxas_ms = -1;      // "PTX Translation"
};

// Compiles `pick` alone with `options` plus -time into `report`, and reads
// the phases back ("file, phase, metric, unit" lines).
absl::StatusOr<NvrtcPhases> TimedCompile(const GeneratedGemm& pick,
                                         CompileOptions options,
                                         const std::filesystem::path& report,
                                         CompiledModule& compiled) {
  options.flags.push_back(absl::StrCat("-time=", report.string()));
  absl::StatusOr<CompiledModule> alone =
      ptxgen::compile::CompileCuda(pick.kernel_name, pick.source, options);
  if (!alone.ok()) return alone.status();
  compiled = *std::move(alone);
  std::ifstream lines(report);
  NvrtcPhases phases;
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> fields = absl::StrSplit(line, ", ");
    double ms = 0;
    if (fields.size() != 4 || !absl::SimpleAtod(fields[2], &ms)) continue;
    if (fields[1] == "CUDA C++ Frontend") phases.front_end_ms = ms;
    if (fields[1] == "NVVM Optimizer") phases.nvvm_ms = ms;
    if (fields[1] == "PTX Translation") phases.ptxas_ms = ms;
  }
  if (phases.front_end_ms < 0 || phases.nvvm_ms < 0 || phases.ptxas_ms < 0) {
    return absl::InternalError(absl::StrCat(
        "NVRTC's -time report ", report.string(),
        " lacks a phase (CUDA C++ Frontend, NVVM Optimizer, PTX Translation)"));
  }
  return phases;
}

// Each pick compiled cold twice: alone (NVRTC's phases from its -time
// report) and through a kernel cache over an empty folder (the same
// compile, then the entry's write), then loaded where there is a GPU: the
// request. With NVRTC flags, also whether the CUBIN is the one the
// library's own compile gives (then the kernel's speed is unchanged).
absl::Status RunPicks(const std::filesystem::path& root,
                      const PicksFlags& flags) {
  absl::StatusOr<std::vector<Pick>> picks = SuitePicks(flags.dtype);
  if (!picks.ok()) return picks.status();
  absl::StatusOr<const ptxgen::runtime::PrimaryContext*> gpu =
      ptxgen::runtime::RetainedPrimaryContext(0);
  if (gpu.ok()) {
    if (absl::Status current = (*gpu)->SetCurrent(); !current.ok())
      return current;
  } else {
    std::cout << "no module load (no GPU: " << gpu.status().message() << ")\n";
  }
  std::filesystem::create_directories(root);
  const CompileOptions options =
      ptxgen::runtime::KernelCompileOptions(flags.nvrtc_flags);
  const bool flagged = !flags.nvrtc_flags.empty();
  std::cout << absl::StrFormat(
      "%s suites, NVRTC flags: %s\n"
      "| kernel | shapes | source KB | PTX KB | generate ms | C++ front end ms "
      "| NVVM ms | ptxas ms | cold lookup ms | module load ms | request ms "
      "|%s\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s\n",
      ptxgen::ptx::PtxName(flags.dtype),
      flagged ? absl::StrJoin(flags.nvrtc_flags, " ") : "none",
      flagged ? " CUBIN |" : "", flagged ? "---|" : "");
  std::vector<double> requests;
  for (size_t i = 0; i < picks->size(); ++i) {
    const Pick& pick = (*picks)[i];
    CompiledModule alone;
    absl::StatusOr<NvrtcPhases> phases =
        TimedCompile(pick.generated, options, root / "phases.csv", alone);
    if (!phases.ok()) return phases.status();
    KernelCache cache(
        CacheConfig{true, (root / absl::StrCat("pick", i)).string()});
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::shared_ptr<const CompiledModule>> cached =
        Lookup(cache, pick.generated, options, CacheSource::kCompiled);
    if (!cached.ok()) return cached.status();
    const double lookup_ms = MillisecondsSince(start);
    double request_ms = pick.generate_ms + lookup_ms;
    std::string load_column = "no GPU";
    if (gpu.ok()) {
      absl::StatusOr<double> load_ms =
          ModuleLoadMilliseconds(**cached, pick.generated);
      if (!load_ms.ok()) return load_ms.status();
      request_ms += *load_ms;
      load_column = absl::StrFormat("%.1f", *load_ms);
    }
    std::string cubin_column;
    if (flagged) {
      absl::StatusOr<CompiledModule> plain = ptxgen::compile::CompileCuda(
          pick.generated.kernel_name, pick.generated.source,
          ptxgen::runtime::KernelCompileOptions({}));
      if (!plain.ok()) return plain.status();
      cubin_column = plain->cubin == alone.cubin ? " same |" : " differs |";
    }
    requests.push_back(request_ms);
    std::cout << absl::StrFormat(
        "| `%s` | %s | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f | %.0f | %s | "
        "%.0f |%s\n",
        ptxgen::gen::ConfigName(pick.generated.config),
        absl::StrJoin(pick.shapes, ", "), pick.generated.source.size() / 1024.0,
        alone.ptx.size() / 1024.0, pick.generate_ms, phases->front_end_ms,
        phases->nvvm_ms, phases->ptxas_ms, lookup_ms, load_column, request_ms,
        cubin_column);
  }
  std::cout << absl::StrFormat(
      "\n%d kernels; request (generate + cold lookup%s): median %.0f ms, worst "
      "%.0f ms "
      "(the cold-start issue's targets: 250 and 400 ms)\n",
      requests.size(), gpu.ok() ? " + module load" : ", no module load",
      Median(requests), *std::max_element(requests.begin(), requests.end()));
  return absl::OkStatus();
}

// `picks` when set, else the cold/disk/memory table of the two kernels.
absl::Status Run(const std::optional<PicksFlags>& picks, int cold_runs,
                 int memory_runs) {
  std::cout << absl::StrFormat("NVRTC %s, ptxgen %s\n",
                               ptxgen::compile::NvrtcVersion(),
                               ptxgen::kVersion);
  // error_code forms: a bad $TMPDIR is a message, not an exception.
  std::error_code error;
  const std::filesystem::path temporary =
      std::filesystem::temp_directory_path(error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no temporary directory for the cache folders: ", error.message(),
        " (check $TMPDIR)"));
  }
  const std::filesystem::path root =
      temporary / absl::StrCat("ptxgen-compile-bench-", getpid());
  std::vector<Row> rows;
  absl::StatusOr<std::vector<BenchKernel>> kernels =
      picks ? std::vector<BenchKernel>{} : BenchKernels();
  absl::Status status =
      !kernels.ok() ? kernels.status()
      : picks       ? RunPicks(root, *picks)
                    : TimeKernels(*kernels, root, cold_runs, memory_runs, rows);
  // Each cold run leaves a cache directory behind, failed runs included.
  std::filesystem::remove_all(root, error);
  if (!status.ok()) return status;
  if (error) {
    std::cerr << "compile_bench: warning: cannot remove " << root << ": "
              << error.message() << "\n";
  }
  if (picks) return absl::OkStatus();
  std::cout << "\n";
  PrintTable(rows);
  return absl::OkStatus();
}

// The count at argv[index], `fallback` when absent, -1 when not a positive
// number.
int RunsArgument(int argc, char** argv, int index, int fallback) {
  int runs = fallback;
  if (argc > index && (!absl::SimpleAtoi(argv[index], &runs) || runs < 1)) {
    return -1;
  }
  return runs;
}

// `picks`' flags after argv[1]: --dtype=TYPE, --nvrtc-flags="FLAG ...".
absl::StatusOr<PicksFlags> ParsePicksFlags(int argc, char** argv) {
  PicksFlags flags;
  for (int i = 2; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    absl::string_view value = arg;
    if (absl::ConsumePrefix(&value, "--dtype=")) {
      absl::StatusOr<ptxgen::ptx::ScalarType> type =
          ptxgen::ptx::ParseScalarType(value);
      if (!type.ok()) return type.status();
      flags.dtype = *type;
    } else if (absl::ConsumePrefix(&value, "--nvrtc-flags=")) {
      absl::StatusOr<std::vector<std::string>> nvrtc =
          ptxgen::gemm::ParseNvrtcFlags(value);
      if (!nvrtc.ok()) return nvrtc.status();
      flags.nvrtc_flags = *std::move(nvrtc);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
  }
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: compile_bench [cold_runs] [memory_runs] (two positive integers "
      "at most)\n"
      "       compile_bench picks [--dtype=TYPE] [--nvrtc-flags=\"FLAG "
      "...\"]\n";
  std::optional<PicksFlags> picks;
  if (argc >= 2 && std::string(argv[1]) == "picks") {
    absl::StatusOr<PicksFlags> flags = ParsePicksFlags(argc, argv);
    if (!flags.ok()) {
      std::cerr << "compile_bench: " << flags.status().message() << "\n"
                << usage;
      return 2;
    }
    picks = *flags;
  }
  const int cold_runs = picks ? 1 : RunsArgument(argc, argv, 1, 7);
  const int memory_runs = picks ? 1 : RunsArgument(argc, argv, 2, 1000);
  if ((!picks && argc > 3) || cold_runs < 1 || memory_runs < 1) {
    std::cerr << usage;
    return 2;
  }
  if (absl::Status status = Run(picks, cold_runs, memory_runs); !status.ok()) {
    std::cerr << "compile_bench: " << status << "\n";
    return 1;
  }
  return 0;
}
