#ifndef PTXGEN_TESTS_GEN_KERNEL_SWEEP_H_
#define PTXGEN_TESTS_GEN_KERNEL_SWEEP_H_

// Compiling many GEMM kernels in one go, each distinct kernel text once.
// Configurations that differ only in what a kernel reads at run time (the
// raster group, the launch policy) generate the same code under different
// kernel names, and a kernel's name changes nothing ptxas does: the sweep
// keys kernels by their text with the name taken out, and compiles one of
// each.

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::sweep {

class KernelSweep {
 public:
  // Adds `config` for `form`, made persistent (the launch policy does not
  // change the code); a case given twice counts once.
  void Add(const gen::GemmConfig& config, const gen::GemmForm& form);

  // Generates every case's text; refuses, naming the case, one that the
  // generator refuses.
  absl::Status Generate();

  // After Generate: how many cases, and how many distinct kernel texts.
  size_t cases() const { return cases_.size(); }
  size_t kernels() const { return kernels_.size(); }

  // After Generate: SHA-256 (hex) of what the compile results depend on:
  // the distinct texts in order, every NVRTC argument and NVRTC's version.
  std::string Digest() const;

  // After Generate: compiles each distinct kernel once, as GEMM kernels
  // are compiled (runtime::KernelCompileOptions), on every core; one line for
  // each kernel that does not compile without spills, a stack frame or a
  // ptxas diagnostic, naming the cases that generate it; spills only of
  // kernels gemm::PickedDespiteSpills names are allowed. Empty when all
  // are clean.
  std::vector<std::string> CompileProblems() const;

 private:
  struct Case {
    gen::GemmConfig config;
    gen::GemmForm form;
    std::string name;  // "<form> <configuration>"
  };
  struct Kernel {
    // SHA-256 (hex) of the text with its kernel name taken out.
    std::string identity;
    std::string name;  // the first case's kernel name
    std::string source;
    std::vector<std::string> cases;
    // Every case is one the heuristic picks despite spills
    // (gemm::PickedDespiteSpills): only its diagnostics count.
    bool spills_accepted = true;
  };
  std::vector<Case> cases_;
  std::set<std::string> case_names_;
  std::vector<Kernel> kernels_;  // sorted by identity
};

}  // namespace ptxgen::sweep

#endif  // PTXGEN_TESTS_GEN_KERNEL_SWEEP_H_
