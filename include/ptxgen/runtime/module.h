#ifndef PTXGEN_RUNTIME_MODULE_H_
#define PTXGEN_RUNTIME_MODULE_H_

// Loaded modules, their kernels, and launches.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::runtime {

// A grid, block or cluster shape.
struct Dim3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

// The largest cluster every sm_90 device runs; larger ones need the
// non-portable cluster attribute, which ptxgen does not set.
inline constexpr int kMaxPortableClusterSize = 8;

// Without an opt-in, a kernel's static plus dynamic shared memory is at most
// this.
inline constexpr int kDefaultSharedBytesLimit = 48 * 1024;

// How one kernel launch runs.
struct LaunchConfig {
  Dim3 grid;   // in blocks
  Dim3 block;  // in threads
  // Blocks per cluster; {1, 1, 1} is a plain launch. Must divide `grid`.
  Dim3 cluster;
  int shared_bytes = 0;  // dynamic shared memory per block
  CUstream stream = nullptr;
};

// Checks the launch shape against the hardware's limits (grid, block,
// cluster); the message names the broken rule. Pure: needs no driver.
absl::Status ValidateLaunchConfig(const LaunchConfig& config);

// A kernel of a loaded Module; valid while that Module lives.
class Function {
 public:
  // Lets the kernel use `bytes` of dynamic shared memory. Needed above
  // 48 KB (less the kernel's static shared memory); refused beyond the
  // device's opt-in maximum with a message that gives both figures.
  absl::Status SetMaxDynamicSharedMemory(int bytes) const;

  // Launches on config.stream; `args` points to one pointer per kernel
  // parameter (may be null for a kernel without parameters). Clusters go
  // through cuLaunchKernelEx. Asynchronous: execution errors show up at the
  // next synchronization.
  absl::Status Launch(const LaunchConfig& config, void** args) const;

  // How many clusters of `config.cluster` (with its block and shared size)
  // can be resident at once. Clusters must fit inside one GPC, so on a
  // device whose GPCs have odd SM counts this is less than SMs / cluster
  // size: a persistent grid must be sized from it, or part of it waits for
  // a second wave.
  absl::StatusOr<int> MaxActiveClusters(const LaunchConfig& config) const;

  const std::string& name() const { return name_; }
  CUfunction get() const { return function_; }

 private:
  friend class Module;
  Function(const Driver* driver, CUfunction function, std::string name)
      : driver_(driver), function_(function), name_(std::move(name)) {}
  absl::StatusOr<int> Attribute(CUfunction_attribute attribute) const;
  absl::Status CheckDynamicShared(int bytes) const;
  absl::Status LaunchPlain(const LaunchConfig& config, void** args) const;
  absl::Status LaunchCluster(const LaunchConfig& config, void** args) const;

  const Driver* driver_;
  CUfunction function_;
  std::string name_;
};

// A module loaded into the current context; unloaded on destruction.
class Module {
 public:
  // Loads the CUBIN of `compiled`, after checking that its architecture
  // (compiled.options.arch) runs on the current context's device: sm_90a
  // code is refused on anything but compute capability 9.0.
  static absl::StatusOr<Module> LoadCubin(
      const compile::CompiledModule& compiled);

  // JIT-compiles PTX text through the driver; the .target directive is
  // checked against the device first, and on failure the driver's error
  // log is part of the status.
  static absl::StatusOr<Module> LoadPtx(absl::string_view ptx);

  // The kernel named `name` (mangled, or as declared extern "C").
  absl::StatusOr<Function> GetFunction(absl::string_view name) const;

  CUmodule get() const { return module_.get(); }

 private:
  struct Unload {
    const Driver* driver;
    void operator()(CUmod_st* module) const;
  };
  static absl::StatusOr<Module> LoadImage(const Driver& driver,
                                          const std::string& image,
                                          absl::string_view what);
  Module(const Driver* driver, CUmodule module)
      : module_(module, Unload{driver}) {}

  std::unique_ptr<CUmod_st, Unload> module_;
};

// A generated kernel loaded: its module and its function, which may use
// `shared_bytes` of dynamic shared memory (opted in beyond 48 KB).
struct LoadedFunction {
  Module module;
  Function function;
};

// LoadCubin, GetFunction(name), SetMaxDynamicSharedMemory(shared_bytes):
// what every kernel family does to load a kernel it planned.
absl::StatusOr<LoadedFunction> LoadKernelFunction(
    const compile::CompiledModule& compiled, absl::string_view name,
    int shared_bytes);

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_MODULE_H_
