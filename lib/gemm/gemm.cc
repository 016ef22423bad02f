// Layer: the Gemm of a chosen configuration, above plan.cc, selection.cc
// and problem.cc (which it calls) and below autotune.cc and prepare.cc
// (which call it, lib/gemm/gemm_preparation.h): the kernel loaded once per
// context, the workspace, and Run's checks and launch. Choosing the
// configuration, autotuned or not, is prepare.cc's.
#include "ptxgen/gemm/gemm.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/gemm/gemm_preparation.h"
#include "lib/gemm/helper_kernels.h"
#include "lib/gemm/problem_parts.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/kernel_registry.h"
#include "ptxgen/runtime/launch_checks.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/target.h"
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

// The workspace of split-K or stream-K: its size, the buffer in the
// context of the Gemm that owns it (none when the caller gives one each
// run); split-K's kernel that reduces it into C.
struct GemmWorkspace {
  ~GemmWorkspace();

  CUcontext context = nullptr;
  int64_t bytes = 0;
  // Where the kernel's workspace starts, past (stream-K: at the end of)
  // the flag region (gen::GemmWorkspaceKernelOffset).
  int64_t kernel_offset = 0;
  // Stream-K's flags, at kernel_offset: zeroed before a launch on a
  // caller's workspace not kept zeroed.
  int64_t flag_bytes = 0;
  std::optional<runtime::DeviceBuffer> buffer;
  std::optional<runtime::Function> reduce;
  int sm_count = 0;
};

GemmWorkspace::~GemmWorkspace() {
  if (!buffer) return;
  // The last copy of a Gemm may go on a thread where another context, or
  // none, is current; the buffer is freed in its own (with no context
  // current cuMemFree fails and the buffer would leak). Should the push
  // fail (the context destroyed, and the buffer with it) the free fails
  // harmlessly too.
  absl::StatusOr<runtime::ScopedCurrentContext> own =
      runtime::ScopedCurrentContext::Push(context);
  buffer.reset();
}

namespace {

runtime::LaunchConfig LaunchShape(const gen::GeneratedGemm& generated,
                                  const gen::GemmGrid& grid, CUstream stream) {
  runtime::LaunchConfig launch;
  launch.grid = {static_cast<uint32_t>(grid.x), static_cast<uint32_t>(grid.y),
                 static_cast<uint32_t>(grid.z)};
  launch.block = {static_cast<uint32_t>(generated.threads_per_block), 1, 1};
  launch.cluster = {static_cast<uint32_t>(grid.cluster_x), 1, 1};
  launch.shared_bytes = generated.shared_bytes;
  launch.stream = stream;
  return launch;
}

// The plan's one CTA per SM without clusters; with them, what the GPCs can
// hold.
absl::StatusOr<int> ResidentClusters(const GemmPlan& plan,
                                     const runtime::Function& function) {
  const int cluster_ctas = gen::ClusterCtas(plan.config);
  if (cluster_ctas == 1) return plan.resident_clusters;
  gen::GemmGrid one_cluster;
  one_cluster.x = one_cluster.cluster_x = cluster_ctas;
  return function.MaxActiveClusters(
      LaunchShape(plan.generated, one_cluster, nullptr));
}

// A map (contiguous, other[, batch]) of box.rank over a batch of row-major
// matrices stored `rows` x `columns` with leading dimension `ld` and batch
// stride `stride` (elements), read in boxes of `box`.
absl::StatusOr<CUtensorMap> OperandMap(const gen::GemmTensorBox& box,
                                       ptx::ScalarType element,
                                       CUdeviceptr address, int64_t rows,
                                       int64_t columns, int64_t ld,
                                       int64_t batch, int64_t stride) {
  const uint64_t element_bytes = ptx::SizeInBytes(element);
  runtime::TensorMapSpec spec;
  spec.element = element;
  spec.global_address = address;
  spec.dims = {static_cast<uint64_t>(columns), static_cast<uint64_t>(rows)};
  spec.strides_bytes = {static_cast<uint64_t>(ld) * element_bytes};
  spec.box = {static_cast<uint32_t>(box.inner),
              static_cast<uint32_t>(box.outer)};
  if (box.rank == 3) {
    spec.dims.push_back(static_cast<uint64_t>(batch));
    // A batch of one never steps the third dimension; any legal stride does.
    spec.strides_bytes.push_back(
        static_cast<uint64_t>(batch > 1 ? stride : ld * rows) * element_bytes);
    spec.box.push_back(1);
  } else if (batch != 1) {
    return absl::InternalError(
        "a kernel without a batch dimension was given a batch");
  }
  spec.swizzle = box.swizzle;
  spec.l2_promotion = runtime::L2Promotion::k256B;
  return runtime::EncodeTensorMap(spec);
}

// The values of one launch's parameters, passed in the order of the one
// parameter table (gen::GemmKernelParameters).
struct KernelArguments {
  CUtensorMap a_map, b_map, d_map;
  CUdeviceptr d = 0, c = 0, bias = 0, scale_a = 0, scale_b = 0, scale_d = 0,
              amax_d = 0, workspace = 0, group_rows = 0;
  int m = 0, n = 0, k = 0, batch = 1;
  long long ldc = 0, ldd = 0, stride_c = 0, stride_d = 0, stride_bias = 0;
  float alpha = 1, beta = 0;
  int pair_stores = 0;

