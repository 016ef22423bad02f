// Text from outside reaches a terminal as text: control bytes become \xNN,
// layout and everything printable stay as they are.
#include "ptxgen/base/printable.h"

#include <string>

#include "gtest/gtest.h"

namespace ptxgen::base {
namespace {

TEST(Printable, KeepsPrintableTextNewlinesAndTabs) {
  EXPECT_EQ(Printable(""), "");
  EXPECT_EQ(Printable("ptxas warning : 'k' uses 32 registers\n\tnext\n"),
            "ptxas warning : 'k' uses 32 registers\n\tnext\n");
  EXPECT_EQ(Printable(" ~\\\"'"), " ~\\\"'");
}

TEST(Printable, EscapesAnsiSequences) {
  EXPECT_EQ(Printable("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(Printable("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
}

TEST(Printable, EscapesEveryOtherControlByte) {
  EXPECT_EQ(Printable(std::string("\0\x01\x08\x0b\x0c\x1f", 6)),
            "\\x00\\x01\\x08\\x0b\\x0c\\x1f");
  EXPECT_EQ(Printable("\x7f"), "\\x7f");
}

// A carriage return would let a line overwrite what it began with.
TEST(Printable, EscapesCarriageReturns) {
  EXPECT_EQ(Printable("error\rall fine"), "error\\x0dall fine");
}

TEST(Printable, KeepsUtf8) {
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0"),
            "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80 \xc2\xa0");
  EXPECT_EQ(Printable("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");  // U+10FFFF
}

// A lone 0x9b is CSI on an 8-bit terminal, and U+009B (C2 9B) on some
// UTF-8 ones: bytes outside well-formed UTF-8, and the C1 controls, are
// escaped.
TEST(Printable, EscapesBytesOutsideUtf8AndC1Controls) {
  EXPECT_EQ(Printable("\x9b"
                      "31mred"),
            "\\x9b31mred");
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");
  EXPECT_EQ(Printable("\xff\x80"), "\\xff\\x80");
  EXPECT_EQ(Printable("caf\xc3"), "caf\\xc3");              // cut short
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"),
            "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(PrintableValue("\xe2\x86"), "\\xe2\\x86");
}

// Escaped text has nothing left to escape: printing it twice is harmless.
TEST(Printable, IsIdempotent) {
  const std::string once = Printable("a\x1b[1m\r\x7f\n\x9b\xc2\x85");
  EXPECT_EQ(Printable(once), once);
}

// A value quoted in a message stays on its line: a newline in it cannot
// start a line that looks like ptxgen's own.
TEST(PrintableValue, EscapesNewlinesAndTabsToo) {
  EXPECT_EQ(PrintableValue("info\nptxgen: error: forged\tx"),
            "info\\x0aptxgen: error: forged\\x09x");
  EXPECT_EQ(PrintableValue("/opt/caf\xc3\xa9 \x1b[1m"),
            "/opt/caf\xc3\xa9 \\x1b[1m");
  EXPECT_EQ(PrintableValue(PrintableValue("a\n")), "a\\x0a");
}

}  // namespace
}  // namespace ptxgen::base
