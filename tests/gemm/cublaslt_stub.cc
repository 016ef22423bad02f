// A stand-in for libcublasLt with the entry points ptxgen resolves, which
// records what it is given so that tests can read back the cuBLASLt call
// ptxgen made, without a GPU.
//
// cublasLtCreate returns CREATE_STATUS, set by the BUILD target: 0 succeeds
// with a dummy handle; 3 (CUBLAS_STATUS_ALLOC_FAILED) fails as real cuBLASLt
// may without a usable GPU. Descriptors, layouts and preferences are real
// allocations, counted while alive. Control and read-back, by dlsym:
//   ptxgen_lt_stub_reset(fail_at, algorithms, workspace): forget everything;
//     call number `fail_at` (1-based, counting every create, set-attribute,
//     heuristic and matmul call; 0: none) returns CUBLAS_STATUS_INVALID_VALUE;
//     the heuristic finds `algorithms` algorithms needing `workspace` bytes.
//   ptxgen_lt_stub_live(): descriptors, layouts and preferences alive.
//   ptxgen_lt_stub_calls(): calls counted since the reset.
//   ptxgen_lt_stub_value(key): a recorded value, NaN if none. At the
//     heuristic: "pref.<attribute number>" and "heuristic.desc.<attribute
//     number>" (the descriptor as the heuristic saw it); at each matmul:
//     "desc.<attribute number>", "<A|B|C|D>.type|rows|cols|ld" and
//     "<A|B|C|D>.<attribute number>" of the layouts passed as A, B, C, D,
//     and "matmul.A|B|C|D|
//     alpha|beta|workspace|workspace_bytes|stream|matmuls|algo" (alpha and
//     beta read as the descriptor's scale type says: int32 for CUDA_R_32I,
//     float otherwise). Attributes of 1, 4 or 8 bytes are recorded as the
//     signed integers they hold (pointers as their addresses).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "cublasLt.h"

namespace {

// What an attribute-carrying object was given.
struct Object {
  std::map<std::string, double> values;
};

int live = 0;
int calls = 0;
int fail_at = 0;
int algorithms = 1;
size_t workspace = 0;
std::map<std::string, double>& Recorded() {
  static auto* recorded = new std::map<std::string, double>;
  return *recorded;
}

// Counts a call; true when this one is to fail.
bool Fails() { return ++calls == fail_at; }

template <typename Handle>
Handle New() {
  ++live;
  return reinterpret_cast<Handle>(new Object);
}

template <typename Handle>
void Delete(Handle handle) {
  --live;
  delete reinterpret_cast<Object*>(handle);
}

template <typename Handle>
cublasStatus_t Set(Handle handle, int attribute, const void* buffer,
                   size_t size) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  if (buffer == nullptr || size > 8) return CUBLAS_STATUS_INVALID_VALUE;
  double value;
  if (size == 1) {  // int8_t (FAST_ACCUM)
    int8_t byte;
    std::memcpy(&byte, buffer, 1);
    value = byte;
  } else if (size == 4) {
    int32_t word;
    std::memcpy(&word, buffer, 4);
    value = word;
  } else if (size == 8) {
    int64_t word;
    std::memcpy(&word, buffer, 8);
    value = static_cast<double>(word);
  } else {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  reinterpret_cast<Object*>(handle)->values[std::to_string(attribute)] = value;
  return CUBLAS_STATUS_SUCCESS;
}

void Copy(const void* object, const std::string& prefix) {
  for (const auto& [key, value] :
       reinterpret_cast<const Object*>(object)->values) {
    Recorded()[prefix + key] = value;
  }
}

double Address(const void* pointer) {
  return static_cast<double>(reinterpret_cast<uintptr_t>(pointer));
}

}  // namespace

