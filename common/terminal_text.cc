#include "common/terminal_text.h"

#include "common/utf8.h"

namespace sparkprof {

size_t DecodeUtf8(std::string_view text, size_t i, char32_t* code_point) {
  uint32_t value = 0;
  size_t n = utf8::Decode(text.substr(i), value);  // the one decoder (common/utf8.h)
  if (n > 0) *code_point = value;
  return n;
}

bool IsUnsafeForTerminal(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

std::string SanitizeForTerminal(std::string_view text, std::string_view replacement) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {  // the common case: printable ASCII
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    char32_t code_point = 0;
    size_t n = DecodeUtf8(text, i, &code_point);
    if (n == 0 || IsUnsafeForTerminal(code_point)) {
      out.append(replacement);
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

size_t Utf8PrefixBytes(std::string_view text, size_t max_characters) {
  size_t i = 0;
  for (size_t characters = 0; i < text.size() && characters < max_characters; ++characters) {
    char32_t ignored = 0;
    size_t n = DecodeUtf8(text, i, &ignored);
    i += n == 0 ? 1 : n;
  }
  return i;
}

size_t Utf8CutBytes(std::string_view text, size_t max_bytes) {
  if (max_bytes >= text.size()) return text.size();
  size_t end = max_bytes;
  // Back up over continuation bytes (at most 3: a longer run is invalid anyway).
  for (int i = 0; i < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80; ++i) {
    --end;
  }
  return (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80 ? max_bytes : end;
}

size_t Utf8Length(std::string_view text) {
  size_t characters = 0;
  for (size_t i = 0; i < text.size(); ++characters) {
    char32_t ignored = 0;
    size_t n = DecodeUtf8(text, i, &ignored);
    i += n == 0 ? 1 : n;
  }
  return characters;
}

std::string TerminalSafeShortened(std::string_view text, size_t max_characters,
                                  std::string_view ellipsis, std::string_view replacement) {
  size_t cut = Utf8PrefixBytes(text, max_characters);
  std::string out = SanitizeForTerminal(text.substr(0, cut), replacement);
  if (cut < text.size()) out.append(ellipsis);
  return out;
}

}  // namespace sparkprof
