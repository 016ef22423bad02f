// The epilogue's per-value transform: what each f32 accumulator becomes
// before a store strategy rounds and stores it. One table row per
// activation; an op is a line of epilogue_value.
#include <array>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/gen/common/device_ops.h"
#include "lib/gen/gemm/gemm_internal.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/special_function.h"

namespace ptxgen::gen {
namespace {

struct ActivationSpec {
  Activation activation;
  absl::string_view name;
  absl::string_view expression;  // of the f32 value `v`
};

constexpr std::array<ActivationSpec, 5> kActivationSpecs = {{
    {Activation::kNone, "none", "v"},
    {Activation::kRelu, "relu", "fmaxf(v, 0.0f)"},
    // erf form: 0.5 v (1 + erf(v / sqrt 2)).
    {Activation::kGelu, "gelu",
     "0.5f * v * (1.0f + erff(v * 0.7071067811865476f))"},
    // tanh form (cuBLASLt's GELU): GeluTanh's statements.
    {Activation::kGeluTanh, "gelu_tanh", ""},
    {Activation::kSilu, "silu", "v / (1.0f + __expf(-v))"},
}};

const ActivationSpec* FindActivation(Activation activation) {
  for (const ActivationSpec& spec : kActivationSpecs) {
    if (spec.activation == activation) return &spec;
  }
  return nullptr;
}

std::string CType(ptx::ScalarType type) {
  return type == ptx::ScalarType::kF32 ? "float" : "unsigned short";
}

// A statement reading element `index` of `pointer` (of `type`) as the f32
// `variable`; 16-bit types are widened exactly.
std::string ReadAsFloat(DeviceOps& ops, ptx::ScalarType type,
                        const std::string& pointer, const std::string& index,
                        const std::string& variable) {
  const std::string element =
      absl::StrCat("((const ", CType(type), "*)", pointer, ")[", index, "]");
  if (type == ptx::ScalarType::kF32) {
    return absl::StrCat("  const float ", variable, " = ", element, ";\n");
  }
  const std::string bits = variable + "_bits";
  return absl::StrCat("  const unsigned short ", bits, " = ", element,
                      ";\n  float ", variable, ";\n  ",
                      ops.Call(absl::StrCat("cvt_widen_", ptx::PtxName(type)),
                               ptx::CvtWidenToF32(type),
                               {{"result", variable}, {"value", bits}}),
                      "\n");
}

// GELU's tanh form, 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), with
// the special-function unit's tanh where D's type rounds away its error
// (2^-11, ptx::TanhApproxF32): tanhf's few dozen instructions a value cost
// bias + GELU 5-8% over the plain kernel at 4096^3-8192^3 in bf16 (H200,
// 2026-12-04). An f32 D keeps tanhf.
std::string GeluTanh(const GemmForm& form, DeviceOps& ops) {
  constexpr char kArgument[] =
      "0.7978845608028654f * (v + 0.044715f * v * v * v)";
  const std::string tanh =
      ptx::SizeInBytes(form.output) < 4
          ? ops.Call("tanh_approx_f32", ptx::TanhApproxF32(),
                     {{"result", "tanh_of_v"}, {"value", kArgument}})
          : absl::StrCat("tanh_of_v = tanhf(", kArgument, ");");
  return absl::StrCat("  float tanh_of_v;\n  ", tanh,
                      "\n  v = 0.5f * v * (1.0f + tanh_of_v);\n");
}

}  // namespace

absl::string_view ActivationName(Activation activation) {
  const ActivationSpec* spec = FindActivation(activation);
  return spec != nullptr ? spec->name : "unknown";
}

absl::StatusOr<Activation> ParseActivation(absl::string_view name) {
  for (const ActivationSpec& spec : kActivationSpecs) {
    if (spec.name == name) return spec.activation;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "activation '", name, "': expected none, relu, gelu, gelu_tanh or silu"));
}

std::string EpilogueValueFunction(const GemmForm& form, DeviceOps& ops) {
  std::string body = "  float v = e.alpha * value;\n";
  if (form.reads_c) {
    absl::StrAppend(
        &body,
        ReadAsFloat(ops, form.output, "e.c",
                    form.d_transposed
                        ? "batch * e.stride_c + column * e.ldc + row"
                        : "batch * e.stride_c + row * e.ldc + column",
                    "c"),
        "  v += e.beta * c;\n");
  }
  if (form.bias != BiasAlong::kNone) {
    absl::StrAppend(
        &body,
        ReadAsFloat(ops, form.bias_type, "e.bias",
                    absl::StrCat("batch * e.stride_bias + ",
                                 form.bias == BiasAlong::kM ? "row" : "column"),
                    "bias"),
        "  v += bias;\n");
  }
  if (form.activation == Activation::kGeluTanh) {
    absl::StrAppend(&body, GeluTanh(form, ops));
  } else if (form.activation != Activation::kNone) {
    absl::StrAppend(
        &body, "  v = ", FindActivation(form.activation)->expression, ";\n");
  }
  return absl::StrCat(
      "// The epilogue's transform of one result at (row, column) of batch\n"
      "// `batch`: ",
      FormName(form),
      ".\n"
      "__device__ __forceinline__ float epilogue_value(const EpilogueArgs& e,\n"
      "    float value, int batch, int row, int column) {\n",
      body, "  return v;\n}\n");
}

}  // namespace ptxgen::gen