  void* Address(gen::GemmKernelParameter parameter) {
    switch (parameter) {
      case gen::GemmKernelParameter::kAMap:
        return &a_map;
      case gen::GemmKernelParameter::kBMap:
        return &b_map;
      case gen::GemmKernelParameter::kDMap:
        return &d_map;
      case gen::GemmKernelParameter::kD:
        return &d;
      case gen::GemmKernelParameter::kC:
        return &c;
      case gen::GemmKernelParameter::kBias:
        return &bias;
      case gen::GemmKernelParameter::kScaleA:
        return &scale_a;
      case gen::GemmKernelParameter::kScaleB:
        return &scale_b;
      case gen::GemmKernelParameter::kScaleD:
        return &scale_d;
      case gen::GemmKernelParameter::kAmaxD:
        return &amax_d;
      case gen::GemmKernelParameter::kWorkspace:
        return &workspace;
      case gen::GemmKernelParameter::kGroupRows:
        return &group_rows;
      case gen::GemmKernelParameter::kM:
        return &m;
      case gen::GemmKernelParameter::kN:
        return &n;
      case gen::GemmKernelParameter::kK:
        return &k;
      case gen::GemmKernelParameter::kBatch:
        return &batch;
      case gen::GemmKernelParameter::kLdc:
        return &ldc;
      case gen::GemmKernelParameter::kLdd:
        return &ldd;
      case gen::GemmKernelParameter::kStrideC:
        return &stride_c;
      case gen::GemmKernelParameter::kStrideD:
        return &stride_d;
      case gen::GemmKernelParameter::kStrideBias:
        return &stride_bias;
      case gen::GemmKernelParameter::kAlpha:
        return &alpha;
      case gen::GemmKernelParameter::kBeta:
        return &beta;
      case gen::GemmKernelParameter::kPairStores:
        return &pair_stores;
    }
    return nullptr;
  }

  std::vector<void*> InTableOrder() {
    std::vector<void*> addresses;
    for (const gen::GemmKernelParameterSpec& spec :
         gen::GemmKernelParameters()) {
      addresses.push_back(Address(spec.parameter));
    }
    return addresses;
  }
};

}  // namespace

absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> LoadGemmKernel(
    const GemmPlan& plan) {
  absl::StatusOr<CUcontext> context = runtime::CurrentOrPrimaryContext();
  if (!context.ok()) return context.status();
  // The whole configuration, launch policy included, and the compile's
  // flags: the loaded kernel carries them to every Gemm that uses it.
  const gen::GeneratedGemm& generated = plan.generated;
  return runtime::KernelLoadedIn<LoadedGemmKernel>(
      *context, kGemmFamily, plan.kernel_identity,
      [&]() -> absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> {
        absl::StatusOr<runtime::LoadedFunction> loaded_function =
            runtime::LoadKernelFunction(*plan.compiled, generated.kernel_name,
                                        generated.shared_bytes);
        if (!loaded_function.ok()) return loaded_function.status();
        runtime::Function& function = loaded_function->function;
        absl::StatusOr<int> resident = ResidentClusters(plan, function);
        if (!resident.ok()) return resident.status();
        if (*resident < 1) {
          return absl::FailedPreconditionError(absl::StrCat(
              "GEMM kernel ", generated.kernel_name,
              " cannot be resident on this device (", generated.shared_bytes,
              " bytes of shared memory, ", generated.threads_per_block,
              " threads, clusters of ", generated.config.cluster_m, ")"));
        }
        return std::make_shared<const LoadedGemmKernel>(
            generated, plan.compiled, std::move(loaded_function->module),
            std::move(function), *resident);
      });
}

