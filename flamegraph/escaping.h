// Escaping for the two places frame names land in generated files: JSON (speedscope, and the
// HTML page's data block) and HTML text. Frame names are untrusted: they may hold `</script>`,
// `<!--`, quotes, U+2028 or bytes that are not UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sparkprof::flamegraph {

// Appends `text` as a quoted JSON string (common/json_writer's html-safe escaping): besides what
// JSON requires, '<', '>', '&' and U+2028/U+2029 become \uXXXX so the literal is also inert inside
// an HTML <script> element, and bytes that are not valid UTF-8 become U+FFFD.
void AppendJsonString(std::string_view text, std::string& out);

// Appends `text` with &, <, >, " and ' replaced by character references (for element text and
// attribute values).
void AppendHtmlText(std::string_view text, std::string& out);

// Appends `value` in decimal (numbers in JSON and collapsed text).
void AppendDecimal(uint64_t value, std::string& out);

}  // namespace sparkprof::flamegraph
