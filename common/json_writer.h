// A small streaming JSON writer: correct escaping (control characters, invalid UTF-8 replaced by
// U+FFFD, and optionally '<', '>', '&', U+2028/2029 as \u escapes so the output can sit inside an
// HTML <script> element), commas handled for the caller, optional indentation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sparkprof {

class JsonWriter {
 public:
  struct Options {
    int indent = 2;          // 0 = compact
    bool html_safe = false;  // escape < > & and U+2028/U+2029
  };
  JsonWriter() : JsonWriter(Options{}) {}
  explicit JsonWriter(Options options) : options_(options) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Double(double value, int precision = 6);  // non-finite values become null
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // Key + value shorthands.
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, int value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, bool value) { return Key(key).Bool(value); }
  JsonWriter& FieldDouble(std::string_view key, double value, int precision = 6) {
    return Key(key).Double(value, precision);
  }
  // Key + an array of the values, in their order.
  JsonWriter& FieldArray(std::string_view key, std::span<const std::string> values);
  JsonWriter& FieldArray(std::string_view key, std::span<const int32_t> values);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

  // Appends `text` as a JSON string literal (with quotes) to `out`.
  static void AppendQuoted(std::string& out, std::string_view text, bool html_safe);

 private:
  void BeforeValue();
  JsonWriter& EndContainer(char close);
  void Newline();

  Options options_;
  std::string out_;
  // Per open container: number of values written so far.
  std::vector<int64_t> counts_;
  bool after_key_ = false;
};

}  // namespace sparkprof
