#include "flamegraph/escaping.h"

#include <charconv>
#include <cstdint>

#include "common/json_writer.h"

namespace sparkprof::flamegraph {

void AppendJsonString(std::string_view text, std::string& out) {
  JsonWriter::AppendQuoted(out, text, /*html_safe=*/true);
}

void AppendHtmlText(std::string_view text, std::string& out) {
  for (char c : text) {
    switch (c) {
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      case '"':
        out.append("&quot;");
        break;
      case '\'':
        out.append("&#39;");
        break;
      default:
        out.push_back(c);
    }
  }
}

void AppendDecimal(uint64_t value, std::string& out) {
  char digits[24];
  auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end);
}

}  // namespace sparkprof::flamegraph
