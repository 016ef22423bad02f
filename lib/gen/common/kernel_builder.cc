#include "lib/gen/common/kernel_builder.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ptxgen::gen {
namespace {

// Whether `source` names plan::<name> (not merely a longer name it begins).
bool ReadsConstant(absl::string_view source, const std::string& name) {
  const std::string reference = absl::StrCat("plan::", name);
  for (size_t at = source.find(reference); at != absl::string_view::npos;
       at = source.find(reference, at + 1)) {
    const size_t end = at + reference.size();
    if (end == source.size() ||
        !(absl::ascii_isalnum(source[end]) || source[end] == '_')) {
      return true;
    }
  }
  return false;
}

}  // namespace

void KernelBuilder::Check(const absl::Status& result) {
  if (status_.ok() && !result.ok()) status_ = result;
}

absl::Status KernelBuilder::status() const {
  return status_.ok() ? ops_.status() : status_;
}

std::string KernelBuilder::Fill(absl::string_view name,
                                const TemplateValues& values) {
  absl::StatusOr<absl::string_view> text = EmbeddedTemplate(name);
  if (!text.ok()) {
    Check(text.status());
    return "";
  }
  absl::StatusOr<std::string> filled = FillTemplate(name, *text, values);
  Check(filled.status());
  return filled.ok() ? *filled : "";
}

std::vector<PlannedConstant> KernelBuilder::PlaceThePlan(
    const std::vector<PlannedConstant>& planned, absl::string_view planner,
    std::string& source) {
  std::vector<PlannedConstant> read;
  std::string block =
      absl::StrCat("// The numbers the host planned (", planner,
                   "), each written once.\n", "namespace plan {\n");
  for (const PlannedConstant& constant : planned) {
    if (!ReadsConstant(source, constant.name)) continue;
    const bool array = absl::StartsWith(constant.value, "{");
    absl::StrAppend(&block, "constexpr ", constant.type, " ", constant.name,
                    array ? "[]" : "", " = ", constant.value, ";\n");
    read.push_back(constant);
  }
  absl::StrAppend(&block, "}  // namespace plan\n");
  absl::StrReplaceAll({{kPlanMarker, block}}, &source);
  return read;
}

PlannedConstant PlanInt(const std::string& name, int64_t value) {
  return {"int", name, absl::StrCat(value)};
}
PlannedConstant PlanBytes(const std::string& name, int64_t value) {
  return {"unsigned", name, absl::StrCat(value, "u")};
}
PlannedConstant PlanBool(const std::string& name, bool value) {
  return {"bool", name, value ? "true" : "false"};
}

PlannedConstant PlanIntArray(const std::string& name,
                             const std::vector<int>& values) {
  return {"int", name, absl::StrCat("{", absl::StrJoin(values, ", "), "}")};
}
PlannedConstant PlanBytesArray(const std::string& name,
                               const std::vector<uint32_t>& values) {
  return {"unsigned", name,
          absl::StrCat("{",
                       absl::StrJoin(values, ", ",
                                     [](std::string* out, uint32_t value) {
                                       absl::StrAppend(out, value, "u");
                                     }),
                       "}")};
}

std::string KernelSignature(
    absl::string_view name, int threads,
    const std::vector<KernelParameterText>& parameters) {
  std::vector<std::string> declarations;
  declarations.reserve(parameters.size());
  for (const KernelParameterText& parameter : parameters) {
    declarations.push_back(parameter.declaration);
  }
  return absl::StrCat("extern \"C\" __global__ void __launch_bounds__(",
                      threads, ", 1)\n", name, "(",
                      absl::StrJoin(declarations, ",\n    "), ")");
}

std::string ParameterDocs(absl::string_view table,
                          const std::vector<KernelParameterText>& parameters) {
  std::string text = absl::StrCat("// Parameters (", table, ", in order):\n");
  for (const KernelParameterText& parameter : parameters) {
    absl::StrAppend(&text, "//   ", parameter.declaration, ": ",
                    parameter.meaning, "\n");
  }
  return text;
}

}  // namespace ptxgen::gen
