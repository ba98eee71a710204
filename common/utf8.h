// UTF-8 decoding and encoding for everything that checks or converts text it did not write
// (executor ids, Java strings across JNI, Prometheus label values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparkprof::utf8 {

inline constexpr uint32_t kReplacementCharacter = 0xFFFD;

// The code point of the UTF-8 sequence at the start of `text` and its length in bytes, or 0
// when it is malformed: truncated, a stray continuation byte, overlong, a surrogate (as JNI's
// modified UTF-8 writes supplementary characters) or above U+10FFFF.
size_t Decode(std::string_view text, uint32_t& code_point);

// Appends `code_point` (<= U+10FFFF) as UTF-8.
void Append(std::string& out, uint32_t code_point);

// Appends `text` with every byte that does not start a well-formed sequence replaced by U+FFFD;
// well-formed text is appended unchanged.
void AppendValid(std::string& out, std::string_view text);

// Standard UTF-8 of the modified UTF-8 that JVMTI and JNI's "UTF" functions return: a
// supplementary character (an emoji) is two 3-byte surrogates and becomes one 4-byte sequence, NUL
// is C0 80 and becomes 00; anything else malformed (a lone surrogate among it) becomes U+FFFD per
// byte, as AppendValid does.
std::string FromModified(std::string_view modified);

}  // namespace sparkprof::utf8
