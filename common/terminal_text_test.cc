#include "common/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

#include "common/json_writer.h"

namespace sparkprof {
namespace {

TEST(TerminalTextTest, KeepsPrintableTextAndUnicode) {
  EXPECT_EQ(SanitizeForTerminal("stage 3: count at Q.scala:12"), "stage 3: count at Q.scala:12");
  EXPECT_EQ(SanitizeForTerminal("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80"),
            "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80");
}

TEST(TerminalTextTest, ReplacesC0C1AndBidiControls) {
  EXPECT_EQ(SanitizeForTerminal("a\x1b[2Jb\nc\td\x7f"), "a?[2Jb?c?d?");
  // U+009B (CSI in UTF-8: C2 9B) starts an escape sequence on terminals that honour C1.
  EXPECT_EQ(SanitizeForTerminal("x\xC2\x9B"
                                "31mred"),
            "x?31mred");
  EXPECT_EQ(SanitizeForTerminal("\xC2\x80\xC2\x9F\xC2\xA0"), "??\xC2\xA0");  // NBSP is fine
  // RLO ... PDF: "Trojan Source" reordering; LRI..PDI isolates; LRM/RLM/ALM marks.
  EXPECT_EQ(SanitizeForTerminal("a\xE2\x80\xAE"
                                "cba\xE2\x80\xAC"
                                "d"),
            "a?cba?d");
  for (char32_t c : {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E,
                     0x200F, 0x061C, 0x2028, 0x2029}) {
    EXPECT_TRUE(IsUnsafeForTerminal(c)) << std::hex << static_cast<uint32_t>(c);
  }
  EXPECT_FALSE(IsUnsafeForTerminal(0x2030));
  EXPECT_FALSE(IsUnsafeForTerminal(0x200D));  // zero-width joiner: part of emoji sequences
  EXPECT_EQ(SanitizeForTerminal("a\nb", " "), "a b");
}

TEST(TerminalTextTest, ReplacesInvalidUtf8ByteByByte) {
  EXPECT_EQ(SanitizeForTerminal("a\xFF"
                                "b"),
            "a?b");
  EXPECT_EQ(SanitizeForTerminal("\xC0\xAF"), "??");            // overlong '/'
  EXPECT_EQ(SanitizeForTerminal("\xED\xA0\x80"), "???");       // surrogate
  EXPECT_EQ(SanitizeForTerminal("\xF4\x90\x80\x80"), "????");  // past U+10FFFF
  EXPECT_EQ(SanitizeForTerminal("\xE6\x97"), "??");            // cut short
  EXPECT_EQ(SanitizeForTerminal("\xE2\x80\xAE", "\xEF\xBF\xBD"), "\xEF\xBF\xBD");
}

TEST(TerminalTextTest, TruncatesByCharacterNeverInsideOne) {
  const std::string text = "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E";  // three 3-byte characters
  EXPECT_EQ(Utf8Length(text), 3u);
  EXPECT_EQ(Utf8PrefixBytes(text, 2), 6u);
  EXPECT_EQ(Utf8PrefixBytes(text, 3), 9u);  // at the limit: all of it
  EXPECT_EQ(Utf8PrefixBytes(text, 9), 9u);
  EXPECT_EQ(TerminalSafeShortened(text, 3), text);
  EXPECT_EQ(TerminalSafeShortened(text, 2), "\xE6\x97\xA5\xE6\x9C\xAC...");
  EXPECT_EQ(TerminalSafeShortened("\xF0\x9F\x9A\x80z", 1, "~"), "\xF0\x9F\x9A\x80~");
  EXPECT_EQ(TerminalSafeShortened("abc", 0), "...");
  EXPECT_EQ(Utf8PrefixBytes("a\xFF\xFF", 2), 2u);  // an invalid byte counts as one character
}

TEST(TerminalTextTest, ByteLimitsNeverCutACharacter) {
  const std::string text =
      "ab\xE6\x97\xA5"
      "c";  // a b 日 c: 6 bytes
  EXPECT_EQ(Utf8CutBytes(text, 2), 2u);
  EXPECT_EQ(Utf8CutBytes(text, 3), 2u);
  EXPECT_EQ(Utf8CutBytes(text, 4), 2u);
  EXPECT_EQ(Utf8CutBytes(text, 5), 5u);  // at the character's end
  EXPECT_EQ(Utf8CutBytes(text, 99), 6u);
  EXPECT_EQ(Utf8CutBytes("\x80\x80\x80\x80\x80", 4), 4u);  // invalid: cut where asked
}

TEST(TerminalTextTest, JsonEscapesC1AndBidiControlsAndKeepsThem) {
  std::string out;
  JsonWriter::AppendQuoted(out,
                           "a\xC2\x9B"
                           "b\xE2\x80\xAE"
                           "c\xE2\x80\xA8",
                           false);
  EXPECT_EQ(out, "\"a\\u009bb\\u202ec\\u2028\"");
}

}  // namespace
}  // namespace sparkprof
