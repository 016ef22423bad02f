#include "ptxgen/gemm/gemm.h"

#include <map>
#include <optional>
#include <vector>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/gemm/helper_kernels.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/tensor_map.h"

namespace ptxgen::gemm {

// A configuration compiled and loaded into one context.
class LoadedGemmKernel {
 public:
  LoadedGemmKernel(gen::GeneratedGemm generated,
                   std::shared_ptr<const compile::CompiledModule> compiled,
                   runtime::Module module, runtime::Function function,
                   int resident_clusters)
      : generated(std::move(generated)),
        compiled(std::move(compiled)),
        module(std::move(module)),
        function(std::move(function)),
        resident_clusters(resident_clusters) {}

  const gen::GeneratedGemm generated;
  const std::shared_ptr<const compile::CompiledModule> compiled;
  const runtime::Module module;
  const runtime::Function function;
  // Clusters (CTAs, without clusters) resident at once: a persistent
  // grid's size.
  const int resident_clusters;
};

// The workspace of split-K or stream-K; split-K's kernel that reduces it
// into C.
struct GemmWorkspace {
  runtime::DeviceBuffer buffer;
  std::optional<runtime::Function> reduce;
  int sm_count = 0;
};

namespace {

// The current context, or device 0's primary context made current. The
// retained primary context lives as long as the process: modules loaded
// into it must stay valid.
absl::StatusOr<CUcontext> CurrentOrPrimaryContext() {
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  CUcontext current = nullptr;
  if (absl::Status got = (*driver)->Check((*driver)->cuCtxGetCurrent(&current),
                                          "cuCtxGetCurrent");
      !got.ok()) {
    return got;
  }
  if (current != nullptr) return current;
  static absl::once_flag once;
  static absl::StatusOr<runtime::PrimaryContext>* primary = nullptr;
  absl::call_once(once, [] {
    primary = new absl::StatusOr<runtime::PrimaryContext>(
        runtime::PrimaryContext::Retain(0));
  });
  if (!primary->ok()) return primary->status();
  if (absl::Status set = (*primary)->SetCurrent(); !set.ok()) return set;
  return (*primary)->get();
}

absl::StatusOr<int> CurrentSmCount() {
  absl::StatusOr<CUdevice> device = runtime::CurrentDevice();
  if (!device.ok()) return device.status();
  return runtime::GetDeviceAttribute(*device,
                                     CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
}

runtime::LaunchConfig LaunchShape(const gen::GeneratedGemm& generated,
                                  const gen::GemmGrid& grid, CUstream stream) {
  runtime::LaunchConfig launch;
  launch.grid = {static_cast<uint32_t>(grid.x), static_cast<uint32_t>(grid.y), 1};
  launch.block = {static_cast<uint32_t>(generated.threads_per_block), 1, 1};
  launch.cluster = {static_cast<uint32_t>(grid.cluster_x), 1, 1};
  launch.shared_bytes = generated.shared_bytes;
  launch.stream = stream;
  return launch;
}

// One CTA per SM without clusters; with them, what the GPCs can hold.
absl::StatusOr<int> ResidentClusters(const gen::GeneratedGemm& generated,
                                     const runtime::Function& function) {
  absl::StatusOr<int> sm_count = CurrentSmCount();
  if (!sm_count.ok() || generated.config.cluster_m == 1) return sm_count;
  gen::GemmGrid one_cluster;
  one_cluster.x = one_cluster.cluster_x = generated.config.cluster_m;
  return function.MaxActiveClusters(LaunchShape(generated, one_cluster, nullptr));
}

struct Registry {
  absl::Mutex mutex;
  std::map<std::pair<CUcontext, std::string>,
           std::shared_ptr<const LoadedGemmKernel>>
      kernels ABSL_GUARDED_BY(mutex);
};

Registry& LoadedKernels() {
  static Registry* registry = new Registry;
  return *registry;
}

absl::StatusOr<CUtensorMap> OperandMap(const gen::GemmTensorBox& box,
                                       ptx::ScalarType element,
                                       CUdeviceptr address, int64_t rows,
                                       int64_t columns) {
  runtime::TensorMapSpec spec;
  spec.element = element;
  spec.global_address = address;
  spec.dims = {static_cast<uint64_t>(columns), static_cast<uint64_t>(rows)};
  spec.strides_bytes = {static_cast<uint64_t>(columns) * ptx::SizeInBytes(element)};
  spec.box = {static_cast<uint32_t>(box.inner), static_cast<uint32_t>(box.outer)};
  spec.swizzle = box.swizzle;
  spec.l2_promotion = runtime::L2Promotion::k256B;
  return runtime::EncodeTensorMap(spec);
}

// The values of one launch's parameters, passed in the order of the one
// parameter table (gen::GemmKernelParameters).
struct KernelArguments {
  CUtensorMap a_map, b_map, c_map;
  CUdeviceptr c = 0, workspace = 0;
  int m = 0, n = 0, k = 0, pair_stores = 0;

  void* Address(gen::GemmKernelParameter parameter) {
    switch (parameter) {
      case gen::GemmKernelParameter::kAMap: return &a_map;
      case gen::GemmKernelParameter::kBMap: return &b_map;
      case gen::GemmKernelParameter::kCMap: return &c_map;
      case gen::GemmKernelParameter::kC: return &c;
      case gen::GemmKernelParameter::kWorkspace: return &workspace;
      case gen::GemmKernelParameter::kM: return &m;
      case gen::GemmKernelParameter::kN: return &n;
      case gen::GemmKernelParameter::kK: return &k;
      case gen::GemmKernelParameter::kPairStores: return &pair_stores;
    }
    return nullptr;
  }

  std::vector<void*> InTableOrder() {
    std::vector<void*> addresses;
    for (const gen::GemmKernelParameterSpec& spec : gen::GemmKernelParameters()) {
      addresses.push_back(Address(spec.parameter));
    }
    return addresses;
  }
};

absl::Status CheckOperandAddress(const char* name, CUdeviceptr address) {
  if (address == 0) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM: ", name, " is a null pointer"));
  }
  if (address % 16 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "GEMM: ", name, " must be 16-byte aligned for TMA (address 0x",
      absl::Hex(address), ")"));
}

}  // namespace

