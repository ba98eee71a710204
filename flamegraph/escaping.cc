#include "flamegraph/escaping.h"

#include <charconv>
#include <cstdint>

namespace sparkprof::flamegraph {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void AppendUnicodeEscape(uint32_t code_unit, std::string& out) {
  out.append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHexDigits[(code_unit >> shift) & 0xf]);
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is invalid.
size_t ValidUtf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length;
  uint32_t code_point;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code_point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code_point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3f);
  }
  bool overlong = (length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000);
  bool surrogate = code_point >= 0xd800 && code_point <= 0xdfff;
  if (overlong || surrogate || code_point > 0x10ffff) return 0;
  return length;
}

}  // namespace

void AppendJsonString(std::string_view text, std::string& out) {
  out.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '<':
        case '>':
        case '&':
          AppendUnicodeEscape(c, out);
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            AppendUnicodeEscape(c, out);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t length = ValidUtf8Length(text, i);
    if (length == 0) {
      AppendUnicodeEscape(0xfffd, out);
      ++i;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8 / E2 80 A9) end a line in older JavaScript parsers.
    if (length == 3 && c == 0xe2 && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(text[i + 2]) & 0xfe) == 0xa8) {
      AppendUnicodeEscape(0x2028 + (static_cast<unsigned char>(text[i + 2]) - 0xa8), out);
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  out.push_back('"');
}

void AppendHtmlText(std::string_view text, std::string& out) {
  for (char c : text) {
    switch (c) {
      case '&': out.append("&amp;"); break;
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '"': out.append("&quot;"); break;
      case '\'': out.append("&#39;"); break;
      default: out.push_back(c);
    }
  }
}

void AppendDecimal(uint64_t value, std::string& out) {
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
}

}  // namespace sparkprof::flamegraph
