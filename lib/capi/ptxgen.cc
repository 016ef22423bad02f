// The C API over gemm::PlanGemm, gemm::Gemm::Prepare and Gemm::Run, and
// attention::Attention::Prepare and Run. Nothing of C++ crosses it: every
// entry point returns a ptxgenStatus_t, catches what the standard library
// could throw (std::bad_alloc), and keeps the absl::Status message in the
// handle for ptxgenGetLastErrorMessage.
#include "ptxgen/ptxgen.h"

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/capi/problem.h"
#include "lib/capi/status.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/target.h"
#include "ptxgen/version.h"

static_assert(std::is_same_v<ptxgenStream_t, CUstream>,
              "ptxgenStream_t must be CUstream, so callers pass theirs as is");
static_assert(sizeof(ptxgenStatus_t) == sizeof(int));

namespace ptxgen::capi {

// The first word of every object the C API hands out, one value per kind:
// checked on every entry and cleared on destroy, so that a destroyed or
// foreign pointer is refused wherever its memory does not still say
// otherwise (using one is undefined behaviour all the same).
enum class Magic : uint64_t {
  kDestroyed = 0,
  kHandle = 0x7074786748616e64,     // "ptxgHand"
  kPlan = 0x70747867506c616e,       // "ptxgPlan"
  kGemm = 0x7074786747656d6d,       // "ptxgGemm"
  kAttention = 0x707478674174746e,  // "ptxgAttn"
};

// The base of each object, so that its magic word is its first.
struct Object {
  explicit Object(Magic kind) : magic(kind) {}
  Magic magic;
};

}  // namespace ptxgen::capi

// Each thread's message of its last call; a thread's entry is written only
// by that thread, and std::map keeps it in place while others insert, so
// the pointer handed out stays valid until that thread's next call.
struct ptxgenHandleImpl : ptxgen::capi::Object {
  ptxgenHandleImpl() : Object(ptxgen::capi::Magic::kHandle) {}
  absl::Mutex mutex;
  std::map<std::thread::id, std::string> messages ABSL_GUARDED_BY(mutex);
};

namespace ptxgen::capi {

// The names ptxgenKernelInfo_t points to, kept beside the kernel.
struct KernelNames {
  std::string config;
  std::string form;
};

}  // namespace ptxgen::capi

// A GEMM's plan or an attention's: ptxgenPlanGetKernelInfo reads either.
struct ptxgenPlanImpl : ptxgen::capi::Object {
  using Planned =
      std::variant<ptxgen::gemm::GemmPlan, ptxgen::attention::AttentionPlan>;
  ptxgenPlanImpl(Planned planned, ptxgen::capi::KernelNames kernel_names)
      : Object(ptxgen::capi::Magic::kPlan),
        plan(std::move(planned)),
        names(std::move(kernel_names)) {}
  Planned plan;
  ptxgen::capi::KernelNames names;
};

struct ptxgenGemmImpl : ptxgen::capi::Object {
  ptxgenGemmImpl(ptxgen::gemm::Gemm prepared,
                 ptxgen::capi::KernelNames kernel_names)
      : Object(ptxgen::capi::Magic::kGemm),
        gemm(std::move(prepared)),
        names(std::move(kernel_names)) {}
  ptxgen::gemm::Gemm gemm;
  ptxgen::capi::KernelNames names;
};

struct ptxgenAttentionImpl : ptxgen::capi::Object {
  ptxgenAttentionImpl(ptxgen::attention::Attention prepared,
                      ptxgen::capi::KernelNames kernel_names)
      : Object(ptxgen::capi::Magic::kAttention),
        attention(std::move(prepared)),
        names(std::move(kernel_names)) {}
  ptxgen::attention::Attention attention;
  ptxgen::capi::KernelNames names;
};

