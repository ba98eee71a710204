#include <gtest/gtest.h>

#include <string>

#include "flamegraph/escaping.h"
#include "flamegraph/frame_names.h"

namespace sparkprof::flamegraph {
namespace {

std::string Json(std::string_view text) {
  std::string out;
  AppendJsonString(text, out);
  return out;
}

TEST(EscapingTest, JsonStringIsInertInsideAScriptElement) {
  EXPECT_EQ(Json("</script><script>alert(1)</script>"),
            "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"");
  EXPECT_EQ(Json("<!--"), "\"\\u003c!--\"");
  EXPECT_EQ(Json("a\"b\\c'd"), "\"a\\\"b\\\\c'd\"");
  EXPECT_EQ(Json("x&y"), "\"x\\u0026y\"");
  EXPECT_EQ(Json("line\u2028sep\u2029"), "\"line\\u2028sep\\u2029\"");
  EXPECT_EQ(Json(std::string_view("nul\0tab\t", 8)), "\"nul\\u0000tab\\t\"");
}

TEST(EscapingTest, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(Json("ok\xff"), "\"ok\\ufffd\"");
  EXPECT_EQ(Json("\xc0\x80"), "\"\\ufffd\\ufffd\"");             // overlong NUL
  EXPECT_EQ(Json("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  EXPECT_EQ(Json("\xe2\x82"), "\"\\ufffd\\ufffd\"");             // truncated
  EXPECT_EQ(Json("caf\xc3\xa9 \xf0\x9f\x94\xa5"), "\"caf\xc3\xa9 \xf0\x9f\x94\xa5\"");
}

TEST(EscapingTest, HtmlText) {
  std::string out;
  AppendHtmlText("<b title=\"x\">Tom & Jerry's</b>", out);
  EXPECT_EQ(out, "&lt;b title=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;");
}

TEST(FrameNamesTest, JavaNamesGetDots) {
  EXPECT_EQ(ReadableFrameName("java/io/ObjectOutputStream.writeObject"),
            "java.io.ObjectOutputStream.writeObject");
  EXPECT_EQ(ReadableFrameName("org/apache/spark/rdd/RDD$$anonfun$1.apply(Ljava/lang/Object;)V"),
            "org.apache.spark.rdd.RDD$$anonfun$1.apply(Ljava/lang/Object;)V");
  EXPECT_EQ(ReadableFrameName("/usr/lib/libc.so.6"), "/usr/lib/libc.so.6");
  EXPECT_EQ(ReadableFrameName("std::vector<int>::push_back"), "std::vector<int>::push_back");
  EXPECT_EQ(ReadableFrameName("__GI___libc_write"), "__GI___libc_write");
  EXPECT_EQ(ReadableFrameName("java/lang/Object.<init>"), "java.lang.Object.<init>");
  EXPECT_EQ(ReadableFrameName("</script><img"), "</script><img");
}

TEST(FrameNamesTest, FrameKinds) {
  EXPECT_EQ(ClassifyFrameKind("java/lang/Thread.run"), FrameKind::kJava);
  EXPECT_EQ(ClassifyFrameKind("scala.collection.Iterator.foreach"), FrameKind::kJava);
  EXPECT_EQ(ClassifyFrameKind("Interpreter_[i]"), FrameKind::kInlined);
  EXPECT_EQ(ClassifyFrameKind("do_syscall_64_[k]"), FrameKind::kKernel);
  EXPECT_EQ(ClassifyFrameKind("JavaThread::run"), FrameKind::kCpp);
  EXPECT_EQ(ClassifyFrameKind("__libc_write"), FrameKind::kNative);
}

}  // namespace
}  // namespace sparkprof::flamegraph
