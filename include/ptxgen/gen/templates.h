#ifndef PTXGEN_GEN_TEMPLATES_H_
#define PTXGEN_GEN_TEMPLATES_H_

// Kernel skeletons from ptx_templates/, embedded at build time, and the
// filling of their {{SLOT}}s.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::gen {

// The text of an embedded template ("gemm_v1.cu"), or NotFound.
absl::StatusOr<absl::string_view> EmbeddedTemplate(absl::string_view name);
std::vector<std::string> EmbeddedTemplateNames();

// Slot name (without braces) -> text.
using TemplateValues = std::map<std::string, std::string>;

// Replaces every {{SLOT}} (upper-case letters, digits, '_'). A slot without a
// value, or a value without a slot, is an error: both mean generator and
// template disagree.
absl::StatusOr<std::string> FillTemplate(absl::string_view template_name,
                                         absl::string_view text,
                                         const TemplateValues& values);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_TEMPLATES_H_
