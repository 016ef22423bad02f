#include "ptxgen/gemm/gemm.h"

#include <cmath>
#include <map>
#include <tuple>
#include <optional>
#include <vector>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/gemm/helper_kernels.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
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
  absl::StatusOr<CUcontext> current = runtime::CurrentContext();
  if (!current.ok() || *current != nullptr) return current;
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
  if (plan.config.cluster_m == 1) return plan.resident_clusters;
  gen::GemmGrid one_cluster;
  one_cluster.x = one_cluster.cluster_x = plan.config.cluster_m;
  return function.MaxActiveClusters(
      LaunchShape(plan.generated, one_cluster, nullptr));
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
  spec.box = {static_cast<uint32_t>(box.inner), static_cast<uint32_t>(box.outer)};
  if (box.rank == 3) {
    spec.dims.push_back(static_cast<uint64_t>(batch));
    // A batch of one never steps the third dimension; any legal stride does.
    spec.strides_bytes.push_back(
        static_cast<uint64_t>(batch > 1 ? stride : ld * rows) * element_bytes);
    spec.box.push_back(1);
  } else if (batch != 1) {
    return absl::InternalError("a kernel without a batch dimension was given a batch");
  }
  spec.swizzle = box.swizzle;
  spec.l2_promotion = runtime::L2Promotion::k256B;
  return runtime::EncodeTensorMap(spec);
}

// The stored shape of an operand: [mn, k] K-major, [k, mn] MN-major.
struct StoredShape {
  int64_t rows, columns;
};
StoredShape Stored(MajorOrder major, int64_t mn, int64_t k) {
  return major == MajorOrder::kK ? StoredShape{mn, k} : StoredShape{k, mn};
}
// C's and D's: [m, n], or [n, m] transposed.
StoredShape StoredD(const GemmProblem& problem) {
  return problem.d_transposed ? StoredShape{problem.n, problem.m}
                              : StoredShape{problem.m, problem.n};
}
// The elements from a stored matrix's first to past its last.
int64_t MatrixSpan(StoredShape shape, int64_t ld) {
  return (shape.rows - 1) * ld + shape.columns;
}

// The values of one launch's parameters, passed in the order of the one
// parameter table (gen::GemmKernelParameters).
struct KernelArguments {
  CUtensorMap a_map, b_map, d_map;
  CUdeviceptr d = 0, c = 0, bias = 0, workspace = 0;
  int m = 0, n = 0, k = 0, batch = 1;
  long long ldc = 0, ldd = 0, stride_c = 0, stride_d = 0, stride_bias = 0;
  float alpha = 1, beta = 0;
  int pair_stores = 0;