namespace ptxgen::capi {
namespace {

// Whether `object` is a live object of `kind`: its first word, read as
// bytes (a foreign pointer need not hold an Object).
bool IsLive(const void* object, Magic kind) {
  if (object == nullptr) return false;
  Magic word = Magic::kDestroyed;
  std::memcpy(&word, object, sizeof word);
  return word == kind;
}

// Clears the magic word, then frees the object.
template <typename Impl>
void Destroy(Impl* object) {
  object->magic = Magic::kDestroyed;
  delete object;
}

constexpr char kNotLive[] =
    " is not a live object: destroyed, never created or of another kind";

// Stores the calling thread's message, "<function>: <message>" (or "" for
// none). Losing it to a failed allocation must not turn a status into an
// exception.
void SetMessage(ptxgenHandle_t handle, absl::string_view function,
                absl::string_view message) {
  try {
    std::string text =
        function.empty() ? "" : absl::StrCat(function, ": ", message);
    absl::MutexLock lock(&handle->mutex);
    handle->messages[std::this_thread::get_id()] = std::move(text);
  } catch (...) {
  }
}

ptxgenStatus_t Fail(ptxgenHandle_t handle, ptxgenStatus_t status,
                    absl::string_view function, absl::string_view message) {
  SetMessage(handle, function, message);
  return status;
}

ptxgenStatus_t Succeed(ptxgenHandle_t handle) {
  SetMessage(handle, "", "");
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t FailNull(ptxgenHandle_t handle, absl::string_view function,
                        absl::string_view argument) {
  return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function,
              absl::StrCat(argument, " is NULL"));
}

ptxgenStatus_t FailWith(ptxgenHandle_t handle, absl::string_view function,
                        const absl::Status& status, Step step) {
  return Fail(handle, StatusOf(status.code(), step), function,
              status.message());
}

// Runs an entry point's body: no exception leaves the library.
template <typename Body>
ptxgenStatus_t Guarded(ptxgenHandle_t handle, absl::string_view function,
                       Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(handle, PTXGEN_STATUS_ALLOC_FAILED, function,
                "out of host memory");
  } catch (...) {
    return Fail(handle, PTXGEN_STATUS_INTERNAL_ERROR, function,
                "an unexpected C++ exception");
  }
}

// The problem, its enumerations and rules checked (ValidateProblem).
absl::StatusOr<gemm::GemmProblem> ValidProblem(
    const ptxgenGemmProblem_t& problem) {
  absl::StatusOr<gemm::GemmProblem> converted = ProblemOf(problem);
  if (!converted.ok()) return converted;
  if (absl::Status valid = gemm::ValidateProblem(*converted); !valid.ok()) {
    return valid;
  }
  return converted;
}

// The problem `problem` points to, checked as every entry point checks it;
// empty when it is refused, the handle then holding why and `failed` the
// status to return.
std::optional<gemm::GemmProblem> ReadProblem(ptxgenHandle_t handle,
                                             absl::string_view function,
                                             const ptxgenGemmProblem_t* problem,
                                             ptxgenStatus_t& failed) {
  if (problem == nullptr) {
    failed = FailNull(handle, function, "problem");
    return std::nullopt;
  }
  absl::StatusOr<gemm::GemmProblem> valid = ValidProblem(*problem);
  if (!valid.ok()) {
    failed = Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function,
                  valid.status().message());
    return std::nullopt;
  }
  return *std::move(valid);
}

// The device Gemm::Prepare plans for: the current context's, else device 0
// (whose primary context Prepare then makes current).
absl::StatusOr<runtime::DeviceProperties> DeviceToPrepareOn() {
  absl::StatusOr<CUcontext> current = runtime::CurrentContext();
  if (!current.ok()) return current.status();
  return *current != nullptr ? runtime::CurrentDeviceProperties()
                             : runtime::GetDeviceProperties(0);
}

// Whether there is a device, and one that runs sm_90a: each its own status,
// before Gemm::Prepare's failures, which do not tell them apart.
ptxgenStatus_t CheckDevice(ptxgenHandle_t handle, absl::string_view function) {
  absl::StatusOr<int> count = runtime::DeviceCount();
  if (!count.ok()) {
    return Fail(handle, PTXGEN_STATUS_NO_DEVICE, function,
                count.status().message());
  }
  if (*count == 0) {
    return Fail(handle, PTXGEN_STATUS_NO_DEVICE, function,
                "the CUDA driver sees no device");
  }
  absl::StatusOr<runtime::DeviceProperties> device = DeviceToPrepareOn();
  if (!device.ok())
    return FailWith(handle, function, device.status(), Step::kPrepare);
  absl::StatusOr<gemm::GemmTarget> target =
      runtime::KernelTargetOf(*device, gemm::kGemmFamily);
  if (!target.ok()) {
    return Fail(handle,
                absl::IsFailedPrecondition(target.status())
                    ? PTXGEN_STATUS_ARCH_MISMATCH
                    : PTXGEN_STATUS_NOT_SUPPORTED,
                function, target.status().message());
  }
  return PTXGEN_STATUS_SUCCESS;
}

KernelNames NamesOf(const gen::GeneratedGemm& generated) {
  return {gen::ConfigName(generated.config), gen::FormName(generated.form)};
}

