#include "ptxgen/gen/templates.h"

#include <set>

#include "absl/status/status.h"

namespace ptxgen::gen {
namespace {

bool IsSlotCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

absl::StatusOr<std::string> FillTemplate(absl::string_view template_name,
                                         absl::string_view text,
                                         const TemplateValues& values) {
  std::string filled;
  std::set<std::string> used;
  size_t position = 0;
  while (true) {
    const size_t open = text.find("{{", position);
    if (open == absl::string_view::npos) break;
    size_t end = open + 2;
    while (end < text.size() && IsSlotCharacter(text[end])) ++end;
    if (end == open + 2 || text.substr(end, 2) != "}}") {
      // Not a slot (e.g. an initializer "{{0}}" would need a slot name).
      absl::StrAppend(&filled, text.substr(position, end - position));
      position = end;
      continue;
    }
    const std::string slot(text.substr(open + 2, end - open - 2));
    auto it = values.find(slot);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", template_name, ": slot {{", slot, "}} has no value"));
    }
    absl::StrAppend(&filled, text.substr(position, open - position),
                    it->second);
    used.insert(slot);
    position = end + 2;
  }
  absl::StrAppend(&filled, text.substr(position));
  for (const auto& [slot, unused] : values) {
    if (used.count(slot) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "template ", template_name, ": it has no slot {{", slot, "}}"));
    }
  }
  return filled;
}

}  // namespace ptxgen::gen