  void* Address(gen::GemmKernelParameter parameter) {
    switch (parameter) {
      case gen::GemmKernelParameter::kAMap: return &a_map;
      case gen::GemmKernelParameter::kBMap: return &b_map;
      case gen::GemmKernelParameter::kDMap: return &d_map;
      case gen::GemmKernelParameter::kD: return &d;
      case gen::GemmKernelParameter::kC: return &c;
      case gen::GemmKernelParameter::kBias: return &bias;
      case gen::GemmKernelParameter::kWorkspace: return &workspace;
      case gen::GemmKernelParameter::kM: return &m;
      case gen::GemmKernelParameter::kN: return &n;
      case gen::GemmKernelParameter::kK: return &k;
      case gen::GemmKernelParameter::kBatch: return &batch;
      case gen::GemmKernelParameter::kLdc: return &ldc;
      case gen::GemmKernelParameter::kLdd: return &ldd;
      case gen::GemmKernelParameter::kStrideC: return &stride_c;
      case gen::GemmKernelParameter::kStrideD: return &stride_d;
      case gen::GemmKernelParameter::kStrideBias: return &stride_bias;
      case gen::GemmKernelParameter::kAlpha: return &alpha;
      case gen::GemmKernelParameter::kBeta: return &beta;
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

GemmProblem Resolved(const GemmProblem& problem) {
  GemmProblem resolved = problem;
  if (!resolved.output) resolved.output = problem.element;
  const StoredShape a = Stored(problem.a_major, problem.m, problem.k);
  const StoredShape b = Stored(problem.b_major, problem.n, problem.k);
  auto fill = [](int64_t& value, int64_t packed) {
    if (value == 0) value = packed;
  };
  fill(resolved.lda, a.columns);
  fill(resolved.ldb, b.columns);
  const StoredShape d = StoredD(problem);
  fill(resolved.ldc, d.columns);
  fill(resolved.ldd, d.columns);
  fill(resolved.stride_a, a.rows * resolved.lda);
  fill(resolved.stride_b, b.rows * resolved.ldb);
  fill(resolved.stride_c, d.rows * resolved.ldc);
  fill(resolved.stride_d, d.rows * resolved.ldd);
  return resolved;
}

GemmSpans StoredSpans(const GemmProblem& problem) {
  const GemmProblem r = Resolved(problem);
  auto span = [&](StoredShape shape, int64_t ld, int64_t stride) {
    return (r.batch - 1) * stride + MatrixSpan(shape, ld);
  };
  GemmSpans spans;
  spans.a = span(Stored(r.a_major, r.m, r.k), r.lda, r.stride_a);
  spans.b = span(Stored(r.b_major, r.n, r.k), r.ldb, r.stride_b);
  spans.c = span(StoredD(r), r.ldc, r.stride_c);
  spans.d = span(StoredD(r), r.ldd, r.stride_d);
  if (r.bias != BiasAlong::kNone) {
    spans.bias = (r.batch - 1) * r.stride_bias + (r.bias == BiasAlong::kM ? r.m : r.n);
  }
  return spans;
}

GemmProblem SwappedProblem(const GemmProblem& problem) {
  // What the kernel computes swaps as gen::SwappedForm says; the sizes and
  // strides of A and B go with their operands.
  const gen::GemmForm form = gen::SwappedForm(FormOf(problem));
  GemmProblem swapped = problem;
  swapped.a_major = form.a_major;
  swapped.b_major = form.b_major;
  swapped.bias = form.bias;
  swapped.d_transposed = form.d_transposed;
  swapped.m = problem.n;
  swapped.n = problem.m;
  swapped.lda = problem.ldb;
  swapped.ldb = problem.lda;
  swapped.stride_a = problem.stride_b;
  swapped.stride_b = problem.stride_a;
  return swapped;
}

GemmProblem KernelProblem(const gen::GemmConfig& config, const GemmProblem& problem) {
  return config.swap_ab ? SwappedProblem(problem) : problem;
}

gen::GemmForm FormOf(const GemmProblem& problem) {
  gen::GemmForm form;
  form.element = problem.element;
  form.output = problem.output.value_or(problem.element);
  form.a_major = problem.a_major;
  form.b_major = problem.b_major;
  form.reads_c = problem.beta != 0.0f;
  form.bias = problem.bias;
  form.bias_type = problem.bias_type;
  form.activation = problem.activation;
  form.batched = problem.batch > 1;
  form.d_transposed = problem.d_transposed;
  return form;
}

namespace {

absl::Status Refuse(absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("GEMM: ", rule));
}

// A leading dimension of at least the stored row, and (for TMA operands)
// rows starting on 16-byte boundaries.
absl::Status CheckLeadingDimension(absl::string_view name, int64_t ld, int64_t row,
                                   ptx::ScalarType element, bool tma,
                                   absl::string_view packed_size = "") {
  if (ld < row || ld > gen::kMaxGemmDimension) {
    return Refuse(absl::StrCat(name, "=", ld, " must be at least the stored row (",
                               row, " elements) and at most ", gen::kMaxGemmDimension));
  }
  const int64_t bytes = ld * ptx::SizeInBytes(element);
  if (tma && bytes % 16 != 0 && !packed_size.empty()) {
    return Refuse(absl::StrCat(
        packed_size, "=", ld, " gives packed rows of ", name.substr(2), " of ", bytes,
        " bytes; TMA needs every row to start on a 16-byte boundary, so ",
        packed_size, " must be a multiple of ", 16 / ptx::SizeInBytes(element),
        " (or give ", name, ")"));
  }
  if (tma && bytes % 16 != 0) {
    return Refuse(absl::StrCat(
        name, "=", ld, " gives rows of ", bytes, " bytes; TMA needs every row to "
        "start on a 16-byte boundary (", name, " a multiple of ",
        16 / ptx::SizeInBytes(element), ")"));
  }
  return absl::OkStatus();
}

// The matrices of a batch must not overlap, and TMA steps between them in
// multiples of 16 bytes.
absl::Status CheckBatchStride(absl::string_view name, int64_t stride,
                              int64_t matrix, ptx::ScalarType element, bool tma) {
  constexpr int64_t kMaxStride = int64_t{1} << 40;  // TMA's stride field
  if (stride < matrix || stride > kMaxStride / ptx::SizeInBytes(element)) {
    return Refuse(absl::StrCat(name, "=", stride, " must be at least one matrix (",
                               matrix, " elements) and below 2^40 bytes"));
  }
  if (tma && (stride * ptx::SizeInBytes(element)) % 16 != 0) {
    return Refuse(absl::StrCat(name, "=", stride,
                               " must be a multiple of 16 bytes (TMA steps "
                               "between the matrices of a batch)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProblem(const GemmProblem& problem) {
  for (const auto& [name, size] : {std::pair<const char*, int64_t>{"m", problem.m},
                                   {"n", problem.n},
                                   {"k", problem.k}}) {
    if (size < 1 || size > gen::kMaxGemmDimension) {
      return Refuse(absl::StrCat(name, "=", size, " is outside 1..",
                                 gen::kMaxGemmDimension));
    }
  }
  if (absl::Status valid = gen::ValidateGemmForm(FormOf(problem)); !valid.ok()) {
    return valid;
  }
  if (problem.batch < 1 || problem.batch > gen::kMaxGemmBatch) {
    return Refuse(absl::StrCat("batch=", problem.batch, " is outside 1..",
                               gen::kMaxGemmBatch));
  }
  if (!std::isfinite(problem.alpha) || !std::isfinite(problem.beta)) {
    return Refuse("alpha and beta must be finite");
  }
  const GemmProblem r = Resolved(problem);
  const ptx::ScalarType out = *r.output;
  const StoredShape a = Stored(r.a_major, r.m, r.k);
  const StoredShape b = Stored(r.b_major, r.n, r.k);
  const StoredShape d = StoredD(r);
  const bool reads_c = r.beta != 0.0f;
  for (const absl::Status& rule : {
           CheckLeadingDimension("lda", r.lda, a.columns, r.element, true,
                                 problem.lda != 0 ? ""
                                 : r.a_major == MajorOrder::kK ? "k" : "m"),
           CheckLeadingDimension("ldb", r.ldb, b.columns, r.element, true,
                                 problem.ldb != 0 ? ""
                                 : r.b_major == MajorOrder::kK ? "k" : "n"),
           reads_c ? CheckLeadingDimension("ldc", r.ldc, d.columns, out, false)
                   : absl::OkStatus(),
           CheckLeadingDimension("ldd", r.ldd, d.columns, out, false),
       }) {
    if (!rule.ok()) return rule;
  }
  if (r.batch > 1) {
    for (const absl::Status& rule : {
             CheckBatchStride("stride_a", r.stride_a, MatrixSpan(a, r.lda), r.element, true),
             CheckBatchStride("stride_b", r.stride_b, MatrixSpan(b, r.ldb), r.element, true),
             reads_c ? CheckBatchStride("stride_c", r.stride_c,
                                        MatrixSpan(d, r.ldc), out, false)
                     : absl::OkStatus(),
             CheckBatchStride("stride_d", r.stride_d, MatrixSpan(d, r.ldd), out, false),
         }) {
      if (!rule.ok()) return rule;
    }
    const int64_t bias_length = r.bias == BiasAlong::kM ? r.m : r.n;
    if (r.bias != BiasAlong::kNone && r.stride_bias != 0 && r.stride_bias < bias_length) {
      return Refuse(absl::StrCat("stride_bias=", r.stride_bias,
                                 " must be 0 (one bias for the batch) or at least ",
                                 bias_length));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> LoadGemmKernel(
    const GemmPlan& plan) {
  absl::StatusOr<CUcontext> context = CurrentOrPrimaryContext();
  if (!context.ok()) return context.status();
  // The whole configuration, launch policy included: the loaded kernel
  // carries it to every Gemm that uses it.
  const gen::GeneratedGemm& generated = plan.generated;
  Registry& registry = LoadedKernels();
  const std::pair<CUcontext, std::string> key{
      *context, absl::StrCat(gen::FormName(generated.form), " ",
                             gen::ConfigName(generated.config))};
  {
    absl::MutexLock lock(&registry.mutex);
    auto it = registry.kernels.find(key);
    if (it != registry.kernels.end()) return it->second;
  }
  absl::StatusOr<runtime::Module> module = runtime::Module::LoadCubin(*plan.compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<runtime::Function> function =
      module->GetFunction(generated.kernel_name);
  if (!function.ok()) return function.status();
  if (absl::Status shared = function->SetMaxDynamicSharedMemory(generated.shared_bytes);
      !shared.ok()) {
    return shared;
  }
  absl::StatusOr<int> resident = ResidentClusters(plan, *function);
  if (!resident.ok()) return resident.status();
  if (*resident < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GEMM kernel ", generated.kernel_name, " cannot be resident on this "
        "device (", generated.shared_bytes, " bytes of shared memory, ",
        generated.threads_per_block, " threads, clusters of ",
        generated.config.cluster_m, ")"));
  }
  auto loaded = std::make_shared<const LoadedGemmKernel>(
      generated, plan.compiled, *std::move(module), *std::move(function), *resident);
  absl::MutexLock lock(&registry.mutex);
  return registry.kernels.emplace(key, std::move(loaded)).first->second;
}

namespace {

// The workspace of a launch PlanGemmLaunch accepted, on its `grid`.
absl::StatusOr<std::shared_ptr<const GemmWorkspace>> PrepareWorkspace(
    const GemmPlan& plan, const gen::GemmGrid& grid) {
  const GemmProblem problem = KernelProblem(plan.config, plan.problem);
  const gen::GemmConfig& config = plan.config;
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
  workspace->reduce = *reduce;
  workspace->sm_count = plan.target.sm_count;
  return workspace;
}

// The current device as a plan's target.
absl::StatusOr<GemmTarget> CurrentTarget() {
  absl::StatusOr<runtime::DeviceProperties> device = runtime::CurrentDeviceProperties();
  if (!device.ok()) return device.status();
  return GemmTargetOf(*device);
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
  absl::StatusOr<GemmTarget> target = CurrentTarget();
  if (!target.ok()) return target.status();
  GemmOptions planned = options;
  planned.cache = &cache;
  if (!options.config.has_value() && options.selection == Selection::kAutotune) {
    absl::StatusOr<gen::GemmConfig> tuned =
        AutotunedConfig(problem, CandidateConfigs(problem), cache);
    if (!tuned.ok()) return tuned.status();
    planned.config = *tuned;
  }
  absl::StatusOr<GemmPlan> plan = PlanGemm(problem, *target, planned);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<std::shared_ptr<const LoadedGemmKernel>> kernel = LoadGemmKernel(*plan);
  if (!kernel.ok()) return kernel.status();
  // The plan's 2-CTA clusters are an upper bound; the driver knows how
  // many the GPCs hold.
  absl::StatusOr<gen::GemmGrid> grid = plan->grid;
  if ((*kernel)->resident_clusters != plan->resident_clusters) {
    grid = PlanGemmLaunch(problem, plan->config, (*kernel)->resident_clusters);
  }
  if (!grid.ok()) return grid.status();
  absl::StatusOr<std::shared_ptr<const GemmWorkspace>> workspace =
      PrepareWorkspace(*plan, *grid);
  if (!workspace.ok()) return workspace.status();
  return Gemm(plan->problem, *grid, *std::move(kernel), *std::move(workspace));
}

const gen::GemmConfig& Gemm::config() const { return kernel_->generated.config; }
const gen::GeneratedGemm& Gemm::generated() const { return kernel_->generated; }
const compile::CompiledModule& Gemm::compiled() const { return *kernel_->compiled; }

absl::Status Gemm::Run(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream) const {
  GemmOperands operands;
  operands.a = a;
  operands.b = b;
  operands.d = c;
  return Run(operands, stream);
}

absl::Status Gemm::Run(const GemmOperands& given, CUstream stream) const {
  // Resolved by Prepare; the kernel of a swapped config takes B as its A.
  const GemmProblem p = KernelProblem(kernel_->generated.config, problem_);
  GemmOperands operands = given;
  const bool reads_c = p.beta != 0.0f;
  const bool has_bias = p.bias != BiasAlong::kNone;
  for (const auto& [name, address, used] :
       {std::tuple<const char*, CUdeviceptr, bool>{"A", operands.a, true},
        {"B", operands.b, true},
        {"C", operands.c, reads_c},
        {"D", operands.d, true},
        {"the bias", operands.bias, has_bias}}) {
    if (!used) continue;
    if (absl::Status usable = CheckOperandAddress(name, address); !usable.ok()) {
      return usable;
    }
  }
  const gen::GeneratedGemm& generated = kernel_->generated;
  if (generated.config.swap_ab) std::swap(operands.a, operands.b);
  const StoredShape a = Stored(p.a_major, p.m, p.k);
  const StoredShape b = Stored(p.b_major, p.n, p.k);
  absl::StatusOr<CUtensorMap> a_map = OperandMap(
      generated.a_box, p.element, operands.a, a.rows, a.columns, p.lda, p.batch, p.stride_a);
  if (!a_map.ok()) return a_map.status();
  absl::StatusOr<CUtensorMap> b_map = OperandMap(
      generated.b_box, p.element, operands.b, b.rows, b.columns, p.ldb, p.batch, p.stride_b);
  if (!b_map.ok()) return b_map.status();
  KernelArguments arguments;
  arguments.a_map = *a_map;
  arguments.b_map = *b_map;
  arguments.d_map = {};
  if (generated.config.epilogue == gen::GemmEpilogue::kTmaStore) {
    absl::StatusOr<CUtensorMap> encoded = OperandMap(
        generated.d_box, *p.output, operands.d, p.m, p.n, p.ldd, p.batch, p.stride_d);
    if (!encoded.ok()) return encoded.status();
    arguments.d_map = *encoded;
  }
  arguments.d = operands.d;
  arguments.c = reads_c ? operands.c : 0;
  arguments.bias = has_bias ? operands.bias : 0;
  arguments.workspace = workspace_ ? workspace_->buffer.address() : 0;
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
  std::vector<void*> args = arguments.InTableOrder();
  if (absl::Status launched =
          kernel_->function.Launch(LaunchShape(generated, grid_, stream), args.data());
      !launched.ok() || workspace_ == nullptr || !workspace_->reduce) {
    return launched;
  }
  return Reduce(operands.d, stream);
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