absl::Status ValidateProblem(const GemmProblem& problem) {
  for (const auto& [name, size] : {std::pair<const char*, int64_t>{"m", problem.m},
                                   {"n", problem.n},
                                   {"k", problem.k}}) {
    if (size < 1 || size > gen::kMaxGemmDimension) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GEMM: ", name, "=", size, " is outside 1..", gen::kMaxGemmDimension));
    }
  }
  if (absl::Status valid = gen::CheckGemmElement(problem.element); !valid.ok()) {
    return valid;
  }
  const int64_t row_bytes = problem.k * ptx::SizeInBytes(problem.element);
  if (row_bytes % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: k=", problem.k, " gives rows of A and B of ", row_bytes,
        " bytes; TMA needs every row to start on a 16-byte boundary, so k "
        "must be a multiple of 8"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> LoadGemmKernel(
    const gen::GemmConfig& config, ptx::ScalarType element,
    compile::KernelCache& cache) {
  absl::StatusOr<CUcontext> context = CurrentOrPrimaryContext();
  if (!context.ok()) return context.status();
  // The whole configuration, launch policy included: the loaded kernel
  // carries it to every Gemm that uses it.
  Registry& registry = LoadedKernels();
  const std::pair<CUcontext, std::string> key{
      *context, absl::StrCat(ptx::PtxName(element), " ", gen::ConfigName(config))};
  {
    absl::MutexLock lock(&registry.mutex);
    auto it = registry.kernels.find(key);
    if (it != registry.kernels.end()) return it->second;
  }
  absl::StatusOr<gen::GeneratedGemm> generated = gen::GenerateGemm(config, element);
  if (!generated.ok()) return generated.status();
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      cache.GetOrCompile(generated->kernel_name, generated->source,
                         compile::CompileOptions{});
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<runtime::Module> module = runtime::Module::LoadCubin(**compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<runtime::Function> function =
      module->GetFunction(generated->kernel_name);
  if (!function.ok()) return function.status();
  if (absl::Status shared = function->SetMaxDynamicSharedMemory(generated->shared_bytes);
      !shared.ok()) {
    return shared;
  }
  absl::StatusOr<int> resident = ResidentClusters(*generated, *function);
  if (!resident.ok()) return resident.status();
  if (*resident < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GEMM kernel ", generated->kernel_name, " cannot be resident on this "
        "device (", generated->shared_bytes, " bytes of shared memory, ",
        generated->threads_per_block, " threads, clusters of ",
        generated->config.cluster_m, ")"));
  }
  auto loaded = std::make_shared<const LoadedGemmKernel>(
      *std::move(generated), *std::move(compiled), *std::move(module),
      *std::move(function), *resident);
  absl::MutexLock lock(&registry.mutex);
  return registry.kernels.emplace(key, std::move(loaded)).first->second;
}

namespace {

// The workspace of a launch PlanGemmLaunch accepted, on its `grid`.
absl::StatusOr<std::shared_ptr<const GemmWorkspace>> PrepareWorkspace(
    const LoadedGemmKernel& kernel, const GemmProblem& problem,
    const gen::GemmGrid& grid) {
  const gen::GemmConfig& config = kernel.generated.config;
  const int64_t bytes = gen::GemmWorkspaceBytes(config, problem.m, problem.n, grid);
  if (bytes == 0) return nullptr;
  absl::StatusOr<runtime::DeviceBuffer> buffer = runtime::DeviceBuffer::Allocate(bytes);
  if (!buffer.ok()) return buffer.status();
  if (config.stream_k) {
    // The flags start lowered (a synchronous copy: the first launch may be
    // on any stream).
    const std::vector<uint8_t> lowered(gen::GemmStreamKFlagBytes(config, grid), 0);
    if (absl::Status zeroed = buffer->CopyFromHost(lowered.data(), lowered.size());
        !zeroed.ok()) {
      return zeroed;
    }
  }
  auto workspace = std::make_shared<GemmWorkspace>(GemmWorkspace{*std::move(buffer)});
  if (config.split_k == 1) return workspace;
  absl::StatusOr<runtime::Function> reduce = HelperKernel(
      gen::SplitKReduceKernelName(problem.element),
      [&problem] { return gen::SplitKReduceSource(problem.element); });
  if (!reduce.ok()) return reduce.status();
  absl::StatusOr<int> sm_count = CurrentSmCount();
  if (!sm_count.ok()) return sm_count.status();
  workspace->reduce = *reduce;
  workspace->sm_count = *sm_count;
  return workspace;
}

}  // namespace

