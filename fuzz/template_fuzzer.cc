// Template filling (gen::FillTemplate, the {{SLOT}} filler the kernel
// generators use on ptx_templates/). Input (text): value lines "SLOT=value"
// up to a line "--", then the template text. With no "--" line the whole
// input is a template, filled with no values.
// Invariants: an accepted fill leaves no slot it was given a value for;
// filling every slot with its own "{{SLOT}}" gives the template back (so
// the filler replaces exactly its slots and copies everything else);
// a template without slots fills with no values into itself; every
// embedded template fills with its own slots.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/gen/templates.h"

namespace {

namespace gen = ptxgen::gen;

bool IsSlotCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The slot names FillTemplate's documented rule finds: "{{", one or more
// slot characters, "}}", scanning on after each slot.
std::set<std::string> Slots(absl::string_view text) {
  std::set<std::string> slots;
  size_t position = 0;
  while ((position = text.find("{{", position)) != absl::string_view::npos) {
    size_t end = position + 2;
    while (end < text.size() && IsSlotCharacter(text[end])) ++end;
    if (end > position + 2 && text.substr(end, 2) == "}}") {
      slots.emplace(text.substr(position + 2, end - position - 2));
      position = end + 2;
    } else {
      position = end;
    }
  }
  return slots;
}

gen::TemplateValues Identity(const std::set<std::string>& slots) {
  gen::TemplateValues values;
  for (const std::string& slot : slots)
    values[slot] = absl::StrCat("{{", slot, "}}");
  return values;
}

void CheckFill(absl::string_view text, const gen::TemplateValues& values) {
  const absl::StatusOr<std::string> filled =
      gen::FillTemplate("fuzz", text, values);
  const absl::StatusOr<std::string> identity =
      gen::FillTemplate("fuzz", text, Identity(Slots(text)));
  FUZZ_CHECK(identity.ok() && *identity == text,
             "filling every slot with itself changed the template: ",
             identity.ok() ? "" : identity.status().message());
  if (values.empty()) {
    FUZZ_CHECK(filled.ok() == Slots(text).empty(), "a template ",
               Slots(text).empty() ? "without" : "with", " slots, no values: ",
               filled.ok() ? "accepted" : filled.status().message());
    if (filled.ok()) FUZZ_CHECK(*filled == text, "no values changed the text");
  }
  if (!filled.ok()) return;
  std::set<std::string> given;
  for (const auto& [slot, value] : values) given.insert(slot);
  FUZZ_CHECK(given == Slots(text), "accepted values that are not the slots");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool embedded_fill = [] {
    for (const std::string& name : gen::EmbeddedTemplateNames()) {
      const absl::StatusOr<absl::string_view> text =
          gen::EmbeddedTemplate(name);
      FUZZ_CHECK(text.ok(), "embedded template ", name, " is missing");
      CheckFill(*text, Identity(Slots(*text)));
    }
    return true;
  }();
  (void)embedded_fill;
  const absl::string_view input = ptxgen::fuzz::AsText(data, size);
  const size_t separator = input.find("\n--\n");
  if (separator == absl::string_view::npos) {
    CheckFill(input, {});
    return 0;
  }
  gen::TemplateValues values;
  for (absl::string_view line :
       absl::StrSplit(input.substr(0, separator), '\n')) {
    const std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits('=', 1));
    values[std::string(parts.first)] = std::string(parts.second);
  }
  CheckFill(input.substr(separator + 4), values);
  return 0;
}