// What an attention computes, in the words of a GEMM's form name (its type,
// then what is added to it): "attention.bf16.d128+causal+varlen". The
// configuration's name says it too, beside how.
KernelNames NamesOf(const gen::GeneratedAttention& generated) {
  const gen::AttentionConfig& config = generated.config;
  return {gen::AttentionConfigName(config),
          absl::StrCat("attention.", ptx::PtxName(config.element), ".d",
                       config.head_dim, config.causal ? "+causal" : "",
                       config.variable_lengths ? "+varlen" : "")};
}

// ptxas's report of the kernel itself (the module has no other kernel, but
// the name says which is meant). Generated: gen::GeneratedGemm or
// gen::GeneratedAttention.
template <typename Generated>
compile::KernelResources ResourcesOf(const Generated& generated,
                                     const compile::CompiledModule& compiled) {
  for (const compile::KernelResources& kernel : compiled.resources) {
    if (kernel.kernel == generated.kernel_name) return kernel;
  }
  return {};
}

template <typename Generated>
ptxgenKernelInfo_t InfoOf(const Generated& generated,
                          const compile::CompiledModule& compiled,
                          const KernelNames& names) {
  const compile::KernelResources resources = ResourcesOf(generated, compiled);
  ptxgenKernelInfo_t info{};
  info.kernel_name = generated.kernel_name.c_str();
  info.config_name = names.config.c_str();
  info.form_name = names.form.c_str();
  info.source = generated.source.c_str();
  info.ptx = compiled.ptx.c_str();
  info.cubin = compiled.cubin.data();
  info.cubin_size = compiled.cubin.size();
  info.registers = resources.registers;
  info.spill_store_bytes = resources.spill_store_bytes;
  info.spill_load_bytes = resources.spill_load_bytes;
  info.stack_frame_bytes = resources.stack_frame_bytes;
  info.shared_bytes = generated.shared_bytes;
  info.threads_per_block = generated.threads_per_block;
  return info;
}

CUdeviceptr Address(const void* pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

// The caller's workspace as Gemm::Run takes it; a size past int64_t is as
// good as the largest.
gemm::CallerWorkspace WorkspaceOf(void* workspace, size_t bytes, bool zeroed) {
  constexpr uint64_t kLargest = std::numeric_limits<int64_t>::max();
  return {Address(workspace),
          static_cast<int64_t>(std::min<uint64_t>(bytes, kLargest)), zeroed};
}

// The run entry points: `function` names the one called; `workspace` is
// the caller's, for ptxgenGemmRunWith(Zeroed)Workspace.
ptxgenStatus_t Run(ptxgenHandle_t handle, absl::string_view function,
                   ptxgenGemm_t gemm, const ptxgenGemmOperands_t* operands,
                   const std::optional<gemm::CallerWorkspace>& workspace,
                   ptxgenStream_t stream) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  return Guarded(handle, function, [&]() -> ptxgenStatus_t {
    if (gemm == nullptr) return FailNull(handle, function, "gemm");
    if (operands == nullptr) return FailNull(handle, function, "operands");
    if (!IsLive(gemm, Magic::kGemm)) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function,
                  absl::StrCat("gemm", kNotLive));
    }
    gemm::GemmOperands addresses;
    addresses.a = Address(operands->a);
    addresses.b = Address(operands->b);
    addresses.c = Address(operands->c);
    addresses.d = Address(operands->d);
    addresses.bias = Address(operands->bias);
    addresses.scale_a = Address(operands->scale_a);
    addresses.scale_b = Address(operands->scale_b);
    addresses.scale_d = Address(operands->scale_d);
    addresses.amax_d = Address(operands->amax_d);
    addresses.group_rows = Address(operands->group_rows);
    const absl::Status ran = workspace
                                 ? gemm->gemm.Run(addresses, *workspace, stream)
                                 : gemm->gemm.Run(addresses, stream);
    if (!ran.ok()) {
      return FailWith(handle, function, ran, Step::kRun);
    }
    return Succeed(handle);
  });
}

