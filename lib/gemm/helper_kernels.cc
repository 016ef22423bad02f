#include "lib/gemm/helper_kernels.h"

#include <map>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::gemm {

absl::StatusOr<runtime::Function> HelperKernel(
    const std::string& name,
    const std::function<absl::StatusOr<std::string>()>& source) {
  static absl::Mutex mutex;
  static auto* loaded =
      new std::map<std::pair<CUcontext, std::string>,
                   std::pair<runtime::Module, runtime::Function>>();
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  CUcontext context = nullptr;
  if (absl::Status got = (*driver)->Check((*driver)->cuCtxGetCurrent(&context),
                                          "cuCtxGetCurrent");
      !got.ok()) {
    return got;
  }
  const std::pair<CUcontext, std::string> key{context, name};
  absl::MutexLock lock(&mutex);
  auto it = loaded->find(key);
  if (it != loaded->end()) return it->second.second;
  absl::StatusOr<std::string> text = source();
  if (!text.ok()) return text.status();
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      compile::KernelCache::Default().GetOrCompile(name, *text, {});
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<runtime::Module> module =
      runtime::Module::LoadCubin(**compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<runtime::Function> function = module->GetFunction(name);
  if (!function.ok()) return function.status();
  loaded->emplace(key, std::make_pair(*std::move(module), *function));
  return *function;
}

}  // namespace ptxgen::gemm