namespace {

// The workspace of a launch PlanGemmLaunch accepted, on its `grid`; its
// buffer allocated when the Gemm owns it.
absl::StatusOr<std::shared_ptr<const GemmWorkspace>> PrepareWorkspace(
    const GemmPlan& plan, const gen::GemmGrid& grid, CUcontext context,
    WorkspaceOwner owner) {
  const GemmProblem problem = KernelProblem(plan.config, plan.problem);
  const gen::GemmConfig& config = plan.config;
  const int64_t bytes =
      gen::GemmWorkspaceBytes(config, problem.m, problem.n, grid);
  if (bytes == 0) return nullptr;
  auto workspace = std::make_shared<GemmWorkspace>();
  workspace->context = context;
  workspace->bytes = bytes;
  workspace->kernel_offset = gen::GemmWorkspaceKernelOffset(config, grid);
  workspace->flag_bytes = gen::GemmStreamKFlagBytes(config, grid);
  if (owner == WorkspaceOwner::kGemm) {
    absl::StatusOr<runtime::DeviceBuffer> buffer =
        runtime::DeviceBuffer::Allocate(bytes);
    if (!buffer.ok()) return buffer.status();
    if (config.stream_k) {
      // The flags start lowered (a synchronous copy: the first launch may
      // be on any stream); every launch that completes leaves them so.
      const std::vector<uint8_t> lowered(gen::kWorkspaceFlagRegionBytes, 0);
      if (absl::Status zeroed =
              buffer->CopyFromHost(lowered.data(), lowered.size());
          !zeroed.ok()) {
        return zeroed;
      }
    }
    workspace->buffer = *std::move(buffer);
  }
  if (!gen::ReducesSlicesInWorkspace(config)) return workspace;
  absl::StatusOr<runtime::Function> reduce = HelperKernel(
      gen::SplitKReduceKernelName(problem.element),
      [&problem] { return gen::SplitKReduceSource(problem.element); });
  if (!reduce.ok()) return reduce.status();
  workspace->reduce = *reduce;
  workspace->sm_count = plan.target.sm_count;
  return workspace;
}

}  // namespace

compile::KernelCache& CacheOf(const GemmOptions& options) {
  return options.cache != nullptr ? *options.cache
                                  : compile::KernelCache::Default();
}

absl::StatusOr<CurrentGemmDevice> CurrentDevice() {
  absl::StatusOr<runtime::DeviceProperties> device =
      runtime::CurrentDeviceProperties();
  if (!device.ok()) return device.status();
  absl::StatusOr<GemmTarget> target =
      runtime::KernelTargetOf(*device, kGemmFamily);
  if (!target.ok()) return target.status();
  return CurrentGemmDevice{*std::move(device), *target};
}

absl::StatusOr<Gemm> GemmPreparation::PrepareChosen(const GemmProblem& problem,
                                                    const GemmOptions& options,
                                                    CUcontext context) {
  absl::StatusOr<CurrentGemmDevice> device = CurrentDevice();
  if (!device.ok()) return device.status();
  GemmOptions planned = options;
  planned.cache = &CacheOf(options);
  absl::StatusOr<GemmPlan> plan = PlanGemm(problem, device->target, planned);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> kernel =
      LoadGemmKernel(*plan);
  if (!kernel.ok()) return kernel.status();
  // The plan's 2-CTA clusters are an upper bound; the driver knows how
  // many the GPCs hold.
  absl::StatusOr<gen::GemmGrid> grid = plan->grid;
  if ((*kernel)->resident_clusters != plan->resident_clusters) {
    grid = PlanGemmLaunch(problem, plan->config, (*kernel)->resident_clusters);
  }
  if (!grid.ok()) return grid.status();
  absl::StatusOr<std::shared_ptr<const GemmWorkspace>> workspace =
      PrepareWorkspace(*plan, *grid, context, options.workspace);
  if (!workspace.ok()) return workspace.status();
  return Gemm(plan->problem, *grid, context, device->properties.ordinal,
              *std::move(kernel), *std::move(workspace));
}

const gen::GemmConfig& Gemm::config() const {
  return kernel_->generated.config;
}
const gen::GeneratedGemm& Gemm::generated() const { return kernel_->generated; }
const compile::CompiledModule& Gemm::compiled() const {
  return *kernel_->compiled;
}

absl::Status Gemm::Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream) const {
  GemmOperands operands;
  operands.a = a;
  operands.b = b;
  operands.d = c;
  return Run(operands, stream);
}

