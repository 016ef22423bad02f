// The reader of ptxgen's own JSON records (base::ParseFlatJsonObject), which
// reads files that may have been edited or damaged. It never crashes.
// Invariants: parsing is deterministic; what it accepts has no value a
// writer could not have written; and any ASCII text, written as a JSON
// string by compile::JsonString (the writer of the records), reads back as
// itself.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/base/flat_json.h"
#include "ptxgen/compile/inspect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text = ptxgen::fuzz::AsText(data, size);
  const absl::StatusOr<std::map<std::string, std::string>> fields =
      ptxgen::base::ParseFlatJsonObject(text);
  const absl::StatusOr<std::map<std::string, std::string>> again =
      ptxgen::base::ParseFlatJsonObject(text);
  FUZZ_CHECK(fields.ok() == again.ok() && (!fields.ok() || *fields == *again),
             "two parses of one text differ");

  bool ascii = true;
  for (const char c : text)
    ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  const std::string written =
      absl::StrCat("{\"value\":", ptxgen::compile::JsonString(text), "}");
  const absl::StatusOr<std::map<std::string, std::string>> read =
      ptxgen::base::ParseFlatJsonObject(written);
  FUZZ_CHECK(read.ok(),
             "a written string is refused: ", read.status().message());
  if (ascii) {
    FUZZ_CHECK(read->at("value") == text,
               "an ASCII string does not read back as itself");
  }
  return 0;
}
