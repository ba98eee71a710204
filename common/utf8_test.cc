#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace sparkprof::utf8 {
namespace {

TEST(Utf8Test, ModifiedUtf8BecomesStandardUtf8) {
  // U+1F525 as JVMTI writes it (surrogates D83D DD25, three bytes each) and as UTF-8.
  EXPECT_EQ(FromModified("worker \xED\xA0\xBD\xED\xB4\xA5!"), "worker \xF0\x9F\x94\xA5!");
  EXPECT_EQ(FromModified("\xED\xAF\xBF\xED\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_EQ(FromModified("a\xC0\x80 b"), std::string("a\0 b", 4));          // NUL
  // What is already UTF-8 below U+10000 stays as it is.
  EXPECT_EQ(FromModified("caf\xC3\xA9 \xE2\x98\x83 plain"), "caf\xC3\xA9 \xE2\x98\x83 plain");
}

TEST(Utf8Test, MalformedModifiedUtf8IsReplacedByteByByte) {
  const std::string replacement = "\xEF\xBF\xBD";
  // A lone high surrogate, a lone low one, and the pair in the wrong order.
  EXPECT_EQ(FromModified("\xED\xA0\xBD x"), replacement + replacement + replacement + " x");
  EXPECT_EQ(FromModified("\xED\xB4\xA5"), replacement + replacement + replacement);
  EXPECT_EQ(FromModified("\xED\xB4\xA5\xED\xA0\xBD").size(), 6 * replacement.size());
  // Cut short, stray bytes, and a C0 that is not NUL's form.
  std::string five;
  for (int i = 0; i < 5; ++i) five += replacement;
  EXPECT_EQ(FromModified("\xED\xA0\xBD\xED\xB4"), five);
  EXPECT_EQ(FromModified("\xFF\xC0\x81"), replacement + replacement + replacement);
  EXPECT_EQ(FromModified(""), "");
}

}  // namespace
}  // namespace sparkprof::utf8