absl::Status Gemm::CheckRunsHere(const GemmOperands& operands,
                                 CUstream stream) const {
  // Resolved by Prepare; checked as the caller named them (before a
  // swapped kernel exchanges A and B).
  const bool scaled = problem_.scaling != GemmScaling::kNone;
  const bool scales_d =
      problem_.scaling == GemmScaling::kTensor && ptx::IsFp8(*problem_.output);
  const std::array<runtime::LaunchOperand, 10> named = {{
      {"A", operands.a, true},
      {"B", operands.b, true},
      {"C", operands.c, problem_.beta != 0.0f},
      {"D", operands.d, true},
      {"the bias", operands.bias, problem_.bias != BiasAlong::kNone},
      {"scale_a", operands.scale_a, scaled, 4},
      {"scale_b", operands.scale_b, scaled, 4},
      {"scale_d", operands.scale_d, scales_d, 4},
      {"amax_d", operands.amax_d, problem_.record_amax, 4},
      {"group_rows", operands.group_rows, problem_.grouping != Grouping::kNone,
       4},
  }};
  return runtime::CheckLaunchHere(kGemmLaunchOwner, named, stream, context_,
                                  device_);
}

int64_t Gemm::workspace_bytes() const {
  return workspace_ != nullptr ? workspace_->bytes : 0;
}

namespace {

// What a Gemm keeps in its workspace, for messages.
const char* WorkspaceUse(const gen::GemmConfig& config) {
  return gen::ReducesSlicesInWorkspace(config) ? "split-K launch"
                                               : "stream-K launch";
}

}  // namespace

absl::Status Gemm::Run(const GemmOperands& operands, CUstream stream) const {
  if (workspace_ == nullptr) return Launch(operands, {}, false, stream);
  if (!workspace_->buffer) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: this Gemm's ", WorkspaceUse(config()), " needs a workspace of ",
        workspace_->bytes,
        " bytes, which its caller gives each run (WorkspaceOwner::kCaller): "
        "run it with one (a CallerWorkspace; ptxgenGemmRunWithWorkspace in "
        "C)"));
  }
  return Launch(operands,
                {workspace_->buffer->address(), workspace_->bytes, true}, false,
                stream);
}

absl::Status Gemm::Run(const GemmOperands& operands,
                       const CallerWorkspace& workspace,
                       CUstream stream) const {
  if (workspace_ == nullptr) return Launch(operands, {}, false, stream);
  if (absl::Status usable = CheckCallerWorkspace(workspace); !usable.ok()) {
    return usable;
  }
  return Launch(operands, workspace, true, stream);
}

absl::Status Gemm::CheckCallerWorkspace(
    const CallerWorkspace& workspace) const {
  const std::string needs = absl::StrCat(
      "this Gemm's ", WorkspaceUse(config()), " needs ", workspace_->bytes,
      " bytes, ", kWorkspaceAlignment, "-byte aligned");
  if (workspace.address == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM: the workspace is a null pointer; ", needs));
  }
  if (workspace.bytes < workspace_->bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM: a workspace of ", workspace.bytes,
                     " bytes is too small: ", needs));
  }
  if (workspace.address % kWorkspaceAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: the workspace (0x", absl::Hex(workspace.address), ") is not ",
        kWorkspaceAlignment, "-byte aligned: ", needs));
  }
  return absl::OkStatus();
}

