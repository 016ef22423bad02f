#ifndef PTXGEN_BASE_UTF8_H_
#define PTXGEN_BASE_UTF8_H_

// Well-formed UTF-8, as RFC 3629 has it, for the escapers of text from
// outside (Printable, the JSON views).

#include <cstddef>

#include "absl/strings/string_view.h"

namespace ptxgen::base {

// The length (2 to 4) of the well-formed UTF-8 sequence of one code point
// above U+007F at the start of `text`; 0 when none starts there (an ASCII
// byte, a stray continuation byte, a sequence cut short, an overlong form,
// a surrogate, anything past U+10FFFF).
inline size_t Utf8SequenceLength(absl::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80;  // the second byte's range
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // up to U+10FFFF
  }
  if (length == 0 || text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_UTF8_H_
