#include "ptxgen/runtime/kernel_registry.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "ptxgen/runtime/context.h"

namespace ptxgen::runtime {
namespace {

struct Registry {
  using Key = std::tuple<uint64_t, std::string, std::string>;
  absl::Mutex mutex;
  std::map<Key, LoadedKernelHandle> kernels ABSL_GUARDED_BY(mutex);
};

Registry& LoadedKernels() {
  static auto* const registry = new Registry;
  return *registry;
}

}  // namespace

absl::StatusOr<LoadedKernelHandle> FindOrLoadKernel(
    CUcontext context, absl::string_view family, absl::string_view identity,
    absl::FunctionRef<absl::StatusOr<LoadedKernelHandle>()> load) {
  absl::StatusOr<uint64_t> context_id = ContextId(context);
  if (!context_id.ok()) return context_id.status();
  Registry& registry = LoadedKernels();
  Registry::Key key{*context_id, std::string(family), std::string(identity)};
  {
    absl::MutexLock lock(&registry.mutex);
    auto it = registry.kernels.find(key);
    if (it != registry.kernels.end()) return it->second;
  }
  absl::StatusOr<LoadedKernelHandle> loaded = load();
  if (!loaded.ok()) return loaded.status();
  absl::MutexLock lock(&registry.mutex);
  return registry.kernels.emplace(std::move(key), *std::move(loaded))
      .first->second;
}

}  // namespace ptxgen::runtime
