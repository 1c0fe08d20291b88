// Counted words and sizes in messages.
#include "util/text.h"

#include <gtest/gtest.h>

namespace nnbench::util {
namespace {

TEST(Text, CountsAgreeWithTheirNumber) {
  EXPECT_EQ(count(1, "thread"), "1 thread");
  EXPECT_EQ(count(2, "thread"), "2 threads");
  EXPECT_EQ(count(0, "iteration"), "0 iterations");
  EXPECT_EQ(plural_of("loss"), "losses");
  EXPECT_EQ(plural_of("batch"), "batches");
  EXPECT_EQ(plural_of("weight"), "weights");
}

TEST(Text, SizesInBinaryUnits) {
  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(1.5 * (1 << 30)), "1.50 GiB");
  EXPECT_EQ(bytes_text(1000.0 * (1 << 20)), "1000 MiB");
  // The message that read "28208524.274346 GiB".
  EXPECT_EQ(bytes_text(28208524.274346 * (1 << 30)), "26.9 PiB");
}

// Issue 29, item 10: another program's output shown on a terminal.
TEST(Text, PrintableShowsControlCharactersInsteadOfSendingThem) {
  // A window title (OSC ... BEL) and a colour (CSI ... m).
  EXPECT_EQ(printable("\x1b]0;PWNED\x07\x1b[31mred"),
            "\\x1b]0;PWNED\\x07\\x1b[31mred");
  // A carriage return would hide the text before it; DEL; a NUL.
  EXPECT_EQ(printable(std::string("a\rb\x7f"
                                  "c\0d",
                                  7)),
            "a\\x0db\\x7fc\\x00d");
  // Newlines and tabs stay, unless the text must be one line.
  EXPECT_EQ(printable("a\n\tb"), "a\n\tb");
  EXPECT_EQ(printable("a\n\tb", true), "a\\x0a\\x09b");
  // UTF-8 text stays: é (2 bytes), € (3), 𝜋 (4).
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x9c\x8b"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x9c\x8b");
  // The C1 control CSI (U+009B, which some terminals obey like ESC [) in
  // UTF-8 and as a single byte; a truncated sequence; an overlong '/'.
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");
  EXPECT_EQ(printable("\x9b"
                      "31m"),
            "\\x9b31m");
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");
}

}  // namespace
}  // namespace nnbench::util