// Both prepare entry points: `function` names the one called.
ptxgenStatus_t Prepare(ptxgenHandle_t handle, absl::string_view function,
                       const ptxgenGemmProblem_t* problem,
                       ptxgenWorkspaceMode_t mode, ptxgenGemm_t* gemm) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  return Guarded(handle, function, [&]() -> ptxgenStatus_t {
    if (gemm == nullptr) return FailNull(handle, function, "gemm");
    *gemm = nullptr;
    if (mode != PTXGEN_WORKSPACE_OWNED && mode != PTXGEN_WORKSPACE_CALLER) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function,
                  absl::StrCat("mode: ", static_cast<int>(mode),
                               " is not a ptxgenWorkspaceMode_t "
                               "(PTXGEN_WORKSPACE_OWNED=0, "
                               "PTXGEN_WORKSPACE_CALLER=1)"));
    }
    ptxgenStatus_t refused = PTXGEN_STATUS_SUCCESS;
    const std::optional<gemm::GemmProblem> valid =
        ReadProblem(handle, function, problem, refused);
    if (!valid) return refused;
    if (ptxgenStatus_t device = CheckDevice(handle, function);
        device != PTXGEN_STATUS_SUCCESS) {
      return device;
    }
    gemm::GemmOptions options;
    options.workspace = mode == PTXGEN_WORKSPACE_CALLER
                            ? gemm::WorkspaceOwner::kCaller
                            : gemm::WorkspaceOwner::kGemm;
    absl::StatusOr<gemm::Gemm> prepared = gemm::Gemm::Prepare(*valid, options);
    if (!prepared.ok()) {
      return FailWith(handle, function, prepared.status(), Step::kPrepare);
    }
    const KernelNames names = NamesOf(prepared->generated());
    *gemm = new ptxgenGemmImpl(*std::move(prepared), names);
    return Succeed(handle);
  });
}

// The attention problem `problem` points to, checked as every attention
// entry point checks it: ReadProblem's counterpart.
std::optional<attention::AttentionProblem> ReadAttentionProblem(
    ptxgenHandle_t handle, absl::string_view function,
    const ptxgenAttentionProblem_t* problem, ptxgenStatus_t& failed) {
  if (problem == nullptr) {
    failed = FailNull(handle, function, "problem");
    return std::nullopt;
  }
  absl::StatusOr<attention::AttentionProblem> converted =
      AttentionProblemOf(*problem);
  const absl::Status valid =
      converted.ok() ? attention::ValidateAttentionProblem(*converted)
                     : converted.status();
  if (!valid.ok()) {
    failed =
        Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function, valid.message());
    return std::nullopt;
  }
  return *std::move(converted);
}

// ptxgenPlanGemm's and ptxgenPlanAttention's steps: the problem read by
// `read` (ReadProblem or ReadAttentionProblem) and the target (NULL: an
// H200) checked, each refused as PTXGEN_STATUS_INVALID_VALUE naming the
// rule (the target's as `family`'s: "GEMM", "attention"), then planned by
// `plan_it` (gemm::PlanGemm or attention::PlanAttention) into a new plan.
template <typename CProblem, typename Read, typename PlanIt>
ptxgenStatus_t MakePlan(ptxgenHandle_t handle, const char* function,
                        const char* family, const CProblem* problem,
                        const ptxgenTarget_t* target, ptxgenPlan_t* plan,
                        Read read, PlanIt plan_it) {
  return Guarded(handle, function, [&]() -> ptxgenStatus_t {
    if (plan == nullptr) return FailNull(handle, function, "plan");
    *plan = nullptr;
    ptxgenStatus_t refused = PTXGEN_STATUS_SUCCESS;
    const auto valid = read(handle, function, problem, refused);
    if (!valid) return refused;
    const gemm::GemmTarget converted = TargetOf(target);
    if (absl::Status usable = runtime::ValidateKernelTarget(converted, family);
        !usable.ok()) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, function,
                  usable.message());
    }
    auto planned = plan_it(*valid, converted);
    if (!planned.ok()) {
      return FailWith(handle, function, planned.status(), Step::kPlan);
    }
    const KernelNames names = NamesOf(planned->generated);
    *plan = new ptxgenPlanImpl(*std::move(planned), names);
    return Succeed(handle);
  });
}

constexpr char kNullHandleMessage[] =
    "ptxgenGetLastErrorMessage: the handle is NULL (ptxgenCreate makes one)";
constexpr char kDeadHandleMessage[] =
    "ptxgenGetLastErrorMessage: the handle is not a live object: destroyed, "
    "never created or of another kind";

}  // namespace
}  // namespace ptxgen::capi

using ptxgen::capi::Fail;
using ptxgen::capi::FailNull;
using ptxgen::capi::FailWith;
using ptxgen::capi::Guarded;
using ptxgen::capi::IsLive;
using ptxgen::capi::Magic;
using ptxgen::capi::Step;
using ptxgen::capi::Succeed;

