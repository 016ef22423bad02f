// Compile and cache timings of a representative generated kernel: four
// wgmma m64n256k16 inline-asm statements per K step, no includes.
//
//   bazel run //bench:compile_bench -- [cold_runs] [memory_runs]
//
// Prints a Markdown table: the first compile in the process, cold compiles
// (a fresh empty cache directory each time), disk-cache hits (a new cache
// object over a filled directory, as a new process would see it) and
// memory-cache hits.

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/version.h"

namespace {

using ptxgen::compile::CacheConfig;
using ptxgen::compile::CacheSource;
using ptxgen::compile::CompiledModule;
using ptxgen::compile::CompileOptions;
using ptxgen::compile::KernelCache;

constexpr int kAccumulators = 128;  // f32 accumulators of m64n256 per thread

// One wgmma.mma_async m64n256k16 f32 += f16 * f16, both operands from shared
// memory descriptors; scale-d is 0 on the first K step.
std::string WgmmaStatement(int k) {
  std::string registers;
  std::string outputs;
  for (int i = 0; i < kAccumulators; ++i) {
    absl::StrAppend(&registers, i == 0 ? "" : ", ", "%", i);
    absl::StrAppend(&outputs, i == 0 ? "" : ", ", "\"+f\"(d[", i, "])");
  }
  return absl::StrCat("    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %",
                      kAccumulators + 2,
                      ", 0;\\n\"\n"
                      "                 "
                      "\"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {",
                      registers, "}, %", kAccumulators, ", %",
                      kAccumulators + 1,
                      ", p, 1, 1, 0, 0;\\n}\\n\"\n"
                      "                 : ",
                      outputs,
                      "\n"
                      "                 : \"l\"(desc_a + ",
                      2 * k, "), \"l\"(desc_b + ", 2 * k, "), \"r\"(kt > 0 || ",
                      k, " > 0 ? 1 : 0));\n");
}

// A 64x256 tile main loop as the GEMM generators emit it.
std::string BenchKernelSource() {
  std::string source = absl::StrCat(
      "extern \"C\" __global__ void __launch_bounds__(128, 1)\n"
      "bench_wgmma(float* out, unsigned long long desc_a,\n"
      "            unsigned long long desc_b, int k_tiles) {\n"
      "  float d[",
      kAccumulators,
      "];\n"
      "  for (int kt = 0; kt < k_tiles; ++kt) {\n"
      "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n");
  for (int k = 0; k < 4; ++k) absl::StrAppend(&source, WgmmaStatement(k));
  absl::StrAppend(&source,
                  "    asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" "
                  "::: \"memory\");\n"
                  "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" "
                  "::: \"memory\");\n"
                  "    desc_a += 64;\n"
                  "    desc_b += 64;\n"
                  "  }\n"
                  "#pragma unroll\n"
                  "  for (int i = 0; i < ",
                  kAccumulators, "; ++i) out[threadIdx.x * ", kAccumulators,
                  " + i] = d[i];\n"
                  "}\n");
  return source;
}

struct Row {
  std::string what;
  std::vector<double> ms;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// ptxas's own time for the module, summed from its "Compile time = X ms"
// lines; the rest of a cold compile is the NVRTC front end.
double PtxasMilliseconds(const std::string& log) {
  double total = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.find("Compile time = ");
    double ms = 0;
    if (at == absl::string_view::npos) continue;
    absl::string_view value = line.substr(at + 15);
    if (absl::ConsumeSuffix(&value, " ms") && absl::SimpleAtod(value, &ms))
      total += ms;
  }
  return total;
}

// Fails loudly: a benchmark of a kernel that does not compile means nothing.
std::shared_ptr<const CompiledModule> MustGet(KernelCache& cache,
                                              const std::string& source,
                                              CacheSource expected) {
  auto module = cache.GetOrCompile("bench_wgmma", source, CompileOptions{});
  if (!module.ok()) {
    std::cerr << module.status() << "\n";
    std::exit(1);
  }
  if ((*module)->source != expected) {
    std::cerr << "compile_bench: unexpected cache source\n";
    std::exit(1);
  }
  return *module;
}

int RunsArgument(int argc, char** argv, int index, int fallback) {
  int runs = fallback;
  if (argc > index && (!absl::SimpleAtoi(argv[index], &runs) || runs < 1)) {
    std::cerr << "usage: compile_bench [cold_runs] [memory_runs]\n";
    std::exit(2);
  }
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  const int cold_runs = RunsArgument(argc, argv, 1, 7);
  const int memory_runs = RunsArgument(argc, argv, 2, 1000);
  const std::string source = BenchKernelSource();
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      absl::StrCat("ptxgen-compile-bench-", getpid());

  Row first{"cold compile, first in process", {}};
  Row cold{"cold compile (fresh cache dir)", {}};
  Row disk{"disk-cache hit (new cache object)", {}};
  Row memory{"memory-cache hit", {}};
  std::shared_ptr<const CompiledModule> compiled;
  for (int run = 0; run <= cold_runs; ++run) {
    KernelCache cache(
        CacheConfig{true, (root / absl::StrCat("run", run)).string()});
    compiled = MustGet(cache, source, CacheSource::kCompiled);
    (run == 0 ? first : cold).ms.push_back(compiled->compile_ms);
    KernelCache reader(cache.config());
    disk.ms.push_back(
        MustGet(reader, source, CacheSource::kDiskCache)->compile_ms);
    if (run == 0) {
      for (int i = 0; i < memory_runs; ++i) {
        memory.ms.push_back(
            MustGet(reader, source, CacheSource::kMemoryCache)->compile_ms);
      }
    }
  }
  std::filesystem::remove_all(root);

  const auto& kernel = compiled->resources.at(0);
  std::cout << absl::StrFormat(
      "kernel: 4 x wgmma m64n256k16 per K step, %d source bytes, no includes\n"
      "registers %d, static smem %d B, spills %d/%d B, %d ptxas diagnostics\n"
      "NVRTC %s, ptxgen %s, ptxas share of the last cold compile: %.1f ms\n\n",
      source.size(), kernel.registers, kernel.static_shared_bytes,
      kernel.spill_store_bytes, kernel.spill_load_bytes,
      compiled->diagnostics.size(), ptxgen::compile::NvrtcVersion(),
      ptxgen::kVersion, PtxasMilliseconds(compiled->log));
  for (const auto& diagnostic : compiled->diagnostics) {
    std::cout << "  " << diagnostic.message << "\n";
  }
  std::cout << "| case | runs | median ms | min ms | max ms |\n"
               "|---|---:|---:|---:|---:|\n";
  for (const Row* row : {&first, &cold, &disk, &memory}) {
    std::cout << absl::StrFormat(
        "| %s | %d | %.3f | %.3f | %.3f |\n", row->what, row->ms.size(),
        Median(row->ms), *std::min_element(row->ms.begin(), row->ms.end()),
        *std::max_element(row->ms.begin(), row->ms.end()));
  }
  return 0;
}
