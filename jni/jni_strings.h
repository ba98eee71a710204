// Strings across the JNI boundary, for both sides (sparkprof_jni.cc, sparkprof_driver_jni.cc).
// JNI's "UTF" functions use modified UTF-8: a supplementary character (an emoji in spark.app.name)
// is two 3-byte surrogates and NUL is C0 80, neither valid UTF-8; labels built from them make
// Prometheus reject the whole scrape. These convert between Java's UTF-16 and standard UTF-8.
#pragma once

#include <jni.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace sparkprof::jni {

// Standard UTF-8 of UTF-16 text: surrogate pairs become one 4-byte sequence; lone surrogates and
// NUL become U+FFFD.
std::string Utf8FromUtf16(std::u16string_view units);
// UTF-16 of UTF-8 text; each malformed byte (truncated, overlong, surrogate, above U+10FFFF)
// becomes U+FFFD.
std::u16string Utf16FromUtf8(std::string_view text);

// Standard UTF-8 of a Java string ("" for null or when the JVM fails; its exception is cleared).
std::string ToUtf8(JNIEnv* env, jstring text, size_t max_chars = SIZE_MAX);
// A Java string of standard UTF-8 text (null with an OutOfMemoryError pending on failure).
jstring ToJavaString(JNIEnv* env, std::string_view utf8);

}  // namespace sparkprof::jni
