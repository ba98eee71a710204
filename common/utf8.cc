#include "common/utf8.h"

namespace sparkprof::utf8 {

size_t Decode(std::string_view text, uint32_t& code_point) {
  if (text.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;  // 80..BF (continuations) and F8..FF never lead
  if (lead < 0x80) {
    length = 1;
  } else if (lead >= 0xC0 && lead < 0xE0) {
    length = 2;
  } else if (lead >= 0xE0 && lead < 0xF0) {
    length = 3;
  } else if (lead >= 0xF0 && lead < 0xF8) {
    length = 4;
  }
  if (length == 0 || length > text.size()) return 0;
  code_point = length == 1 ? lead : lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kSmallestOfLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kSmallestOfLength[length] || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return length;
}

void Append(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

void AppendValid(std::string& out, std::string_view text) {
  while (!text.empty()) {
    if (static_cast<unsigned char>(text[0]) < 0x80) {  // the common case, byte by byte
      out.push_back(text[0]);
      text.remove_prefix(1);
      continue;
    }
    uint32_t code_point = 0;
    size_t length = Decode(text, code_point);
    if (length == 0) {
      Append(out, kReplacementCharacter);
      length = 1;
    } else {
      out.append(text.data(), length);
    }
    text.remove_prefix(length);
  }
}

std::string FromModified(std::string_view modified) {
  std::string out;
  out.reserve(modified.size());
  auto byte = [&](size_t i) { return static_cast<unsigned char>(modified[i]); };
  // ED A0..AF xx: the high surrogate's 3-byte form; ED B0..BF xx: the low one's.
  auto surrogate_half = [&](size_t i, unsigned char second_high_bits) {
    return i + 3 <= modified.size() && byte(i) == 0xED &&
           (byte(i + 1) & 0xF0) == second_high_bits && (byte(i + 2) & 0xC0) == 0x80;
  };
  size_t i = 0;
  while (i < modified.size()) {
    if (byte(i) == 0xC0 && i + 1 < modified.size() && byte(i + 1) == 0x80) {
      out.push_back('\0');
      i += 2;
    } else if (surrogate_half(i, 0xA0) && surrogate_half(i + 3, 0xB0)) {
      uint32_t high = ((byte(i + 1) & 0x0F) << 6) | (byte(i + 2) & 0x3F);
      uint32_t low = ((byte(i + 4) & 0x0F) << 6) | (byte(i + 5) & 0x3F);
      Append(out, 0x10000 + (high << 10) + low);
      i += 6;
    } else {
      uint32_t code_point = 0;
      size_t length = Decode(modified.substr(i), code_point);
      if (length == 0) {
        Append(out, kReplacementCharacter);
        length = 1;
      } else {
        out.append(modified.data() + i, length);
      }
      i += length;
    }
  }
  return out;
}

}  // namespace sparkprof::utf8
