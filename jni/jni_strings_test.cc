#include "jni/jni_strings.h"

#include <gtest/gtest.h>

namespace sparkprof::jni {
namespace {

// What GetStringUTFChars gives for U+1F600 (two 3-byte surrogates) is not UTF-8; ours is.
TEST(JniStringsTest, SupplementaryCharactersBecomeOneUtf8Sequence) {
  const std::u16string app_name = u"caf\u00e9 \u2603 \U0001F600 end";
  EXPECT_EQ(Utf8FromUtf16(app_name), "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 end");
  EXPECT_EQ(Utf8FromUtf16(u"\U0010FFFF"), "\xf4\x8f\xbf\xbf");
  EXPECT_EQ(Utf16FromUtf8("caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 end"), app_name);
}

TEST(JniStringsTest, LoneSurrogatesAndNulBecomeReplacementCharacters) {
  const std::string replacement = "\xef\xbf\xbd";
  EXPECT_EQ(Utf8FromUtf16(std::u16string(u"a\0b", 3)), "a" + replacement + "b");
  EXPECT_EQ(Utf8FromUtf16(std::u16string(1, char16_t{0xD83D}) + u"x"), replacement + "x");
  EXPECT_EQ(Utf8FromUtf16(std::u16string(1, char16_t{0xDE00})), replacement);
  EXPECT_EQ(Utf8FromUtf16(std::u16string{char16_t{0xDE00}, char16_t{0xD83D}}),
            replacement + replacement);
}

TEST(JniStringsTest, MalformedUtf8BecomesReplacementCharacters) {
  const std::u16string replacement(1, char16_t{0xFFFD});
  // Modified UTF-8 of U+1F600 (surrogates), of NUL (C0 80), overlong, truncated, stray bytes.
  EXPECT_EQ(Utf16FromUtf8("\xed\xa0\xbd\xed\xb8\x80"), std::u16string(6, char16_t{0xFFFD}));
  EXPECT_EQ(Utf16FromUtf8("\xc0\x80"), replacement + replacement);
  EXPECT_EQ(Utf16FromUtf8("\xe0\x80\xaf"), std::u16string(3, char16_t{0xFFFD}));
  EXPECT_EQ(Utf16FromUtf8("a\xf0\x9f\x98"), u"a" + std::u16string(3, char16_t{0xFFFD}));
  EXPECT_EQ(Utf16FromUtf8("\x80z\xff"), replacement + u"z" + replacement);
  EXPECT_EQ(Utf16FromUtf8("\xf4\x90\x80\x80"), std::u16string(4, char16_t{0xFFFD}));
}

}  // namespace
}  // namespace sparkprof::jni