extern "C" {

const char* ptxgenGetStatusName(ptxgenStatus_t status) {
  return ptxgen::capi::StatusName(status);
}

const char* ptxgenGetStatusString(ptxgenStatus_t status) {
  return ptxgen::capi::StatusString(status);
}

const char* ptxgenGetVersionString(void) { return ptxgen::kVersion; }

ptxgenStatus_t ptxgenCreate(ptxgenHandle_t* handle) {
  if (handle == nullptr) return PTXGEN_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) ptxgenHandleImpl;
  return *handle != nullptr ? PTXGEN_STATUS_SUCCESS
                            : PTXGEN_STATUS_ALLOC_FAILED;
}

ptxgenStatus_t ptxgenDestroy(ptxgenHandle_t handle) {
  if (handle == nullptr) return PTXGEN_STATUS_SUCCESS;
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  ptxgen::capi::Destroy(handle);
  return PTXGEN_STATUS_SUCCESS;
}

const char* ptxgenGetLastErrorMessage(ptxgenHandle_t handle) {
  if (handle == nullptr) return ptxgen::capi::kNullHandleMessage;
  if (!IsLive(handle, Magic::kHandle)) {
    return ptxgen::capi::kDeadHandleMessage;
  }
  try {
    absl::MutexLock lock(&handle->mutex);
    return handle->messages[std::this_thread::get_id()].c_str();
  } catch (...) {
    return "ptxgenGetLastErrorMessage: out of host memory";
  }
}

ptxgenStatus_t ptxgenGemmProblemInit(ptxgenGemmProblem_t* problem, int64_t m,
                                     int64_t n, int64_t k,
                                     ptxgenDataType_t type) {
  if (problem == nullptr || !ptxgen::capi::CheckInit(m, n, k, type).ok()) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  *problem = ptxgenGemmProblem_t{};
  problem->m = m;
  problem->n = n;
  problem->k = k;
  problem->input_type = type;
  problem->b_input_type = type;
  problem->output_type = ptxgen::capi::DefaultOutputType(type);
  problem->a_major = PTXGEN_MAJOR_K;
  problem->b_major = PTXGEN_MAJOR_K;
  problem->batch = 1;
  problem->alpha = 1.0f;
  problem->beta = 0.0f;
  problem->bias = PTXGEN_BIAS_NONE;
  problem->bias_type = PTXGEN_TYPE_F32;
  problem->activation = PTXGEN_ACTIVATION_NONE;
  problem->scaling = PTXGEN_SCALING_NONE;
  problem->fast_accumulation = 0;
  problem->record_amax = 0;
  problem->grouping = PTXGEN_GROUPING_NONE;
  problem->expected_m = 0;
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenGetScalingByName(const char* name,
                                      ptxgenScaling_t* scaling) {
  if (name == nullptr || scaling == nullptr) return PTXGEN_STATUS_INVALID_VALUE;
  const absl::StatusOr<ptxgen::gen::GemmScaling> parsed =
      ptxgen::gen::ParseScaling(name);
  if (!parsed.ok()) return PTXGEN_STATUS_INVALID_VALUE;
  *scaling = ptxgen::capi::ScalingOf(*parsed);
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenTargetH200(ptxgenTarget_t* target) {
  if (target == nullptr) return PTXGEN_STATUS_INVALID_VALUE;
  const ptxgen::gemm::GemmTarget h200 = ptxgen::gemm::GemmTarget::H200();
  target->sm_count = h200.sm_count;
  target->max_shared_bytes_per_block_optin =
      h200.max_shared_bytes_per_block_optin;
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenGemmGetSpans(ptxgenHandle_t handle,
                                  const ptxgenGemmProblem_t* problem,
                                  ptxgenGemmSpans_t* spans) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  constexpr char kFunction[] = "ptxgenGemmGetSpans";
  return Guarded(handle, kFunction, [&]() -> ptxgenStatus_t {
    if (spans == nullptr) return FailNull(handle, kFunction, "spans");
    ptxgenStatus_t refused = PTXGEN_STATUS_SUCCESS;
    const std::optional<ptxgen::gemm::GemmProblem> valid =
        ptxgen::capi::ReadProblem(handle, kFunction, problem, refused);
    if (!valid) return refused;
    const absl::StatusOr<ptxgen::gemm::GemmSpans> stored =
        ptxgen::gemm::StoredSpans(*valid);
    if (!stored.ok()) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, kFunction,
                  stored.status().message());
    }
    *spans = {stored->a,    stored->b,       stored->c,      stored->d,
              stored->bias, stored->scale_a, stored->scale_b};
    return Succeed(handle);
  });
}

