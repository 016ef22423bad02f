// Layer: the Attention, above plan.cc: the planned kernel loaded once per
// context, Run's checks, tensor maps and launch.
#include "ptxgen/attention/attention.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/attention/attention_internal.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/kernel_registry.h"
#include "ptxgen/runtime/launch_checks.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/target.h"
#include "ptxgen/runtime/tensor_map.h"

namespace ptxgen::attention {

// A planned kernel loaded into one context.
class LoadedAttentionKernel {
 public:
  LoadedAttentionKernel(gen::GeneratedAttention generated,
                        std::shared_ptr<const compile::CompiledModule> compiled,
                        runtime::Module module, runtime::Function function)
      : generated(std::move(generated)),
        compiled(std::move(compiled)),
        module(std::move(module)),
        function(std::move(function)) {}

  const gen::GeneratedAttention generated;
  const std::shared_ptr<const compile::CompiledModule> compiled;
  const runtime::Module module;
  const runtime::Function function;
};

namespace {

constexpr runtime::LaunchOwner kOwner = {kAttentionFamily, "Attention",
                                         "an Attention", "AttentionOptions"};

// Loaded by kernel name, which names everything the source is generated
// from: every Attention of a context shares it.
absl::StatusOr<std::shared_ptr<const LoadedAttentionKernel>> LoadKernel(
    const AttentionPlan& plan, CUcontext context) {
  const gen::GeneratedAttention& generated = plan.generated;
  return runtime::KernelLoadedIn<LoadedAttentionKernel>(
      context, kAttentionFamily, generated.kernel_name,
      [&]() -> absl::StatusOr<std::shared_ptr<const LoadedAttentionKernel>> {
        absl::StatusOr<runtime::LoadedFunction> function =
            runtime::LoadKernelFunction(*plan.compiled, generated.kernel_name,
                                        generated.shared_bytes);
        if (!function.ok()) return function.status();
        return std::make_shared<const LoadedAttentionKernel>(
            generated, plan.compiled, std::move(function->module),
            std::move(function->function));
      });
}

}  // namespace

class AttentionPreparation {
 public:
  static absl::StatusOr<Attention> InCurrentContext(
      const AttentionProblem& problem, const AttentionOptions& options,
      CUcontext context);
};

absl::StatusOr<Attention> AttentionPreparation::InCurrentContext(
    const AttentionProblem& problem, const AttentionOptions& options,
    CUcontext context) {
  absl::StatusOr<runtime::DeviceProperties> device =
      runtime::CurrentDeviceProperties();
  if (!device.ok()) return device.status();
  absl::StatusOr<AttentionTarget> target =
      runtime::KernelTargetOf(*device, kAttentionFamily);
  if (!target.ok()) return target.status();
  absl::StatusOr<AttentionPlan> plan = PlanAttention(problem, *target, options);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<std::shared_ptr<const LoadedAttentionKernel>> kernel =
      LoadKernel(*plan, context);
  if (!kernel.ok()) return kernel.status();
  return Attention(plan->problem, plan->grid, context, device->ordinal,
                   *std::move(kernel));
}

namespace {

// One of Q, K, V, O as its map reads it: (head_dim, rows, heads, batch).
struct MapShape {
  int64_t rows = 0;
  int64_t heads = 0;
  int64_t sequences = 0;
  Strides strides;
};

absl::StatusOr<CUtensorMap> TensorMap(const gen::GeneratedAttention& kernel,
                                      const AttentionProblem& problem,
                                      CUdeviceptr address,
                                      const MapShape& shape, int box_rows) {
  const uint64_t bytes = ptx::SizeInBytes(problem.element);
  runtime::TensorMapSpec spec;
  spec.element = problem.element;
  spec.global_address = address;
  spec.dims = {static_cast<uint64_t>(problem.head_dim),
               static_cast<uint64_t>(shape.rows),
               static_cast<uint64_t>(shape.heads),
               static_cast<uint64_t>(shape.sequences)};
  // One sequence (variable lengths) never steps the batch dimension: any
  // legal stride does.
  const int64_t batch_stride =
      shape.sequences > 1 ? shape.strides.batch : shape.strides.seq;
  spec.strides_bytes = {static_cast<uint64_t>(shape.strides.seq) * bytes,
                        static_cast<uint64_t>(shape.strides.head) * bytes,
                        static_cast<uint64_t>(batch_stride) * bytes};
  spec.box = {static_cast<uint32_t>(kernel.box_columns),
              static_cast<uint32_t>(box_rows), 1, 1};
  spec.swizzle = kernel.swizzle;
  spec.l2_promotion = runtime::L2Promotion::k256B;
  return runtime::EncodeTensorMap(spec);
}

// The values of one launch's parameters, in the order of
// gen::AttentionKernelParameters().
struct KernelArguments {
  CUtensorMap q_map, k_map, v_map, o_map;
  CUdeviceptr o = 0, lse = 0, cu_seqlens_q = 0, cu_seqlens_k = 0;
  int seq_q = 0, seq_k = 0, total_q = 0, total_k = 0, query_blocks = 0,
      heads_q = 0, batch = 0, heads_per_kv = 0;
  long long o_seq_stride = 0, o_head_stride = 0, o_batch_stride = 0;
  float scale_log2 = 0;

