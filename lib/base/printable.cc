#include "ptxgen/base/printable.h"

#include "absl/strings/str_format.h"

namespace ptxgen::base {
namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// `text` with its control bytes as \xNN, but for newlines and tabs when
// `keep_layout`.
std::string Escaped(absl::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    const bool layout = c == '\n' || c == '\t';
    if (IsControl(byte) && !(keep_layout && layout)) {
      absl::StrAppendFormat(&out, "\\x%02x", byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string Printable(absl::string_view text) {
  return Escaped(text, /*keep_layout=*/true);
}

std::string PrintableValue(absl::string_view value) {
  return Escaped(value, /*keep_layout=*/false);
}

}  // namespace ptxgen::base