absl::Status Gemm::Launch(const GemmOperands& operands,
                          const CallerWorkspace& given, bool callers,
                          CUstream stream) const {
  if (absl::Status here = CheckRunsHere(operands, stream); !here.ok())
    return here;
  if (absl::Status apart =
          CheckOutputsApart(problem_, operands, callers ? given.address : 0,
                            callers ? workspace_->bytes : 0);
      !apart.ok()) {
    return apart;
  }
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  if (callers) {
    if (absl::Status reachable = runtime::CheckOperandReachable(
            kGemmLaunchOwner, **driver, "the workspace", given.address,
            context_, device_);
        !reachable.ok()) {
      return reachable;
    }
  }
  const CUdeviceptr workspace =
      workspace_ != nullptr ? given.address + workspace_->kernel_offset : 0;
  // The kernel of a swapped config takes B as its A.
  const GemmProblem p = KernelProblem(kernel_->generated.config, problem_);
  GemmOperands kernel_operands = operands;
  const bool reads_c = p.beta != 0.0f;
  const bool has_bias = p.bias != BiasAlong::kNone;
  const gen::GeneratedGemm& generated = kernel_->generated;
  if (generated.config.swap_ab) std::swap(kernel_operands.a, kernel_operands.b);
  const StoredShape a = Stored(p.a_major, p.m, p.k);
  const StoredShape b = Stored(p.b_major, p.n, p.k);
  absl::StatusOr<CUtensorMap> a_map =
      OperandMap(generated.a_box, p.element, kernel_operands.a, a.rows,
                 a.columns, p.lda, RowMatrices(p), p.stride_a);
  if (!a_map.ok()) return a_map.status();
  absl::StatusOr<CUtensorMap> b_map = OperandMap(
      generated.b_box, p.b_element.value_or(p.element), kernel_operands.b,
      b.rows, b.columns, p.ldb, p.batch, p.stride_b);
  if (!b_map.ok()) return b_map.status();
  KernelArguments arguments;
  arguments.a_map = *a_map;
  arguments.b_map = *b_map;
  arguments.d_map = {};
  if (generated.config.epilogue == gen::GemmEpilogue::kTmaStore) {
    absl::StatusOr<CUtensorMap> encoded =
        OperandMap(generated.d_box, *p.output, kernel_operands.d, p.m, p.n,
                   p.ldd, RowMatrices(p), p.stride_d);
    if (!encoded.ok()) return encoded.status();
    arguments.d_map = *encoded;
  }
  arguments.d = kernel_operands.d;
  arguments.c = reads_c ? kernel_operands.c : 0;
  arguments.bias = has_bias ? kernel_operands.bias : 0;
  if (p.scaling != GemmScaling::kNone) {
    arguments.scale_a = kernel_operands.scale_a;
    arguments.scale_b = kernel_operands.scale_b;
  }
  if (p.scaling == GemmScaling::kTensor && ptx::IsFp8(*p.output)) {
    arguments.scale_d = kernel_operands.scale_d;
  }
  arguments.workspace = workspace;
  arguments.group_rows = kernel_operands.group_rows;
  arguments.m = static_cast<int>(p.m);
  arguments.n = static_cast<int>(p.n);
  arguments.k = static_cast<int>(p.k);
  arguments.batch = static_cast<int>(p.batch);
  arguments.ldc = p.ldc;
  arguments.ldd = p.ldd;
  arguments.stride_c = p.stride_c;
  arguments.stride_d = p.stride_d;
  arguments.stride_bias = p.stride_bias;
  arguments.alpha = p.alpha;
  arguments.beta = p.beta;
  // D is 16-byte aligned: a pair of columns is aligned when every row and
  // every batch starts on an even element.
  // (Of D [m, n] only: transposed, a pair's columns are a row of it apart.)
  arguments.pair_stores = !p.d_transposed && p.ldd % 2 == 0 &&
                          (p.batch == 1 || p.stride_d % 2 == 0);
  if (workspace_ != nullptr && !given.zeroed && workspace_->flag_bytes > 0) {
    // Stream-K's flags start lowered, on memory that may be fresh each run.
    if (absl::Status lowered = (*driver)->Check(
            (*driver)->cuMemsetD32Async(workspace, 0,
                                        workspace_->flag_bytes / 4, stream),
            "cuMemsetD32Async (stream-K's flags)");
        !lowered.ok()) {
      return lowered;
    }
  }
  if (p.record_amax) {
    // Each tile raises the amax; it starts from 0 on this stream.
    arguments.amax_d = kernel_operands.amax_d;
    if (absl::Status zeroed = (*driver)->Check(
            (*driver)->cuMemsetD32Async(arguments.amax_d, 0, 1, stream),
            "cuMemsetD32Async (amax_d)");
        !zeroed.ok()) {
      return zeroed;
    }
  }
  std::vector<void*> args = arguments.InTableOrder();
  if (absl::Status launched = kernel_->function.Launch(
          LaunchShape(generated, grid_, stream), args.data());
      !launched.ok() || workspace_ == nullptr || !workspace_->reduce) {
    return launched;
  }
  return Reduce(workspace, kernel_operands.d, stream);
}

absl::Status Gemm::Reduce(CUdeviceptr workspace, CUdeviceptr c,
                          CUstream stream) const {
  long long count = problem_.m * problem_.n;
  int splits = kernel_->generated.config.split_k;
  void* args[] = {&workspace, &c, &count, &splits};
  constexpr int64_t kThreads = 256;
  runtime::LaunchConfig launch;
  launch.grid = {
      static_cast<uint32_t>(std::min<int64_t>((count / 2 + kThreads) / kThreads,
                                              4 * workspace_->sm_count)),
      1, 1};
  launch.block = {kThreads, 1, 1};
  launch.stream = stream;
  return workspace_->reduce->Launch(launch, args);
}

}  // namespace ptxgen::gemm