  std::vector<void*> InTableOrder() {
    return {&q_map,
            &k_map,
            &v_map,
            &o_map,
            &o,
            &lse,
            &cu_seqlens_q,
            &cu_seqlens_k,
            &seq_q,
            &seq_k,
            &total_q,
            &total_k,
            &query_blocks,
            &heads_q,
            &batch,
            &heads_per_kv,
            &o_seq_stride,
            &o_head_stride,
            &o_batch_stride,
            &scale_log2};
  }
};

}  // namespace

absl::StatusOr<Attention> Attention::Prepare(const AttentionProblem& problem,
                                             const AttentionOptions& options) {
  if (absl::Status valid = ValidateAttentionProblem(problem); !valid.ok()) {
    return valid;
  }
  if (!options.device.has_value()) {
    absl::StatusOr<CUcontext> context = runtime::CurrentOrPrimaryContext();
    if (!context.ok()) return context.status();
    return AttentionPreparation::InCurrentContext(problem, options, *context);
  }
  absl::StatusOr<const runtime::PrimaryContext*> primary =
      runtime::PrimaryContextOfDevice(kOwner, *options.device);
  if (!primary.ok()) return primary.status();
  // Current for this call only: the caller's context stays the caller's.
  absl::StatusOr<runtime::ScopedCurrentContext> scope =
      runtime::ScopedCurrentContext::Push((*primary)->get());
  if (!scope.ok()) return scope.status();
  return AttentionPreparation::InCurrentContext(problem, options,
                                                (*primary)->get());
}

const gen::AttentionConfig& Attention::config() const {
  return kernel_->generated.config;
}
const gen::GeneratedAttention& Attention::generated() const {
  return kernel_->generated;
}
const compile::CompiledModule& Attention::compiled() const {
  return *kernel_->compiled;
}

absl::Status Attention::Run(const AttentionOperands& operands,
                            CUstream stream) const {
  const AttentionProblem& p = problem_;
  const bool varlen = p.variable_lengths;
  const runtime::LaunchOperand named[] = {
      {"Q", operands.q, true},
      {"K", operands.k, true},
      {"V", operands.v, true},
      {"O", operands.o, true},
      {"the LSE", operands.lse, operands.lse != 0, 4},
      {"cu_seqlens_q", operands.cu_seqlens_q, varlen, 4},
      {"cu_seqlens_k", operands.cu_seqlens_k, varlen, 4},
  };
  if (absl::Status here =
          runtime::CheckLaunchHere(kOwner, named, stream, context_, device_);
      !here.ok()) {
    return here;
  }
  if (absl::Status apart = OutputsApart(p, operands); !apart.ok()) {
    return apart;
  }
  const gen::GeneratedAttention& kernel = kernel_->generated;
  const int64_t sequences = varlen ? 1 : p.batch;
  const int64_t rows_q = varlen ? p.total_q : p.seq_q;
  const int64_t rows_k = varlen ? p.total_k : p.seq_k;
  KernelArguments arguments;
  const struct {
    CUtensorMap* map;
    CUdeviceptr address;
    MapShape shape;
    int box_rows;
  } maps[] = {
      {&arguments.q_map,
       operands.q,
       {rows_q, p.heads_q, sequences, p.q_stride},
       kernel.q_box_rows},
      {&arguments.k_map,
       operands.k,
       {rows_k, p.heads_kv, sequences, p.k_stride},
       kernel.kv_box_rows},
      {&arguments.v_map,
       operands.v,
       {rows_k, p.heads_kv, sequences, p.v_stride},
       kernel.kv_box_rows},
      {&arguments.o_map,
       operands.o,
       {rows_q, p.heads_q, sequences, p.o_stride},
       kernel.o_box_rows},
  };
  for (const auto& map : maps) {
    absl::StatusOr<CUtensorMap> encoded =
        TensorMap(kernel, p, map.address, map.shape, map.box_rows);
    if (!encoded.ok()) return encoded.status();
    *map.map = *encoded;
  }
  arguments.o = operands.o;
  arguments.lse = operands.lse;
  arguments.cu_seqlens_q = varlen ? operands.cu_seqlens_q : 0;
  arguments.cu_seqlens_k = varlen ? operands.cu_seqlens_k : 0;
  arguments.seq_q = static_cast<int>(p.seq_q);
  arguments.seq_k = static_cast<int>(p.seq_k);
  arguments.total_q = static_cast<int>(p.total_q);
  arguments.total_k = static_cast<int>(p.total_k);
  arguments.query_blocks = grid_.query_blocks;
  arguments.heads_q = grid_.heads;
  arguments.batch = grid_.batch;
  arguments.heads_per_kv = static_cast<int>(p.heads_q / p.heads_kv);
  arguments.o_seq_stride = p.o_stride.seq;
  arguments.o_head_stride = p.o_stride.head;
  arguments.o_batch_stride = varlen ? 0 : p.o_stride.batch;
  arguments.scale_log2 = ScaleLog2(*p.scale);
  runtime::LaunchConfig launch;
  launch.grid = {static_cast<uint32_t>(grid_.ctas), 1, 1};
  launch.block = {static_cast<uint32_t>(kernel.threads_per_block), 1, 1};
  launch.cluster = {1, 1, 1};
  launch.shared_bytes = kernel.shared_bytes;
  launch.stream = stream;
  std::vector<void*> args = arguments.InTableOrder();
  return kernel_->function.Launch(launch, args.data());
}

}  // namespace ptxgen::attention
