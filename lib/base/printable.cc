#include "ptxgen/base/printable.h"

#include <cstddef>

#include "absl/strings/str_format.h"
#include "ptxgen/base/utf8.h"

namespace ptxgen::base {
namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The length of the well-formed UTF-8 sequence at the start of `text`
// unless it is a C1 control (U+0080..U+009F, C2 80..C2 9F), which 8-bit
// and some UTF-8 terminals obey (U+009B is CSI); 0 otherwise.
size_t PrintableSequence(absl::string_view text) {
  const size_t length = Utf8SequenceLength(text);
  const bool c1 = length == 2 && static_cast<unsigned char>(text[0]) == 0xc2 &&
                  static_cast<unsigned char>(text[1]) < 0xa0;
  return c1 ? 0 : length;
}

// `text` with its control bytes and every byte outside well-formed UTF-8
// (or of a C1 control) as \xNN, but for newlines and tabs when
// `keep_layout`.
std::string Escaped(absl::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const size_t length = PrintableSequence(text.substr(i));
      if (length == 0) {
        absl::StrAppendFormat(&out, "\\x%02x", byte);
        ++i;
      } else {
        out.append(text.data() + i, length);
        i += length;
      }
      continue;
    }
    const bool layout = byte == '\n' || byte == '\t';
    if (IsControl(byte) && !(keep_layout && layout)) {
      absl::StrAppendFormat(&out, "\\x%02x", byte);
    } else {
      out.push_back(static_cast<char>(byte));
    }
    ++i;
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
