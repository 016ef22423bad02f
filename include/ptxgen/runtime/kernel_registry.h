#ifndef PTXGEN_RUNTIME_KERNEL_REGISTRY_H_
#define PTXGEN_RUNTIME_KERNEL_REGISTRY_H_

// The loaded kernels of every family, by context and kernel identity:
// every GEMM and every attention of a context that plan the same kernel
// share one loaded module.

#include <memory>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cuda.h"

namespace ptxgen::runtime {

// What the registry holds of a loaded kernel: the family's own object,
// which it alone casts back (KernelLoadedIn).
using LoadedKernelHandle = std::shared_ptr<const void>;

// The kernel `identity` of `family` ("GEMM", "attention": each family
// keeps one type of loaded kernel) loaded in `context`: the one loaded
// before, or what `load` loads, kept for the process.
//
// Keyed by the context's ID (ContextId), not by CUcontext: a context
// created after another was destroyed may get its handle and must not find
// the dead context's modules. The dead context's entries stay, never
// looked up again: each holds its kernel's compiled module (some hundreds
// of KB) beside a module handle the driver freed with the context, which
// must not be unloaded a second time, and the driver says nothing when a
// context goes. A process that creates and destroys many contexts keeps
// that much per kernel per context; primary contexts, the usual case, live
// as long as the process. `load` runs outside the registry's lock; where
// two threads load one kernel at once, both get the first one kept.
absl::StatusOr<LoadedKernelHandle> FindOrLoadKernel(
    CUcontext context, absl::string_view family, absl::string_view identity,
    absl::FunctionRef<absl::StatusOr<LoadedKernelHandle>()> load);

// FindOrLoadKernel for a family whose loaded kernels are `Kernel`s.
template <typename Kernel>
absl::StatusOr<std::shared_ptr<const Kernel>> KernelLoadedIn(
    CUcontext context, absl::string_view family, absl::string_view identity,
    absl::FunctionRef<absl::StatusOr<std::shared_ptr<const Kernel>>()> load) {
  absl::StatusOr<LoadedKernelHandle> kernel = FindOrLoadKernel(
      context, family, identity,
      [&]() -> absl::StatusOr<LoadedKernelHandle> { return load(); });
  if (!kernel.ok()) return kernel.status();
  return std::static_pointer_cast<const Kernel>(*std::move(kernel));
}

}  // namespace ptxgen::runtime

#endif  // PTXGEN_RUNTIME_KERNEL_REGISTRY_H_