ptxgenStatus_t ptxgenPlanGemm(ptxgenHandle_t handle,
                              const ptxgenGemmProblem_t* problem,
                              const ptxgenTarget_t* target,
                              ptxgenPlan_t* plan) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  return ptxgen::capi::MakePlan(handle, "ptxgenPlanGemm",
                                ptxgen::gemm::kGemmFamily, problem, target,
                                plan, ptxgen::capi::ReadProblem,
                                [](const ptxgen::gemm::GemmProblem& valid,
                                   const ptxgen::gemm::GemmTarget& on) {
                                  return ptxgen::gemm::PlanGemm(valid, on);
                                });
}

ptxgenStatus_t ptxgenPlanAttention(ptxgenHandle_t handle,
                                   const ptxgenAttentionProblem_t* problem,
                                   const ptxgenTarget_t* target,
                                   ptxgenPlan_t* plan) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  return ptxgen::capi::MakePlan(
      handle, "ptxgenPlanAttention", ptxgen::attention::kAttentionFamily,
      problem, target, plan, ptxgen::capi::ReadAttentionProblem,
      [](const ptxgen::attention::AttentionProblem& valid,
         const ptxgen::attention::AttentionTarget& on) {
        return ptxgen::attention::PlanAttention(valid, on);
      });
}

