#include "tests/gen/kernel_sweep.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/sha256.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"

namespace ptxgen::sweep {
namespace {

// What a kernel compiled as GEMM kernels are; part of the digest.
compile::CompileOptions SweepOptions() {
  return runtime::KernelCompileOptions({});
}

// A problem with one compiled kernel, or "" when it is clean.
std::string ProblemOf(const absl::StatusOr<compile::CompiledModule>& compiled,
                      bool spills_accepted) {
  if (!compiled.ok()) return compiled.status().ToString();
  if (compiled->resources.size() != 1) {
    return absl::StrCat("ptxas reported ", compiled->resources.size(),
                        " kernels, not 1");
  }
  const compile::KernelResources& resources = compiled->resources[0];
  if (!spills_accepted &&
      (resources.spill_store_bytes != 0 || resources.spill_load_bytes != 0 ||
       resources.stack_frame_bytes != 0)) {
    return absl::StrCat("spills ", resources.spill_store_bytes, " bytes out, ",
                        resources.spill_load_bytes, " in, stack frame ",
                        resources.stack_frame_bytes);
  }
  if (!compiled->diagnostics.empty()) {
    return compiled->diagnostics.front().message;
  }
  return "";
}

}  // namespace

void KernelSweep::Add(const gen::GemmConfig& config,
                      const gen::GemmForm& form) {
  gen::GemmConfig code = config;
  code.persistent = true;
  std::string name =
      absl::StrCat(gen::FormName(form), " ", gen::ConfigName(code));
  if (!case_names_.insert(name).second) return;
  cases_.push_back({code, form, std::move(name)});
}

absl::Status KernelSweep::Generate() {
  std::map<std::string, Kernel> by_identity;
  for (const Case& c : cases_) {
    absl::StatusOr<gen::GeneratedGemm> gemm =
        gen::GenerateGemm(c.config, c.form);
    if (!gemm.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(c.name, ": ", gemm.status().message()));
    }
    const std::string identity = compile::Sha256Hex(
        absl::StrReplaceAll(gemm->source, {{gemm->kernel_name, "KERNEL"}}));
    Kernel& kernel = by_identity[identity];
    if (kernel.cases.empty()) {
      kernel = {identity, gemm->kernel_name, std::move(gemm->source), {}};
    }
    kernel.cases.push_back(c.name);
    kernel.spills_accepted =
        kernel.spills_accepted && gemm::PickedDespiteSpills(c.form, c.config);
  }
  kernels_.clear();
  for (auto& [identity, kernel] : by_identity) {
    kernels_.push_back(std::move(kernel));
  }
  return absl::OkStatus();
}

std::string KernelSweep::Digest() const {
  std::string material = absl::StrCat(
      "nvrtc ", compile::NvrtcVersion(), "\narguments ",
      absl::StrJoin(compile::NvrtcArguments(SweepOptions()), " "), "\n");
  for (const Kernel& kernel : kernels_) {
    absl::StrAppend(&material, kernel.identity, "\n");
  }
  return compile::Sha256Hex(material);
}

std::vector<std::string> KernelSweep::CompileProblems() const {
  const compile::CompileOptions options = SweepOptions();
  std::vector<std::string> problems(kernels_.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < kernels_.size(); i = next++) {
      problems[i] = ProblemOf(
          compile::CompileCuda(kernels_[i].name, kernels_[i].source, options),
          kernels_[i].spills_accepted);
      if (!problems[i].empty()) {
        problems[i] = absl::StrCat(absl::StrJoin(kernels_[i].cases, ", "), ": ",
                                   problems[i]);
      }
    }
  };
  std::vector<std::thread> workers;
  const unsigned count = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned w = 0; w < count; ++w) workers.emplace_back(work);
  for (std::thread& worker : workers) worker.join();
  problems.erase(std::remove(problems.begin(), problems.end(), ""),
                 problems.end());
  return problems;
}

}  // namespace ptxgen::sweep
