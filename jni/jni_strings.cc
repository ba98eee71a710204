#include "jni/jni_strings.h"

#include <algorithm>
#include <cstdint>

#include "common/utf8.h"

namespace sparkprof::jni {
namespace {

using utf8::Append;
using utf8::kReplacementCharacter;

}  // namespace

std::string Utf8FromUtf16(std::u16string_view units) {
  std::string utf8;
  utf8.reserve(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    const uint32_t unit = units[i];
    if (unit >= 0xD800 && unit <= 0xDBFF && i + 1 < units.size() && units[i + 1] >= 0xDC00 &&
        units[i + 1] <= 0xDFFF) {
      Append(utf8, 0x10000 + ((unit - 0xD800) << 10) + (units[i + 1] - 0xDC00));
      ++i;
    } else if ((unit >= 0xD800 && unit <= 0xDFFF) || unit == 0) {
      Append(utf8, kReplacementCharacter);
    } else {
      Append(utf8, unit);
    }
  }
  return utf8;
}

std::u16string Utf16FromUtf8(std::string_view text) {
  std::u16string units;
  units.reserve(text.size());
  while (!text.empty()) {
    uint32_t code_point = 0;
    size_t length = utf8::Decode(text, code_point);
    if (length == 0) {
      code_point = kReplacementCharacter;
      length = 1;
    }
    if (code_point >= 0x10000) {
      code_point -= 0x10000;
      units.push_back(static_cast<char16_t>(0xD800 + (code_point >> 10)));
      units.push_back(static_cast<char16_t>(0xDC00 + (code_point & 0x3FF)));
    } else {
      units.push_back(static_cast<char16_t>(code_point));
    }
    text.remove_prefix(length);
  }
  return units;
}

std::string ToUtf8(JNIEnv* env, jstring text, size_t max_chars) {
  if (text == nullptr) return {};
  const jsize length = static_cast<jsize>(
      std::min<size_t>(static_cast<size_t>(env->GetStringLength(text)), max_chars));
  std::u16string units(static_cast<size_t>(length), u'\0');
  env->GetStringRegion(text, 0, length, reinterpret_cast<jchar*>(units.data()));
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return {};
  }
  return Utf8FromUtf16(units);
}

jstring ToJavaString(JNIEnv* env, std::string_view utf8) {
  std::u16string units = Utf16FromUtf8(utf8);
  return env->NewString(reinterpret_cast<const jchar*>(units.data()),
                        static_cast<jsize>(units.size()));
}

}  // namespace sparkprof::jni