ptxgenStatus_t ptxgenPlanGetKernelInfo(ptxgenPlan_t plan,
                                       ptxgenKernelInfo_t* info) {
  if (!IsLive(plan, Magic::kPlan) || info == nullptr) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  if (const auto* planned =
          std::get_if<ptxgen::attention::AttentionPlan>(&plan->plan)) {
    *info = ptxgen::capi::InfoOf(planned->generated, *planned->compiled,
                                 plan->names);
    info->grid_x = planned->grid.ctas;
    info->grid_y = info->grid_z = 1;
    info->cluster_x = 1;
    return PTXGEN_STATUS_SUCCESS;
  }
  const auto& planned = std::get<ptxgen::gemm::GemmPlan>(plan->plan);
  *info =
      ptxgen::capi::InfoOf(planned.generated, *planned.compiled, plan->names);
  info->grid_x = planned.grid.x;
  info->grid_y = planned.grid.y;
  info->grid_z = planned.grid.z;
  info->cluster_x = planned.grid.cluster_x;
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenPlanDestroy(ptxgenPlan_t plan) {
  if (plan == nullptr) return PTXGEN_STATUS_SUCCESS;
  if (!IsLive(plan, Magic::kPlan)) return PTXGEN_STATUS_INVALID_VALUE;
  ptxgen::capi::Destroy(plan);
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenGemmPrepare(ptxgenHandle_t handle,
                                 const ptxgenGemmProblem_t* problem,
                                 ptxgenGemm_t* gemm) {
  return ptxgen::capi::Prepare(handle, "ptxgenGemmPrepare", problem,
                               PTXGEN_WORKSPACE_OWNED, gemm);
}

ptxgenStatus_t ptxgenGemmPrepareWithWorkspaceMode(
    ptxgenHandle_t handle, const ptxgenGemmProblem_t* problem,
    ptxgenWorkspaceMode_t mode, ptxgenGemm_t* gemm) {
  return ptxgen::capi::Prepare(handle, "ptxgenGemmPrepareWithWorkspaceMode",
                               problem, mode, gemm);
}

ptxgenStatus_t ptxgenGemmGetKernelInfo(ptxgenGemm_t gemm,
                                       ptxgenKernelInfo_t* info) {
  if (!IsLive(gemm, Magic::kGemm) || info == nullptr) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  // The grid stays 0: a Gemm keeps the one it re-planned with the driver's
  // answer to itself.
  *info = ptxgen::capi::InfoOf(gemm->gemm.generated(), gemm->gemm.compiled(),
                               gemm->names);
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenGemmRun(ptxgenHandle_t handle, ptxgenGemm_t gemm,
                             const void* a, const void* b, const void* c,
                             void* d, const void* bias, ptxgenStream_t stream) {
  ptxgenGemmOperands_t operands{};
  operands.a = a;
  operands.b = b;
  operands.c = c;
  operands.d = d;
  operands.bias = bias;
  return ptxgen::capi::Run(handle, "ptxgenGemmRun", gemm, &operands,
                           std::nullopt, stream);
}

ptxgenStatus_t ptxgenGemmRunOperands(ptxgenHandle_t handle, ptxgenGemm_t gemm,
                                     const ptxgenGemmOperands_t* operands,
                                     ptxgenStream_t stream) {
  return ptxgen::capi::Run(handle, "ptxgenGemmRunOperands", gemm, operands,
                           std::nullopt, stream);
}

ptxgenStatus_t ptxgenGemmGetWorkspaceSize(ptxgenGemm_t gemm, size_t* bytes) {
  if (!IsLive(gemm, Magic::kGemm) || bytes == nullptr) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  *bytes = static_cast<size_t>(gemm->gemm.workspace_bytes());
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenGemmRunWithWorkspace(ptxgenHandle_t handle,
                                          ptxgenGemm_t gemm,
                                          const ptxgenGemmOperands_t* operands,
                                          void* workspace,
                                          size_t workspace_bytes,
                                          ptxgenStream_t stream) {
  return ptxgen::capi::Run(
      handle, "ptxgenGemmRunWithWorkspace", gemm, operands,
      ptxgen::capi::WorkspaceOf(workspace, workspace_bytes, false), stream);
}

ptxgenStatus_t ptxgenGemmRunWithZeroedWorkspace(
    ptxgenHandle_t handle, ptxgenGemm_t gemm,
    const ptxgenGemmOperands_t* operands, void* workspace,
    size_t workspace_bytes, ptxgenStream_t stream) {
  return ptxgen::capi::Run(
      handle, "ptxgenGemmRunWithZeroedWorkspace", gemm, operands,
      ptxgen::capi::WorkspaceOf(workspace, workspace_bytes, true), stream);
}

ptxgenStatus_t ptxgenStreamGetCaptureId(ptxgenHandle_t handle,
                                        ptxgenStream_t stream,
                                        unsigned long long* id) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  constexpr char kFunction[] = "ptxgenStreamGetCaptureId";
  return Guarded(handle, kFunction, [&]() -> ptxgenStatus_t {
    if (id == nullptr) return FailNull(handle, kFunction, "id");
    // No driver is no device, as Prepare says it.
    if (absl::StatusOr<const ptxgen::runtime::Driver*> driver =
            ptxgen::runtime::Driver::Get();
        !driver.ok()) {
      return Fail(handle, PTXGEN_STATUS_NO_DEVICE, kFunction,
                  driver.status().message());
    }
    const absl::StatusOr<uint64_t> capture =
        ptxgen::runtime::StreamCaptureId(stream);
    if (!capture.ok()) {
      return FailWith(handle, kFunction, capture.status(), Step::kRun);
    }
    *id = *capture;
    return Succeed(handle);
  });
}

ptxgenStatus_t ptxgenGemmDestroy(ptxgenGemm_t gemm) {
  if (gemm == nullptr) return PTXGEN_STATUS_SUCCESS;
  if (!IsLive(gemm, Magic::kGemm)) return PTXGEN_STATUS_INVALID_VALUE;
  ptxgen::capi::Destroy(gemm);
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenAttentionProblemInit(ptxgenAttentionProblem_t* problem,
                                          int64_t batch, int64_t heads_q,
                                          int64_t heads_kv, int64_t seq_q,
                                          int64_t seq_k, int64_t head_dim,
                                          ptxgenDataType_t type) {
  if (problem == nullptr ||
      !ptxgen::capi::CheckAttentionInit(batch, heads_q, heads_kv, seq_q, seq_k,
                                        head_dim, type)
           .ok()) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  *problem = ptxgenAttentionProblem_t{};
  problem->batch = batch;
  problem->heads_q = heads_q;
  problem->heads_kv = heads_kv;
  problem->seq_q = seq_q;
  problem->seq_k = seq_k;
  problem->head_dim = head_dim;
  problem->element_type = type;
  problem->causal = 0;
  problem->scale = 0.0f;
  problem->layout = PTXGEN_ATTENTION_LAYOUT_BSHD;
  problem->variable_lengths = 0;
  problem->total_q = 0;
  problem->total_k = 0;
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenAttentionGetSpans(ptxgenHandle_t handle,
                                       const ptxgenAttentionProblem_t* problem,
                                       ptxgenAttentionSpans_t* spans) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  constexpr char kFunction[] = "ptxgenAttentionGetSpans";
  return Guarded(handle, kFunction, [&]() -> ptxgenStatus_t {
    if (spans == nullptr) return FailNull(handle, kFunction, "spans");
    ptxgenStatus_t refused = PTXGEN_STATUS_SUCCESS;
    const std::optional<ptxgen::attention::AttentionProblem> valid =
        ptxgen::capi::ReadAttentionProblem(handle, kFunction, problem, refused);
    if (!valid) return refused;
    const absl::StatusOr<ptxgen::attention::AttentionSpans> stored =
        ptxgen::attention::StoredSpans(*valid);
    if (!stored.ok()) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, kFunction,
                  stored.status().message());
    }
    *spans = {stored->q, stored->k, stored->v, stored->o, stored->lse};
    return Succeed(handle);
  });
}

ptxgenStatus_t ptxgenAttentionPrepare(ptxgenHandle_t handle,
                                      const ptxgenAttentionProblem_t* problem,
                                      ptxgenAttention_t* attention) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  constexpr char kFunction[] = "ptxgenAttentionPrepare";
  return Guarded(handle, kFunction, [&]() -> ptxgenStatus_t {
    if (attention == nullptr) return FailNull(handle, kFunction, "attention");
    *attention = nullptr;
    ptxgenStatus_t refused = PTXGEN_STATUS_SUCCESS;
    const std::optional<ptxgen::attention::AttentionProblem> valid =
        ptxgen::capi::ReadAttentionProblem(handle, kFunction, problem, refused);
    if (!valid) return refused;
    if (ptxgenStatus_t device = ptxgen::capi::CheckDevice(handle, kFunction);
        device != PTXGEN_STATUS_SUCCESS) {
      return device;
    }
    absl::StatusOr<ptxgen::attention::Attention> prepared =
        ptxgen::attention::Attention::Prepare(*valid);
    if (!prepared.ok()) {
      return FailWith(handle, kFunction, prepared.status(), Step::kPrepare);
    }
    const ptxgen::capi::KernelNames names =
        ptxgen::capi::NamesOf(prepared->generated());
    *attention = new ptxgenAttentionImpl(*std::move(prepared), names);
    return Succeed(handle);
  });
}

ptxgenStatus_t ptxgenAttentionGetKernelInfo(ptxgenAttention_t attention,
                                            ptxgenKernelInfo_t* info) {
  if (!IsLive(attention, Magic::kAttention) || info == nullptr) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  // The grid stays 0, as a Gemm's: the Attention keeps the one it planned.
  *info =
      ptxgen::capi::InfoOf(attention->attention.generated(),
                           attention->attention.compiled(), attention->names);
  return PTXGEN_STATUS_SUCCESS;
}

ptxgenStatus_t ptxgenAttentionRun(ptxgenHandle_t handle,
                                  ptxgenAttention_t attention, const void* q,
                                  const void* k, const void* v, void* o,
                                  float* lse, const int* cu_seqlens_q,
                                  const int* cu_seqlens_k,
                                  ptxgenStream_t stream) {
  if (!IsLive(handle, Magic::kHandle)) return PTXGEN_STATUS_INVALID_VALUE;
  constexpr char kFunction[] = "ptxgenAttentionRun";
  return Guarded(handle, kFunction, [&]() -> ptxgenStatus_t {
    if (attention == nullptr) return FailNull(handle, kFunction, "attention");
    if (!IsLive(attention, Magic::kAttention)) {
      return Fail(handle, PTXGEN_STATUS_INVALID_VALUE, kFunction,
                  absl::StrCat("attention", ptxgen::capi::kNotLive));
    }
    ptxgen::attention::AttentionOperands operands;
    operands.q = ptxgen::capi::Address(q);
    operands.k = ptxgen::capi::Address(k);
    operands.v = ptxgen::capi::Address(v);
    operands.o = ptxgen::capi::Address(o);
    operands.lse = ptxgen::capi::Address(lse);
    operands.cu_seqlens_q = ptxgen::capi::Address(cu_seqlens_q);
    operands.cu_seqlens_k = ptxgen::capi::Address(cu_seqlens_k);
    const absl::Status ran = attention->attention.Run(operands, stream);
    if (!ran.ok()) return FailWith(handle, kFunction, ran, Step::kRun);
    return Succeed(handle);
  });
}

ptxgenStatus_t ptxgenAttentionDestroy(ptxgenAttention_t attention) {
  if (attention == nullptr) return PTXGEN_STATUS_SUCCESS;
  if (!IsLive(attention, Magic::kAttention)) {
    return PTXGEN_STATUS_INVALID_VALUE;
  }
  ptxgen::capi::Destroy(attention);
  return PTXGEN_STATUS_SUCCESS;
}

}  // extern "C"
