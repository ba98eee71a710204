#include "common/json_writer.h"

#include <cmath>
#include <cstdio>

#include "common/terminal_text.h"

namespace sparkprof {

void JsonWriter::AppendQuoted(std::string& out, std::string_view text, bool html_safe) {
  out.push_back('"');
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F || (html_safe && (c == '<' || c == '>' || c == '&'))) {
            out += "\\u00";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    char32_t code_point = 0;
    size_t n = DecodeUtf8(text, i, &code_point);
    if (n == 0) {
      out += "\\ufffd";  // invalid byte: replaced, never passed through
      ++i;
      continue;
    }
    // C1 and bidirectional controls act on a terminal the JSON is printed to (and U+2028 /
    // U+2029 end a line in JavaScript source): escaped, so the string is kept but inert.
    if (IsUnsafeForTerminal(code_point)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(code_point >> shift) & 0xF]);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  out.push_back('"');
}

void JsonWriter::Newline() {
  if (options_.indent <= 0) return;
  out_.push_back('\n');
  out_.append(counts_.size() * static_cast<size_t>(options_.indent), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!counts_.empty()) {
    if (counts_.back() > 0) out_.push_back(',');
    ++counts_.back();
    Newline();
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  counts_.push_back(0);
  return *this;
}

JsonWriter& JsonWriter::EndContainer(char close) {
  int64_t count = counts_.back();
  counts_.pop_back();
  if (count > 0) Newline();
  out_.push_back(close);
  return *this;
}

JsonWriter& JsonWriter::EndObject() { return EndContainer('}'); }

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  counts_.push_back(0);
  return *this;
}

JsonWriter& JsonWriter::EndArray() { return EndContainer(']'); }

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendQuoted(out_, key, options_.html_safe);
  out_ += options_.indent > 0 ? ": " : ":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendQuoted(out_, value, options_.html_safe);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value, int precision) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  out_ += buffer;
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::FieldArray(std::string_view key, std::span<const std::string> values) {
  Key(key).BeginArray();
  for (const std::string& value : values) String(value);
  return EndArray();
}

JsonWriter& JsonWriter::FieldArray(std::string_view key, std::span<const int32_t> values) {
  Key(key).BeginArray();
  for (int32_t value : values) Int(value);
  return EndArray();
}

}  // namespace sparkprof