absl::StatusOr<Gemm> Gemm::Prepare(const GemmProblem& problem,
                                   const GemmOptions& options) {
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  compile::KernelCache& cache =
      options.cache != nullptr ? *options.cache : compile::KernelCache::Default();
  if (absl::StatusOr<CUcontext> context = CurrentOrPrimaryContext(); !context.ok()) {
    return context.status();
  }
  absl::StatusOr<int> sm_count = CurrentSmCount();
  if (!sm_count.ok()) return sm_count.status();
  gen::GemmConfig config;
  if (options.config.has_value()) {
    config = *options.config;
  } else if (options.selection == Selection::kAutotune) {
    absl::StatusOr<gen::GemmConfig> tuned =
        AutotunedConfig(problem, CandidateConfigs(problem), cache);
    if (!tuned.ok()) return tuned.status();
    config = *tuned;
  } else {
    config = HeuristicConfig(problem, *sm_count);
  }
  // Generating the kernel refuses an invalid config before it compiles; the
  // rest of the plan needs the loaded kernel's occupancy.
  absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> kernel =
      LoadGemmKernel(config, problem.element, cache);
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<gen::GemmGrid> grid =
      PlanGemmLaunch(problem, config, (*kernel)->resident_clusters);
  if (!grid.ok()) return grid.status();
  absl::StatusOr<std::shared_ptr<const GemmWorkspace>> workspace =
      PrepareWorkspace(**kernel, problem, *grid);
  if (!workspace.ok()) return workspace.status();
  return Gemm(problem, *grid, *std::move(kernel), *std::move(workspace));
}

const gen::GemmConfig& Gemm::config() const { return kernel_->generated.config; }
const gen::GeneratedGemm& Gemm::generated() const { return kernel_->generated; }
const compile::CompiledModule& Gemm::compiled() const { return *kernel_->compiled; }

absl::Status Gemm::Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream) const {
  for (const auto& [name, address] : {std::pair<const char*, CUdeviceptr>{"A", a},
                                      {"B", b},
                                      {"C", c}}) {
    if (absl::Status usable = CheckOperandAddress(name, address); !usable.ok()) {
      return usable;
    }
  }
  const gen::GeneratedGemm& generated = kernel_->generated;
  const ptx::ScalarType element = problem_.element;
  absl::StatusOr<CUtensorMap> a_map =
      OperandMap(generated.a_box, element, a, problem_.m, problem_.k);
  if (!a_map.ok()) return a_map.status();
  absl::StatusOr<CUtensorMap> b_map =
      OperandMap(generated.b_box, element, b, problem_.n, problem_.k);
  if (!b_map.ok()) return b_map.status();
  CUtensorMap c_map = {};
  if (generated.config.epilogue == gen::GemmEpilogue::kTmaStore) {
    absl::StatusOr<CUtensorMap> encoded =
        OperandMap(generated.c_box, element, c, problem_.m, problem_.n);
    if (!encoded.ok()) return encoded.status();
    c_map = *encoded;
  }
  KernelArguments arguments;
  arguments.a_map = *a_map;
  arguments.b_map = *b_map;
  arguments.c_map = c_map;
  arguments.c = c;
  arguments.workspace = workspace_ ? workspace_->buffer.address() : 0;
  arguments.m = static_cast<int>(problem_.m);
  arguments.n = static_cast<int>(problem_.n);
  arguments.k = static_cast<int>(problem_.k);
  arguments.pair_stores = problem_.n % 2 == 0 ? 1 : 0;  // C is 16-byte aligned
  std::vector<void*> args = arguments.InTableOrder();
  if (absl::Status launched =
          kernel_->function.Launch(LaunchShape(generated, grid_, stream), args.data());
      !launched.ok() || workspace_ == nullptr || !workspace_->reduce) {
    return launched;
  }
  return Reduce(c, stream);
}

absl::Status Gemm::Reduce(CUdeviceptr c, CUstream stream) const {
  CUdeviceptr workspace = workspace_->buffer.address();
  long long count = problem_.m * problem_.n;
  int splits = kernel_->generated.config.split_k;
  void* args[] = {&workspace, &c, &count, &splits};
  constexpr int64_t kThreads = 256;
  runtime::LaunchConfig launch;
  launch.grid = {static_cast<uint32_t>(std::min<int64_t>(
                     (count / 2 + kThreads) / kThreads, 4 * workspace_->sm_count)),
                 1, 1};
  launch.block = {kThreads, 1, 1};
  launch.stream = stream;
  return workspace_->reduce->Launch(launch, args);
}

}  // namespace ptxgen::gemm
