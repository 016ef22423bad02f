#ifndef PTXGEN_BASE_PRINTABLE_H_
#define PTXGEN_BASE_PRINTABLE_H_

// Text from outside the program (compiler logs, cache entries, file names,
// the command line) made safe to print on a terminal. The bottom layer:
// every layer may use it.

#include <string>

#include "absl/strings/string_view.h"

namespace ptxgen::base {

// `text` with each control byte (below 0x20, and 0x7f) written as \xNN, so
// that no escape sequence reaches the terminal. Newlines and tabs stay: they
// only lay the text out. Carriage returns do not, as they let a line hide
// what came before it. Well-formed UTF-8 is kept but for the C1 controls
// (U+0080..U+009F); any other byte of 0x80 and above is escaped too, as a
// lone 0x9b is a control sequence introducer on an 8-bit terminal.
std::string Printable(absl::string_view text);

// A value quoted inside a message (an environment variable's, a path), with
// every control byte escaped, newlines and tabs too: a value must stay on
// its line, or it could forge the lines that follow ("\nptxgen: error:").
std::string PrintableValue(absl::string_view value);

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_PRINTABLE_H_
