// Kernel skeletons: slots filled exactly, and few of them, since a feature a
// plan turns on or off is `if constexpr` on a planned constant in the
// template's own text rather than C++ passed in through a slot.
#include "ptxgen/gen/templates.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace ptxgen::gen {
namespace {

TEST(TemplatesTest, FillsEverySlotAndRefusesADisagreement) {
  // An initializer such as {{a, b}} is no slot.
  EXPECT_EQ(*FillTemplate("t.cu", "a {{X}} b {{a, b}}", {{"X", "x"}}),
            "a x b {{a, b}}");
  EXPECT_EQ(
      FillTemplate("t.cu", "{{X}} {{Y}}", {{"X", "x"}}).status().message(),
      "template t.cu: slot {{Y}} has no value");
  EXPECT_FALSE(FillTemplate("t.cu", "{{X}}", {{"X", "x"}, {"Z", "z"}}).ok());
}

// Slot names across every embedded template: #35 brought them from 92 to
// 40 (what remains depends on the form, the layout or a kernel's types).
TEST(TemplatesTest, GemmTemplatesKeepAtMostFortyDistinctSlots) {
  std::set<std::string> slots;
  for (const std::string& name : EmbeddedTemplateNames()) {
    const absl::string_view text = *EmbeddedTemplate(name);
    for (size_t open = text.find("{{"); open != absl::string_view::npos;
         open = text.find("{{", open + 2)) {
      const size_t close = text.find("}}", open);
      if (close == absl::string_view::npos) break;
      const std::string slot(text.substr(open + 2, close - open - 2));
      if (!slot.empty() &&
          slot.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
              std::string::npos) {
        slots.insert(slot);
      }
    }
  }
  EXPECT_GE(slots.size(), 10u);  // the scan finds the slots there are
  EXPECT_LE(slots.size(), 40u);
}

}  // namespace
}  // namespace ptxgen::gen
