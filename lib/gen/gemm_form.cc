// What a GEMM kernel computes: operand layouts, types and epilogue ops.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

bool IsOutputType(ptx::ScalarType type) {
  return type == ptx::ScalarType::kF16 || type == ptx::ScalarType::kBF16 ||
         type == ptx::ScalarType::kF32;
}

absl::string_view MajorLetter(ptx::MajorOrder major) {
  return major == ptx::MajorOrder::kK ? "k" : "m";
}

}  // namespace

bool GemmForm::operator==(const GemmForm& other) const {
  return FormName(*this) == FormName(other);
}

std::string FormName(const GemmForm& form) {
  std::string name = absl::StrCat(ptx::PtxName(form.element), ".",
                                  MajorLetter(form.a_major),
                                  MajorLetter(form.b_major), "->",
                                  ptx::PtxName(form.output));
  if (form.reads_c) absl::StrAppend(&name, "+c");
  if (form.bias != BiasAlong::kNone) {
    absl::StrAppend(&name, form.bias == BiasAlong::kM ? "+bias_m." : "+bias_n.",
                    ptx::PtxName(form.bias_type));
  }
  if (form.activation != Activation::kNone) {
    absl::StrAppend(&name, "+", ActivationName(form.activation));
  }
  if (form.batched) absl::StrAppend(&name, "+batched");
  return name;
}

GemmForm PlainForm(ptx::ScalarType element) {
  GemmForm form;
  form.element = element;
  form.output = element;
  return form;
}

bool HasEpilogueOps(const GemmForm& form) {
  return form.reads_c || form.bias != BiasAlong::kNone ||
         form.activation != Activation::kNone;
}

bool TmaStoreComputes(const GemmForm& form) {
  return !HasEpilogueOps(form) && form.output != ptx::ScalarType::kF32;
}

absl::Status ValidateGemmForm(const GemmForm& form) {
  if (absl::Status element = CheckGemmElement(form.element); !element.ok()) {
    return element;
  }
  auto refuse = [&](absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM: ", rule));
  };
  if (!IsOutputType(form.output)) {
    return refuse(absl::StrCat("the output type must be f16, bf16 or f32, not ",
                               ptx::PtxName(form.output)));
  }
  for (ptx::MajorOrder major : {form.a_major, form.b_major}) {
    if (major != ptx::MajorOrder::kK && major != ptx::MajorOrder::kMN) {
      return refuse("a major order must be K or MN");
    }
  }
  // wgmma reads MN-major tiles (transposes) of 16-bit types only.
  if ((form.a_major == ptx::MajorOrder::kMN || form.b_major == ptx::MajorOrder::kMN) &&
      !ptx::WgmmaSupportsTranspose(form.element)) {
    return refuse(absl::StrCat("MN-major operands need f16 or bf16 inputs "
                               "(wgmma transposes no other type), not ",
                               ptx::PtxName(form.element)));
  }
  if (form.bias != BiasAlong::kNone && form.bias != BiasAlong::kM &&
      form.bias != BiasAlong::kN) {
    return refuse("the bias runs along m or n, or there is none");
  }
  if (form.bias != BiasAlong::kNone && !IsOutputType(form.bias_type)) {
    return refuse(absl::StrCat("the bias must be f16, bf16 or f32, not ",
                               ptx::PtxName(form.bias_type)));
  }
  if (ActivationName(form.activation) == "unknown") {
    return refuse("unknown activation");
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::gen