extern "C" {

void ptxgen_lt_stub_reset(int fail_at_call, int algorithm_count,
                          size_t workspace_bytes) {
  calls = 0;
  fail_at = fail_at_call;
  algorithms = algorithm_count;
  workspace = workspace_bytes;
  Recorded().clear();
}
int ptxgen_lt_stub_live() { return live; }
int ptxgen_lt_stub_calls() { return calls; }
double ptxgen_lt_stub_value(const char* key) {
  const auto found = Recorded().find(key);
  return found == Recorded().end() ? NAN : found->second;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  static int dummy;
  if (CREATE_STATUS == CUBLAS_STATUS_SUCCESS) {
    *handle = reinterpret_cast<cublasLtHandle_t>(&dummy);
  }
  return static_cast<cublasStatus_t>(CREATE_STATUS);
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = New<cublasLtMatmulDesc_t>();
  reinterpret_cast<Object*>(*desc)->values["compute"] = compute;
  reinterpret_cast<Object*>(*desc)->values["scale"] = scale;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  Delete(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(
    cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
    const void* buffer, size_t size) {
  return Set(desc, attribute, buffer, size);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = New<cublasLtMatrixLayout_t>();
  auto& values = reinterpret_cast<Object*>(*layout)->values;
  values["type"] = type;
  values["rows"] = static_cast<double>(rows);
  values["cols"] = static_cast<double>(cols);
  values["ld"] = static_cast<double>(ld);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  Delete(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
    const void* buffer, size_t size) {
  return Set(layout, attribute, buffer, size);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(
    cublasLtMatmulPreference_t* preference) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  *preference = New<cublasLtMatmulPreference_t>();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(
    cublasLtMatmulPreference_t preference) {
  Delete(preference);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t preference,
    cublasLtMatmulPreferenceAttributes_t attribute, const void* buffer,
    size_t size) {
  return Set(preference, attribute, buffer, size);
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t preference, int requested,
    cublasLtMatmulHeuristicResult_t results[], int* found) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  Copy(preference, "pref.");
  Copy(desc, "heuristic.desc.");
  *found = 0;
  for (int i = 0; i < requested && i < algorithms; ++i) {
    results[i] = {};
    results[i].algo.data[0] = 40 + i;  // recognizable in "matmul.algo"
    results[i].workspaceSize = workspace;
    results[i].state = CUBLAS_STATUS_SUCCESS;
    ++*found;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                              const void* alpha, const void* a,
                              cublasLtMatrixLayout_t a_layout, const void* b,
                              cublasLtMatrixLayout_t b_layout, const void* beta,
                              const void* c, cublasLtMatrixLayout_t c_layout,
                              void* d, cublasLtMatrixLayout_t d_layout,
                              const cublasLtMatmulAlgo_t* algo,
                              void* workspace_pointer, size_t workspace_bytes,
                              cudaStream_t stream) {
  if (Fails()) return CUBLAS_STATUS_INVALID_VALUE;
  Copy(desc, "desc.");
  Copy(a_layout, "A.");
  Copy(b_layout, "B.");
  Copy(c_layout, "C.");
  Copy(d_layout, "D.");
  auto& recorded = Recorded();
  recorded["matmul.A"] = Address(a);
  recorded["matmul.B"] = Address(b);
  recorded["matmul.C"] = Address(c);
  recorded["matmul.D"] = Address(d);
  // alpha and beta are of the scale type: int32 for CUDA_R_32I.
  if (reinterpret_cast<const Object*>(desc)->values.at("scale") == CUDA_R_32I) {
    recorded["matmul.alpha"] = *static_cast<const int32_t*>(alpha);
    recorded["matmul.beta"] = *static_cast<const int32_t*>(beta);
  } else {
    recorded["matmul.alpha"] = *static_cast<const float*>(alpha);
    recorded["matmul.beta"] = *static_cast<const float*>(beta);
  }
  recorded["matmul.algo"] = static_cast<double>(algo->data[0]);
  recorded["matmul.workspace"] = Address(workspace_pointer);
  recorded["matmul.workspace_bytes"] = static_cast<double>(workspace_bytes);
  recorded["matmul.stream"] = Address(stream);
  recorded["matmul.matmuls"] += 1;
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
