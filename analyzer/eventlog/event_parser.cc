#include "analyzer/eventlog/event_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "analyzer/eventlog/value_bounds.h"
#include "common/civil_time.h"
#include "common/terminal_text.h"

namespace sparkprof::eventlog {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

static_assert(EventParser::kRequiredPadding >= simdjson::SIMDJSON_PADDING,
              "line buffers must leave simdjson's read-ahead padding");

std::string FirstLine(std::string_view text, size_t max_bytes) {
  size_t end = text.find_first_of("\r\n");
  if (end == std::string_view::npos) end = text.size();
  if (end > max_bytes) end = Utf8CutBytes(text, max_bytes);  // never inside a character
  return std::string(text.substr(0, end));
}

std::string RootCauseLine(std::string_view text, size_t max_bytes) {
  // Python: the traceback's frames are indented; the exception raised is the first line after
  // the last "Traceback (most recent call last):" that starts in the first column.
  constexpr std::string_view kTraceback = "Traceback (most recent call last):";
  if (size_t at = text.rfind(kTraceback); at != std::string_view::npos) {
    size_t line = text.find('\n', at);
    while (line != std::string_view::npos && line + 1 < text.size()) {
      const std::string_view rest = text.substr(line + 1);
      if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\r' &&
          rest.front() != '\n') {
        return FirstLine(rest, max_bytes);
      }
      line = text.find('\n', line + 1);
    }
  }
  // Java: the innermost "Caused by: " of the stack trace.
  constexpr std::string_view kCausedBy = "Caused by: ";
  if (size_t at = text.rfind(kCausedBy); at != std::string_view::npos) {
    return FirstLine(text.substr(at + kCausedBy.size()), max_bytes);
  }
  return "";
}

void ExecutorMetricPeaks::MergeMax(const ExecutorMetricPeaks& other) {
  if (!other.present) return;
  present = true;
  auto max_into = [](int64_t& into, int64_t value) { into = std::max(into, value); };
  max_into(jvm_heap_memory_bytes, other.jvm_heap_memory_bytes);
  max_into(jvm_off_heap_memory_bytes, other.jvm_off_heap_memory_bytes);
  max_into(on_heap_execution_memory_bytes, other.on_heap_execution_memory_bytes);
  max_into(off_heap_execution_memory_bytes, other.off_heap_execution_memory_bytes);
  max_into(on_heap_storage_memory_bytes, other.on_heap_storage_memory_bytes);
  max_into(on_heap_unified_memory_bytes, other.on_heap_unified_memory_bytes);
  max_into(direct_pool_memory_bytes, other.direct_pool_memory_bytes);
  max_into(process_tree_jvm_rss_memory_bytes, other.process_tree_jvm_rss_memory_bytes);
  max_into(process_tree_python_rss_memory_bytes, other.process_tree_python_rss_memory_bytes);
  max_into(minor_gc_count, other.minor_gc_count);
  max_into(minor_gc_time_ms, other.minor_gc_time_ms);
  max_into(major_gc_count, other.major_gc_count);
  max_into(major_gc_time_ms, other.major_gc_time_ms);
  max_into(total_gc_time_ms, other.total_gc_time_ms);
}

const char* TaskLocalityName(TaskLocality locality) {
  switch (locality) {
    case TaskLocality::kProcessLocal:
      return "PROCESS_LOCAL";
    case TaskLocality::kNodeLocal:
      return "NODE_LOCAL";
    case TaskLocality::kRackLocal:
      return "RACK_LOCAL";
    case TaskLocality::kNoPref:
      return "NO_PREF";
    case TaskLocality::kAny:
      return "ANY";
    case TaskLocality::kUnknown:
      break;
  }
  return "UNKNOWN";
}

namespace {

// Fields and values are used in place, by reference: a copy made just after simdjson built one
// (a 16-byte load of 8- and 4-byte stores) stalls on store forwarding, a sixth of the parse.

// Internal error carrying simdjson's code; converted to a Status at the line boundary.
struct ParseError {
  error_code code = simdjson::SUCCESS;
  const char* where = "";
};

#define SP_TRY(expr, context)            \
  do {                                   \
    error_code code_ = (expr);           \
    if (code_ != simdjson::SUCCESS) {    \
      return ParseError{code_, context}; \
    }                                    \
  } while (false)

// Strings and keys without a backslash -- nearly all of them -- are their bytes as written, so
// they are read in place instead of unescaped into simdjson's string buffer (a copy per key: a
// third of the parse on logs with large "Accumulables"). Simdjson 3.0.1 has no API for this.

static_assert(std::endian::native == std::endian::little, "the scan below reads words LSB first");

// The first '"' or '\\' at or after `p`, a word at a time. The caller knows one follows within
// the document (stage 1 found the string closed); the last word read may reach past it, into
// the padding every line buffer carries (kRequiredPadding).
const char* QuoteOrBackslash(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighBits = 0x8080808080808080ULL;
  for (;; p += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    const uint64_t quotes = word ^ (kOnes * '"');
    const uint64_t backslashes = word ^ (kOnes * '\\');
    // A zero byte's high bit (exact up to the first zero byte, which is all that is used).
    const uint64_t found =
        (((quotes - kOnes) & ~quotes) | ((backslashes - kOnes) & ~backslashes)) & kHighBits;
    if (found != 0) return p + __builtin_ctzll(found) / 8;
  }
}

// A field's key: in place when it has no escape, else unescaped.
error_code KeyOf(ondemand::field& field, std::string_view* key) {
  const char* start = field.key().raw();  // just after the opening quote
  const char* end = QuoteOrBackslash(start);
  if (*end == '"') {
    *key = std::string_view(start, static_cast<size_t>(end - start));
    return simdjson::SUCCESS;
  }
  return field.unescaped_key().get(*key);
}

// A string value: in place when it has no escape, else unescaped. The text stays valid while
// the line is parsed (either way).
error_code GetString(ondemand::value& value, std::string_view* out) {
  std::string_view token = value.raw_json_token();  // from the opening quote to the next token
  if (!token.empty() && token.front() == '"') {
    const char* start = token.data() + 1;
    const char* end = QuoteOrBackslash(start);
    if (*end == '"') {
      ondemand::raw_json_string consumed;
      if (auto e = value.get_raw_json_string().get(consumed)) return e;
      *out = std::string_view(start, static_cast<size_t>(end - start));
      return simdjson::SUCCESS;
    }
  }
  return value.get_string().get(*out);
}

// Numbers: Spark writes JSON numbers, but SQL accumulables are strings and a few tools write
// doubles; all become int64 (doubles truncated, out-of-range clamped).
error_code ReadIntUnbounded(ondemand::value& value, int64_t* out) {
  // Fast path: nearly every value is a plain integer. A failed typed read is recoverable in
  // simdjson's on-demand API, so the slow path below can still look at the value.
  int64_t fast = 0;
  if (value.get_int64().get(fast) == simdjson::SUCCESS) {
    *out = fast;
    return simdjson::SUCCESS;
  }
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  switch (type) {
    case ondemand::json_type::number: {
      ondemand::number number;
      if (auto e = value.get_number().get(number)) return e;
      if (number.is_int64()) {
        *out = number.get_int64();
      } else if (number.is_uint64()) {
        *out = std::numeric_limits<int64_t>::max();
      } else {
        double d = number.get_double();
        if (!std::isfinite(d)) {
          *out = 0;
        } else if (d >= 9.2e18) {
          *out = std::numeric_limits<int64_t>::max();
        } else if (d <= -9.2e18) {
          *out = std::numeric_limits<int64_t>::min();
        } else {
          *out = static_cast<int64_t>(d);
        }
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::string: {
      std::string_view text;
      if (auto e = GetString(value, &text)) return e;
      int64_t parsed = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (ec == std::errc()) *out = parsed;
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::boolean: {
      bool b = false;
      if (auto e = value.get_bool().get(b)) return e;
      *out = b ? 1 : 0;
      return simdjson::SUCCESS;
    }
    default:
      return simdjson::SUCCESS;  // null / object / array: leave as absent
  }
}

// Every number of an event, within kMaxInteger (value_bounds.h).
error_code ReadInt(ondemand::value& value, int64_t* out) {
  error_code code = ReadIntUnbounded(value, out);
  if (code == simdjson::SUCCESS) *out = std::clamp<int64_t>(*out, -kMaxInteger, kMaxInteger);
  return code;
}

error_code ReadInt32(ondemand::value& value, int32_t* out) {
  int64_t wide = *out;
  if (auto e = ReadInt(value, &wide)) return e;
  *out = static_cast<int32_t>(std::clamp<int64_t>(wide, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
  return simdjson::SUCCESS;
}

error_code ReadBool(ondemand::value& value, bool* out) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == ondemand::json_type::boolean) return value.get_bool().get(*out);
  if (type == ondemand::json_type::string) {
    std::string_view text;
    if (auto e = GetString(value, &text)) return e;
    *out = text == "true";
  }
  return simdjson::SUCCESS;
}

error_code ReadDouble(ondemand::value& value, double* out) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type == ondemand::json_type::number) return value.get_double().get(*out);
  return simdjson::SUCCESS;
}

// A number Spark may write as a JSON number or as text ("0.0", "NaN" for a rate with no
// previous batch); `out` is left as it was for anything else, and for NaN and infinities.
error_code ReadDoubleOrText(ondemand::value& value, double* out) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  double parsed = 0;
  if (type == ondemand::json_type::number) {
    if (auto e = value.get_double().get(parsed)) return e;
  } else if (type == ondemand::json_type::string) {
    std::string_view text;
    if (auto e = GetString(value, &text)) return e;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (ec != std::errc()) return simdjson::SUCCESS;
  } else {
    return simdjson::SUCCESS;
  }
  if (std::isfinite(parsed)) *out = parsed;
  return simdjson::SUCCESS;
}

// Strings: null and non-strings leave `out` empty; numbers are kept as their JSON text
// (executor ids have been written both ways by third-party tools).
error_code ReadString(ondemand::value& value, std::string* out, size_t max_bytes = SIZE_MAX) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  out->clear();
  if (type == ondemand::json_type::string) {
    std::string_view text;
    if (auto e = GetString(value, &text)) return e;
    out->assign(text.substr(0, Utf8CutBytes(text, max_bytes)));
  } else if (type == ondemand::json_type::number) {
    std::string_view raw = value.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\t' ||
                            raw.back() == '\r' || raw.back() == ',')) {
      raw.remove_suffix(1);
    }
    out->assign(raw);
  }
  return simdjson::SUCCESS;
}

// A time Spark's streaming events write as ISO 8601 text ("2026-11-30T03:05:18.001Z") in epoch
// ms; -1 when it is null or not a time. A number is taken as epoch ms (a tool that converted it).
error_code ReadIsoTime(ondemand::value& value, int64_t* out) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  *out = -1;
  if (type == ondemand::json_type::number) return ReadInt(value, out);
  if (type != ondemand::json_type::string) return simdjson::SUCCESS;
  std::string_view text;
  if (auto e = GetString(value, &text)) return e;
  *out = ParseIsoTime(text);
  return simdjson::SUCCESS;
}

// Iterates an object's fields; `on_field(key, value)` returns an error_code. With `first_bytes`,
// only keys that start with one of those bytes (or with an escape, which may spell anything) are
// read and passed on; the others are skipped unread (Photon's ~250 accumulables per task).
template <typename Fn>
error_code ForEachField(ondemand::value& value, Fn&& on_field, std::string_view first_bytes = {}) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != ondemand::json_type::object) return simdjson::SUCCESS;  // tolerate null
  ondemand::object object;
  if (auto e = value.get_object().get(object)) return e;
  for (auto field_result : object) {
    if (auto e = field_result.error()) return e;
    ondemand::field& field = field_result.value_unsafe();
    if (!first_bytes.empty()) {
      const char first = *field.key().raw();
      if (first != '\\' && first_bytes.find(first) == std::string_view::npos) continue;
    }
    std::string_view key;
    if (auto e = KeyOf(field, &key)) return e;
    if (auto e = on_field(key, field.value())) return e;
  }
  return simdjson::SUCCESS;
}

// The keys of one kind of object that the parser reads (and the ones it knows it skips), in the
// order Spark writes them. A field's key is first compared, as written, with the key expected
// after the last one matched (one compare when the log follows Spark's order: nearly every key of
// a task event); any other key is unescaped and looked up. Handlers switch on the key's index:
// `case kTable("Task ID"):` names a key, and a name not in the table does not compile.
template <size_t N>
class KeyTable {
 public:
  // A key and its closing quote are compared as kWords little-endian words, read from the key's
  // first byte: that reaches at most kWords * 8 bytes past it, within the line and its padding.
  static constexpr size_t kWords = 5;
  static constexpr size_t kMaxKeyBytes = kWords * 8 - 1;
  static_assert(kWords * 8 <= EventParser::kRequiredPadding);

  consteval explicit KeyTable(const std::string_view (&names)[N]) {
    for (size_t i = 0; i < N; ++i) {
      const std::string_view name = names[i];
      if (name.size() > kMaxKeyBytes || name.find_first_of("\"\\") != std::string_view::npos) {
        throw "a key in a KeyTable must be short and have nothing to escape";
      }
      Key& key = keys_[i];
      key.name = name;
      for (size_t b = 0; b <= name.size(); ++b) {
        const uint8_t byte = b < name.size() ? static_cast<uint8_t>(name[b]) : '"';
        key.words[b / 8] |= uint64_t{byte} << (8 * (b % 8));
        key.masks[b / 8] |= uint64_t{0xff} << (8 * (b % 8));
      }
    }
  }

  consteval int operator()(std::string_view name) const {
    const int index = Find(name);
    if (index < 0) throw "the key is not in this KeyTable";
    return index;
  }

  // Whether the key whose text starts at `raw` (just after its opening quote) is keys_[index]
  // written without escapes.
  bool MatchesRaw(size_t index, const char* raw) const {
    const Key& key = keys_[index];
    uint64_t differ = 0;
#pragma GCC unroll 5  // kWords: branch-free, as unrolled (the compiler does not at -O2)
    for (size_t w = 0; w < kWords; ++w) {
      uint64_t word;
      std::memcpy(&word, raw + w * 8, sizeof(word));
      differ |= (word ^ key.words[w]) & key.masks[w];
    }
    return differ == 0;
  }

  // The index of an unescaped key, or -1.
  constexpr int Find(std::string_view name) const {
    for (size_t i = 0; i < N; ++i) {
      if (keys_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  struct Key {
    std::string_view name;
    uint64_t words[kWords] = {};  // the name and its closing quote, little endian
    uint64_t masks[kWords] = {};  // which of those bytes are compared
  };
  Key keys_[N] = {};
};

// ForEachField for an object whose keys are in `table`: `on_field(index, value)` gets the key's
// index in the table, or -1 for a key not in it.
template <size_t N, typename Fn>
error_code ForEachKnownField(ondemand::object& object, const KeyTable<N>& table, Fn&& on_field) {
  size_t expected = 0;
  for (auto field_result : object) {
    if (auto e = field_result.error()) return e;
    ondemand::field& field = field_result.value_unsafe();
    int index;
    if (expected < N && table.MatchesRaw(expected, field.key().raw())) {
      index = static_cast<int>(expected);
    } else {
      std::string_view key;
      if (auto e = KeyOf(field, &key)) return e;
      index = table.Find(key);
    }
    if (index >= 0) expected = static_cast<size_t>(index) + 1;
    if (auto e = on_field(index, field.value())) return e;
  }
  return simdjson::SUCCESS;
}

template <size_t N, typename Fn>
error_code ForEachKnownField(ondemand::value& value, const KeyTable<N>& table, Fn&& on_field) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != ondemand::json_type::object) return simdjson::SUCCESS;  // tolerate null
  ondemand::object object;
  if (auto e = value.get_object().get(object)) return e;
  return ForEachKnownField(object, table, on_field);
}

// A key of an object and the integer member of `Record` its value is read into (none: the key
// is known but its value is not read here).
template <typename Record>
struct IntField {
  std::string_view name;
  int64_t Record::*member = nullptr;
};

template <typename Record, size_t N>
struct IntFieldTable {
  KeyTable<N> keys;
  std::array<int64_t Record::*, N> members;

  consteval int operator()(std::string_view name) const { return keys(name); }
};

template <typename Record, size_t N>
consteval IntFieldTable<Record, N> IntFields(const IntField<Record> (&fields)[N]) {
  std::string_view names[N];
  std::array<int64_t Record::*, N> members;
  for (size_t i = 0; i < N; ++i) {
    names[i] = fields[i].name;
    members[i] = fields[i].member;
  }
  return {KeyTable<N>(names), members};
}

// Reads the integer members of an object's keys into `record`; a key of the table without a
// member goes to `on_other(index, value)`.
template <typename Record, size_t N, typename Fn>
error_code ReadIntFields(ondemand::value& value, const IntFieldTable<Record, N>& table,
                         Record* record, Fn&& on_other) {
  return ForEachKnownField(value, table.keys, [&](int key, ondemand::value& v) -> error_code {
    if (key < 0) return simdjson::SUCCESS;
    if (int64_t Record::*member = table.members[key]) return ReadInt(v, &(record->*member));
    return on_other(key, v);
  });
}

template <typename Record, size_t N>
error_code ReadIntFields(ondemand::value& value, const IntFieldTable<Record, N>& table,
                         Record* record) {
  return ReadIntFields(value, table, record,
                       [](int, ondemand::value&) { return simdjson::SUCCESS; });
}

template <typename Fn>
error_code ForEachElement(ondemand::value& value, Fn&& on_element) {
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return e;
  if (type != ondemand::json_type::array) return simdjson::SUCCESS;
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return e;
  for (auto element_result : array) {
    if (auto e = element_result.error()) return e;
    if (auto e = on_element(element_result.value_unsafe())) return e;
  }
  return simdjson::SUCCESS;
}

error_code ReadIntArray(ondemand::value& value, std::vector<int32_t>* out) {
  out->clear();
  return ForEachElement(value, [&](ondemand::value& element) {
    int32_t id = 0;
    if (auto e = ReadInt32(element, &id)) return e;
    out->push_back(id);
    return simdjson::SUCCESS;
  });
}

error_code ReadStringMap(ondemand::value& value,
                         std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  return ForEachField(value, [&](std::string_view key, ondemand::value& v) {
    std::string text;
    if (auto e = ReadString(v, &text)) return e;
    out->emplace_back(std::string(key), std::move(text));
    return simdjson::SUCCESS;
  });
}

TaskLocality ParseLocality(std::string_view text) {
  if (text == "PROCESS_LOCAL") return TaskLocality::kProcessLocal;
  if (text == "NODE_LOCAL") return TaskLocality::kNodeLocal;
  if (text == "RACK_LOCAL") return TaskLocality::kRackLocal;
  if (text == "NO_PREF") return TaskLocality::kNoPref;
  if (text == "ANY") return TaskLocality::kAny;
  return TaskLocality::kUnknown;
}

}  // namespace

// The JSON parser's capacity doubles as longer lines come, up to this; beyond, it is exact.
constexpr size_t kParserDoublingLimit = 16 << 20;

struct EventParser::Impl {
  EventSink* sink;  // null: a parser whose caller takes each event (ParseLineUncounted)
  ParserLimits limits;
  ondemand::parser parser;
  ondemand::document* doc = nullptr;  // the line being parsed

  // After the top-level object's last field: anything left is trailing garbage.
  bool AtEnd() { return doc->current_location().error() == simdjson::OUT_OF_BOUNDS; }

  // How every event's parse ends: a field's error, else trailing content, else `slot` holds the
  // line's event.
  error_code Done(error_code e, Event& slot) {
    if (e) return e;
    if (!AtEnd()) return simdjson::TRAILING_CONTENT;
    produced = &slot;
    return simdjson::SUCCESS;
  }

  // The events of the commonest lines, reused between lines so steady-state parsing does not
  // allocate; every other event is built afresh in `fresh`.
  Event task_start{std::in_place_type<TaskStartEvent>};
  Event task_end{std::in_place_type<TaskEndEvent>};
  Event stage_submitted{std::in_place_type<StageSubmittedEvent>};
  Event stage_completed{std::in_place_type<StageCompletedEvent>};
  Event fresh;
  Event* produced = nullptr;  // the line's event, once it parsed in full
  std::string scratch;
  // Why the current event is malformed, when an error code alone would not say it.
  const char* problem = nullptr;
  // A plan node named Photon* was seen: task "Accumulables" are read for Photon's peak memory.
  bool photon_plan_seen = false;
  bool line_photon_plan = false;  // ... in the line being parsed

  Impl(EventSink* s, ParserLimits l) : sink(s), limits(l) {}

  error_code ParseAccumulables(ondemand::value& value, std::vector<Accumulable>* out) {
    out->clear();
    return ForEachElement(value, [&](ondemand::value& element) {
      Accumulable accumulable;
      error_code e = ForEachField(element, [&](std::string_view key, ondemand::value& v) {
        if (key == "ID") return ReadInt(v, &accumulable.id);
        if (key == "Name") return ReadString(v, &accumulable.name, 256);
        if (key == "Value") {
          accumulable.has_value = true;
          return ReadInt(v, &accumulable.value);
        }
        if (key == "Metadata") {
          if (auto e2 = ReadString(v, &scratch, 16)) return e2;
          accumulable.is_sql = scratch == "sql";
        }
        return simdjson::SUCCESS;
      });
      if (e) return e;
      out->push_back(std::move(accumulable));
      return simdjson::SUCCESS;
    });
  }

  error_code ParseStageInfo(ondemand::value& value, StageInfo* stage, bool keep_accumulables) {
    *stage = StageInfo{};
    return ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Stage ID") return ReadInt32(v, &stage->stage_id);
      if (key == "Stage Attempt ID") return ReadInt32(v, &stage->attempt);
      if (key == "Stage Name") return ReadString(v, &stage->name, 1024);
      if (key == "Number of Tasks") return ReadInt32(v, &stage->num_tasks);
      if (key == "Parent IDs") return ReadIntArray(v, &stage->parent_ids);
      if (key == "Details") {
        if (auto e = ReadString(v, &scratch)) return e;
        stage->details_head = FirstLine(scratch, limits.max_message_bytes);
        return simdjson::SUCCESS;
      }
      if (key == "Submission Time") return ReadInt(v, &stage->submission_time_ms);
      if (key == "Completion Time") return ReadInt(v, &stage->completion_time_ms);
      if (key == "Failure Reason") {
        if (auto e = ReadString(v, &scratch)) return e;
        stage->failure_reason = FirstLine(scratch, limits.max_message_bytes);
        stage->has_failure_reason = true;
        return simdjson::SUCCESS;
      }
      if (key == "Resource Profile Id") return ReadInt32(v, &stage->resource_profile_id);
      if (key == "Accumulables" && keep_accumulables) {
        return ParseAccumulables(v, &stage->accumulables);
      }
      if (key == "RDD Info" && keep_accumulables) return ParseCachedRdds(v, &stage->cached_rdds);
      return simdjson::SUCCESS;
    });
  }

  error_code ParseCachedRdds(ondemand::value& value, std::vector<CachedRddInfo>* out) {
    return ForEachElement(value, [&](ondemand::value& rdd_value) -> error_code {
      CachedRddInfo rdd;
      error_code e = ForEachField(rdd_value, [&](std::string_view key, ondemand::value& v) {
        if (key == "RDD ID") return ReadInt32(v, &rdd.rdd_id);
        if (key == "Name") return ReadString(v, &rdd.name, 256);
        if (key == "Number of Partitions") return ReadInt32(v, &rdd.partitions);
        if (key == "Number of Cached Partitions") return ReadInt32(v, &rdd.cached_partitions);
        if (key == "Memory Size") return ReadInt(v, &rdd.memory_bytes);
        if (key == "Disk Size") return ReadInt(v, &rdd.disk_bytes);
        if (key == "Storage Level") {
          return ForEachField(v, [&](std::string_view k, ondemand::value& lv) -> error_code {
            if (k == "Use Memory") return ReadBool(lv, &rdd.use_memory);
            if (k == "Use Disk") return ReadBool(lv, &rdd.use_disk);
            return simdjson::SUCCESS;
          });
        }
        return simdjson::SUCCESS;
      });
      if (e) return e;
      if ((rdd.use_memory || rdd.use_disk) && out->size() < 10000) out->push_back(std::move(rdd));
      return simdjson::SUCCESS;
    });
  }

  // Photon's per-operator SQL metrics in a task's accumulables: "peak memory usage" (summed,
  // saturating, and the largest) and the shuffle write's "... (part of shuffle file write)"
  // timings (summed; see eventlog::TaskInfo).
  error_code PhotonAccumulables(ondemand::value& value, TaskInfo* info) {
    constexpr std::string_view kShuffleWriteSuffix = "(part of shuffle file write)";
    enum class Kind { kNone, kPeak, kShuffleWrite };
    return ForEachElement(value, [&](ondemand::value& element) -> error_code {
      ondemand::json_type type;
      if (auto e = element.type().get(type)) return e;
      if (type != ondemand::json_type::object) return simdjson::SUCCESS;
      ondemand::object object;
      if (auto e = element.get_object().get(object)) return e;
      Kind kind = Kind::kNone;
      int64_t update = 0;
      for (auto field_result : object) {
        if (auto e = field_result.error()) return e;
        ondemand::field& field = field_result.value_unsafe();
        // Only keys that can be "Name" or "Update" are read.
        const char first = *field.key().raw();
        if (first != 'N' && first != 'U' && first != '\\') continue;
        std::string_view key;
        if (auto e = KeyOf(field, &key)) return e;
        if (key == "Name") {
          ondemand::value& name_value = field.value();
          // Most names differ from both in their first byte: those are not read at all.
          const std::string_view token = name_value.raw_json_token();
          const bool may_be_ours = token.size() < 2 || token[0] != '"' || token[1] == 'p' ||
                                   token[1] == 't' || token[1] == '\\';
          std::string_view name;
          if (may_be_ours && GetString(name_value, &name) == simdjson::SUCCESS) {
            if (name == "peak memory usage") {
              kind = Kind::kPeak;
            } else if (name.starts_with("time taken") && name.ends_with(kShuffleWriteSuffix)) {
              kind = Kind::kShuffleWrite;
            }
          }
          // Neither (~250 accumulables a task, a few of them are): the rest of the object is
          // skipped unread, as the next element is reached.
          if (kind == Kind::kNone) break;
        } else if (key == "Update") {
          if (auto e = ReadInt(field.value(), &update)) return e;
        }
      }
      if (kind == Kind::kNone || update <= 0) return simdjson::SUCCESS;
      if (kind == Kind::kPeak) {
        info->photon_peak_memory_largest_operator_bytes =
            std::max(info->photon_peak_memory_largest_operator_bytes, update);
      }
      int64_t* out =
          kind == Kind::kPeak ? &info->photon_peak_memory_bytes : &info->photon_shuffle_write_ns;
      *out = update > std::numeric_limits<int64_t>::max() - *out
                 ? std::numeric_limits<int64_t>::max()
                 : *out + update;
      return simdjson::SUCCESS;
    });
  }

  static constexpr KeyTable kTaskInfoKeys{{"Task ID", "Index", "Attempt", "Partition ID",
                                           "Launch Time", "Executor ID", "Host", "Locality",
                                           "Speculative", "Getting Result Time", "Finish Time",
                                           "Failed", "Killed", "Accumulables"}};

  error_code ParseTaskInfo(ondemand::value& value, TaskInfo* info) {
    info->task_id = -1;
    info->index = -1;
    info->attempt = 0;
    info->partition_id = -1;
    info->launch_time_ms = -1;
    info->getting_result_time_ms = 0;
    info->finish_time_ms = 0;
    info->executor_id.clear();
    info->host.clear();
    info->locality = TaskLocality::kUnknown;
    info->speculative = info->failed = info->killed = false;
    info->photon_peak_memory_bytes = 0;
    info->photon_peak_memory_largest_operator_bytes = 0;
    info->photon_shuffle_write_ns = 0;
    return ForEachKnownField(value, kTaskInfoKeys, [&](int key, ondemand::value& v) -> error_code {
      switch (key) {
        case kTaskInfoKeys("Task ID"):
          return ReadInt(v, &info->task_id);
        case kTaskInfoKeys("Index"):
          return ReadInt32(v, &info->index);
        case kTaskInfoKeys("Attempt"):
          return ReadInt32(v, &info->attempt);
        case kTaskInfoKeys("Partition ID"):
          return ReadInt32(v, &info->partition_id);
        case kTaskInfoKeys("Launch Time"):
          return ReadInt(v, &info->launch_time_ms);
        case kTaskInfoKeys("Executor ID"):
          return ReadString(v, &info->executor_id, 256);
        case kTaskInfoKeys("Host"):
          return ReadString(v, &info->host, 256);
        case kTaskInfoKeys("Locality"):
          if (auto e = ReadString(v, &scratch, 32)) return e;
          info->locality = ParseLocality(scratch);
          return simdjson::SUCCESS;
        case kTaskInfoKeys("Speculative"):
          return ReadBool(v, &info->speculative);
        case kTaskInfoKeys("Getting Result Time"):
          return ReadInt(v, &info->getting_result_time_ms);
        case kTaskInfoKeys("Finish Time"):
          return ReadInt(v, &info->finish_time_ms);
        case kTaskInfoKeys("Failed"):
          return ReadBool(v, &info->failed);
        case kTaskInfoKeys("Killed"):
          return ReadBool(v, &info->killed);
        case kTaskInfoKeys("Accumulables"):
          // Task metrics come from "Task Metrics"; only Photon's own metrics are read here.
          if (photon_plan_seen) return PhotonAccumulables(v, info);
          return simdjson::SUCCESS;
        default:
          return simdjson::SUCCESS;
      }
    });
  }

  using Metrics = TaskMetrics;
  static constexpr auto kShuffleReadFields = IntFields<Metrics>({
      {"Remote Blocks Fetched", &Metrics::shuffle_remote_blocks_fetched},
      {"Local Blocks Fetched", &Metrics::shuffle_local_blocks_fetched},
      {"Fetch Wait Time", &Metrics::shuffle_fetch_wait_time_ms},
      {"Remote Bytes Read", &Metrics::shuffle_remote_bytes_read},
      {"Remote Bytes Read To Disk", &Metrics::shuffle_remote_bytes_read_to_disk},
      {"Local Bytes Read", &Metrics::shuffle_local_bytes_read},
      {"Total Records Read", &Metrics::shuffle_records_read},
      {"Remote Requests Duration", &Metrics::shuffle_remote_requests_duration_ms},
      // The writer's key (3.4+); Spark's own reader looked for another name until 4.2.
      {"Push Based Shuffle"},
      {"Shuffle Push Read Metrics"},
  });
  static constexpr auto kPushReadFields = IntFields<Metrics>({
      {"Corrupt Merged Block Chunks", &Metrics::shuffle_push_corrupt_merged_block_chunks},
      {"Merged Fetch Fallback Count", &Metrics::shuffle_push_merged_fetch_fallback_count},
      {"Merged Remote Blocks Fetched"},
      {"Merged Local Blocks Fetched"},
      {"Merged Remote Chunks Fetched"},
      {"Merged Local Chunks Fetched"},
      {"Merged Remote Bytes Read", &Metrics::shuffle_push_merged_remote_bytes_read},
      {"Merged Local Bytes Read", &Metrics::shuffle_push_merged_local_bytes_read},
      {"Merged Remote Requests Duration"},
      {"Merged Fallback Count", &Metrics::shuffle_push_merged_fetch_fallback_count},
  });
  static constexpr auto kTaskMetricsFields = IntFields<Metrics>({
      {"Executor Deserialize Time", &Metrics::executor_deserialize_time_ms},
      {"Executor Deserialize CPU Time", &Metrics::executor_deserialize_cpu_time_ns},
      {"Executor Run Time", &Metrics::executor_run_time_ms},
      {"Executor CPU Time", &Metrics::executor_cpu_time_ns},
      {"Peak Execution Memory", &Metrics::peak_execution_memory_bytes},
      {"Result Size", &Metrics::result_size_bytes},
      {"JVM GC Time", &Metrics::jvm_gc_time_ms},
      {"Result Serialization Time", &Metrics::result_serialization_time_ms},
      {"Memory Bytes Spilled", &Metrics::memory_bytes_spilled},
      {"Disk Bytes Spilled", &Metrics::disk_bytes_spilled},
      {"Shuffle Read Metrics"},
      {"Shuffle Write Metrics"},
      {"Input Metrics"},
      {"Output Metrics"},
      {"Updated Blocks"},
  });
  static constexpr auto kShuffleWriteFields = IntFields<Metrics>({
      {"Shuffle Bytes Written", &Metrics::shuffle_bytes_written},
      {"Shuffle Write Time", &Metrics::shuffle_write_time_ns},
      {"Shuffle Records Written", &Metrics::shuffle_records_written},
  });
  static constexpr auto kInputFields = IntFields<Metrics>({
      {"Bytes Read", &Metrics::input_bytes_read},
      {"Records Read", &Metrics::input_records_read},
  });
  static constexpr auto kOutputFields = IntFields<Metrics>({
      {"Bytes Written", &Metrics::output_bytes_written},
      {"Records Written", &Metrics::output_records_written},
  });

  error_code ParseTaskMetrics(ondemand::value& value, TaskMetrics* m) {
    *m = TaskMetrics{};
    constexpr auto& fields = kTaskMetricsFields;
    return ReadIntFields(value, fields, m, [&](int key, ondemand::value& v) -> error_code {
      switch (key) {
        case fields("Shuffle Read Metrics"):
          return ReadIntFields(v, kShuffleReadFields, m, [&](int, ondemand::value& push) {
            return ReadIntFields(push, kPushReadFields, m);  // under either of its names
          });
        case fields("Shuffle Write Metrics"):
          return ReadIntFields(v, kShuffleWriteFields, m);
        case fields("Input Metrics"):
          return ReadIntFields(v, kInputFields, m);
        case fields("Output Metrics"):
          return ReadIntFields(v, kOutputFields, m);
        default:
          return simdjson::SUCCESS;
      }
    });
  }

  // Spark's metrics, then Databricks' additions and Spark 4's concurrent GC: all known, so that
  // the keys after them are still where they are expected.
  using Peaks = ExecutorMetricPeaks;
  static constexpr auto kExecutorMetricsFields = IntFields<Peaks>({
      {"JVMHeapMemory", &Peaks::jvm_heap_memory_bytes},
      {"JVMOffHeapMemory", &Peaks::jvm_off_heap_memory_bytes},
      {"OnHeapExecutionMemory", &Peaks::on_heap_execution_memory_bytes},
      {"OffHeapExecutionMemory", &Peaks::off_heap_execution_memory_bytes},
      {"OnHeapStorageMemory", &Peaks::on_heap_storage_memory_bytes},
      {"OffHeapStorageMemory"},
      {"OnHeapUnifiedMemory", &Peaks::on_heap_unified_memory_bytes},
      {"OffHeapUnifiedMemory"},
      {"DirectPoolMemory", &Peaks::direct_pool_memory_bytes},
      {"MappedPoolMemory"},
      {"NettyDirectMemory"},
      {"JvmDirectMemory"},
      {"SparkDirectMemoryOverLimit"},
      {"TotalOffHeapMemory"},
      {"ProcessTreeJVMVMemory"},
      {"ProcessTreeJVMRSSMemory", &Peaks::process_tree_jvm_rss_memory_bytes},
      {"ProcessTreePythonVMemory"},
      {"ProcessTreePythonRSSMemory", &Peaks::process_tree_python_rss_memory_bytes},
      {"ProcessTreeOtherVMemory"},
      {"ProcessTreeOtherRSSMemory"},
      {"MinorGCCount", &Peaks::minor_gc_count},
      {"MinorGCTime", &Peaks::minor_gc_time_ms},
      {"MajorGCCount", &Peaks::major_gc_count},
      {"MajorGCTime", &Peaks::major_gc_time_ms},
      {"TotalGCTime", &Peaks::total_gc_time_ms},
      {"ConcurrentGCCount"},
      {"ConcurrentGCTime"},
  });

  error_code ParseExecutorMetrics(ondemand::value& value, ExecutorMetricPeaks* peaks) {
    *peaks = ExecutorMetricPeaks{};
    ondemand::json_type type;
    if (auto e = value.type().get(type)) return e;
    if (type != ondemand::json_type::object) return simdjson::SUCCESS;
    peaks->present = true;
    return ReadIntFields(value, kExecutorMetricsFields, peaks);
  }

  error_code ParseTaskEndReason(ondemand::value& value, TaskEndReason* reason) {
    reason->reason.clear();
    reason->exception_class.clear();
    reason->message_head.clear();
    reason->root_cause.clear();
    reason->executor_id.clear();
    reason->exit_caused_by_app = true;
    reason->fetch_shuffle_id = -1;
    reason->fetch_host.clear();
    int64_t commit_job = -1, commit_partition = -1, commit_attempt = -1;
    error_code e = ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Reason") return ReadString(v, &reason->reason, 128);
      if (key == "Class Name") return ReadString(v, &reason->exception_class, 256);
      if (key == "Description" || key == "Kill Reason" || key == "Message" ||
          key == "Loss Reason") {
        if (auto e2 = ReadString(v, &scratch)) return e2;
        reason->message_head = FirstLine(scratch, limits.max_message_bytes);
        if (reason->root_cause.empty()) {
          reason->root_cause = RootCauseLine(scratch, limits.max_message_bytes);
        }
        return simdjson::SUCCESS;
      }
      if (key == "Full Stack Trace") {
        if (!reason->root_cause.empty()) return simdjson::SUCCESS;
        if (auto e2 = ReadString(v, &scratch)) return e2;
        reason->root_cause = RootCauseLine(scratch, limits.max_message_bytes);
        return simdjson::SUCCESS;
      }
      if (key == "Executor ID") return ReadString(v, &reason->executor_id, 256);
      if (key == "Exit Caused By App") return ReadBool(v, &reason->exit_caused_by_app);
      if (key == "Shuffle ID") return ReadInt32(v, &reason->fetch_shuffle_id);
      if (key == "Block Manager Address") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& bv) -> error_code {
          if (k == "Host") return ReadString(bv, &reason->fetch_host, 256);
          return simdjson::SUCCESS;
        });
      }
      if (key == "Job ID") return ReadInt(v, &commit_job);
      if (key == "Partition ID") return ReadInt(v, &commit_partition);
      if (key == "Attempt Number") return ReadInt(v, &commit_attempt);
      return simdjson::SUCCESS;
    });
    if (e) return e;
    if (reason->reason == "TaskCommitDenied" && reason->message_head.empty()) {
      reason->message_head = "commit denied for job " + std::to_string(commit_job) +
                             ", partition " + std::to_string(commit_partition) + ", attempt " +
                             std::to_string(commit_attempt);
    }
    return simdjson::SUCCESS;
  }

  error_code ParsePlanInfo(ondemand::value& value, int depth,
                           std::vector<SqlExecutionStartEvent::Metric>* metrics,
                           std::vector<PlanNode>* plan, int32_t parent = -1) {
    if (depth > limits.max_plan_depth) return simdjson::DEPTH_ERROR;
    std::string node_name;
    // The node is added before its children (pre-order); its fields fill in as their keys come.
    int32_t self = -1;
    if (plan != nullptr && plan->size() < limits.max_plan_nodes) {
      self = static_cast<int32_t>(plan->size());
      PlanNode& node = plan->emplace_back();
      node.parent = parent;
      node.depth = depth;
    }
    auto node = [&]() -> PlanNode* { return self >= 0 ? &(*plan)[self] : nullptr; };
    return ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "nodeName") {
        if (auto e = ReadString(v, &node_name, 256)) return e;
        if (node_name.rfind("Photon", 0) == 0) photon_plan_seen = line_photon_plan = true;
        if (PlanNode* n = node()) n->name = node_name;
        return simdjson::SUCCESS;
      }
      if (key == "simpleString") {
        PlanNode* n = node();
        if (n == nullptr) return simdjson::SUCCESS;
        if (auto e = ReadString(v, &scratch)) return e;
        node()->simple_string =
            scratch.substr(0, Utf8CutBytes(scratch, limits.max_plan_string_bytes));
        return simdjson::SUCCESS;
      }
      if (key == "metadata") {
        if (node() == nullptr) return simdjson::SUCCESS;
        return ForEachField(v, [&](std::string_view k, ondemand::value& mv) -> error_code {
          if (k != "PartitionFilters" && k != "PushedFilters" && k != "DataFilters" &&
              k != "Format" && k != "Location") {
            return simdjson::SUCCESS;
          }
          std::string text;
          if (auto e = ReadString(mv, &text)) return e;
          text.resize(Utf8CutBytes(text, limits.max_plan_string_bytes));
          node()->metadata.emplace_back(std::string(k), std::move(text));
          return simdjson::SUCCESS;
        });
      }
      if (key == "children") {
        return ForEachElement(v, [&](ondemand::value& child) {
          return ParsePlanInfo(child, depth + 1, metrics, plan, self);
        });
      }
      if (key == "metrics") {
        return ForEachElement(v, [&](ondemand::value& metric_value) {
          SqlExecutionStartEvent::Metric metric{-1, node_name, "", ""};
          error_code e = ForEachField(metric_value, [&](std::string_view k, ondemand::value& mv) {
            if (k == "name") return ReadString(mv, &metric.name, 256);
            if (k == "accumulatorId") return ReadInt(mv, &metric.accumulator_id);
            if (k == "metricType") return ReadString(mv, &metric.type, 32);
            return simdjson::SUCCESS;
          });
          if (e) return e;
          if (PlanNode* n = node()) n->metric_ids.push_back(metric.accumulator_id);
          metrics->push_back(std::move(metric));
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
  }

  // ---- One function per event: iterate the top-level object's remaining fields. ----

  using Object = ondemand::object;

  template <typename Fn>
  error_code Fields(Object& object, Fn&& on_field) {
    for (auto field_result : object) {
      if (auto e = field_result.error()) return e;
      ondemand::field& field = field_result.value_unsafe();
      std::string_view key;
      if (auto e = KeyOf(field, &key)) return e;
      if (key == "Event") continue;
      if (auto e = on_field(key, field.value())) return e;
    }
    return simdjson::SUCCESS;
  }

  static constexpr KeyTable kTaskEndKeys{{"Event", "Stage ID", "Stage Attempt ID", "Task Type",
                                          "Task End Reason", "Task Info", "Task Executor Metrics",
                                          "Task Metrics"}};

  error_code TaskEnd(Object& object) {
    TaskEndEvent& event = std::get<TaskEndEvent>(task_end);
    event.stage_id = -1;
    event.stage_attempt = 0;
    event.task_type.clear();
    event.has_metrics = false;
    event.metrics = TaskMetrics{};
    event.executor_metrics = ExecutorMetricPeaks{};
    event.reason = TaskEndReason{};
    event.reason.reason.clear();
    bool saw_info = false;
    constexpr auto& keys = kTaskEndKeys;
    error_code e = ForEachKnownField(object, keys, [&](int key, ondemand::value& v) -> error_code {
      switch (key) {
        case keys("Stage ID"):
          return ReadInt32(v, &event.stage_id);
        case keys("Stage Attempt ID"):
          return ReadInt32(v, &event.stage_attempt);
        case keys("Task Type"):
          return ReadString(v, &event.task_type, 64);
        case keys("Task End Reason"):
          return ParseTaskEndReason(v, &event.reason);
        case keys("Task Info"):
          saw_info = true;
          return ParseTaskInfo(v, &event.info);
        case keys("Task Executor Metrics"):
          return ParseExecutorMetrics(v, &event.executor_metrics);
        case keys("Task Metrics"): {
          ondemand::json_type type;
          if (auto e2 = v.type().get(type)) return e2;
          if (type != ondemand::json_type::object) return simdjson::SUCCESS;
          event.has_metrics = true;
          return ParseTaskMetrics(v, &event.metrics);
        }
        default:  // including "Event", read before
          return simdjson::SUCCESS;
      }
    });
    if (e) return e;
    if (!saw_info) return simdjson::NO_SUCH_FIELD;
    // Spark always writes both; without them the task would be counted as a success.
    if (event.reason.reason.empty()) {
      problem = "no \"Task End Reason\" with a \"Reason\"; the task is not counted";
      return simdjson::NO_SUCH_FIELD;
    }
    if (event.info.task_id < 0) {
      problem = "no \"Task ID\" in \"Task Info\"; the task is not counted";
      return simdjson::NO_SUCH_FIELD;
    }
    return Done(simdjson::SUCCESS, task_end);
  }

  static constexpr KeyTable kTaskStartKeys{{"Event", "Stage ID", "Stage Attempt ID", "Task Info"}};

  error_code TaskStart(Object& object) {
    TaskStartEvent& event = std::get<TaskStartEvent>(task_start);
    event.stage_id = -1;
    event.stage_attempt = 0;
    bool saw_info = false;
    constexpr auto& keys = kTaskStartKeys;
    error_code e = ForEachKnownField(object, keys, [&](int key, ondemand::value& v) -> error_code {
      switch (key) {
        case keys("Stage ID"):
          return ReadInt32(v, &event.stage_id);
        case keys("Stage Attempt ID"):
          return ReadInt32(v, &event.stage_attempt);
        case keys("Task Info"):
          saw_info = true;
          return ParseTaskInfo(v, &event.info);
        default:  // including "Event", read before
          return simdjson::SUCCESS;
      }
    });
    if (e) return e;
    if (!saw_info) return simdjson::NO_SUCH_FIELD;
    return Done(simdjson::SUCCESS, task_start);
  }

  error_code StageSubmitted(Object& object) {
    StageSubmittedEvent& event = std::get<StageSubmittedEvent>(stage_submitted);
    event.scheduler_pool.clear();
    bool saw_info = false;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Stage Info") {
        saw_info = true;
        return ParseStageInfo(v, &event.stage, /*keep_accumulables=*/false);
      }
      if (key == "Properties") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& pv) {
          if (k == "spark.scheduler.pool") return ReadString(pv, &event.scheduler_pool, 128);
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    if (e) return e;
    if (!saw_info) return simdjson::NO_SUCH_FIELD;
    return Done(simdjson::SUCCESS, stage_submitted);
  }

  error_code StageCompleted(Object& object) {
    StageCompletedEvent& event = std::get<StageCompletedEvent>(stage_completed);
    bool saw_info = false;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Stage Info") {
        saw_info = true;
        return ParseStageInfo(v, &event.stage, /*keep_accumulables=*/true);
      }
      return simdjson::SUCCESS;
    });
    if (e) return e;
    if (!saw_info) return simdjson::NO_SUCH_FIELD;
    return Done(simdjson::SUCCESS, stage_completed);
  }

  error_code JobStart(Object& object) {
    JobStartEvent& event = fresh.emplace<JobStartEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Job ID") return ReadInt32(v, &event.job_id);
      if (key == "Submission Time") return ReadInt(v, &event.submission_time_ms);
      if (key == "Stage IDs") return ReadIntArray(v, &event.stage_ids);
      if (key == "Stage Infos") {
        return ForEachElement(v, [&](ondemand::value& stage_value) {
          StageInfo stage;
          if (auto e2 = ParseStageInfo(stage_value, &stage, false)) return e2;
          event.stage_infos.push_back(std::move(stage));
          return simdjson::SUCCESS;
        });
      }
      if (key == "Properties") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& pv) -> error_code {
          if (k == "spark.sql.execution.id") return ReadInt(pv, &event.sql_execution_id);
          if (k == "spark.jobGroup.id") return ReadString(pv, &event.job_group, 256);
          if (k == "sql.streaming.queryId") {
            return ReadString(pv, &event.streaming_query_id, 256);
          }
          if (k == "streaming.sql.batchId") return ReadInt(pv, &event.streaming_batch_id);
          if (k == "spark.job.description") {
            return ReadString(pv, &event.description, limits.max_message_bytes);
          }
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code JobEnd(Object& object) {
    JobEndEvent& event = fresh.emplace<JobEndEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Job ID") return ReadInt32(v, &event.job_id);
      if (key == "Completion Time") return ReadInt(v, &event.completion_time_ms);
      if (key == "Job Result") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& rv) -> error_code {
          if (k == "Result") return ReadString(rv, &event.result, 64);
          if (k == "Exception") {
            return ForEachField(rv, [&](std::string_view ek, ondemand::value& xv) -> error_code {
              if (ek == "Message") {
                if (auto e2 = ReadString(xv, &scratch)) return e2;
                event.failure_message_head = FirstLine(scratch, limits.max_message_bytes);
              }
              return simdjson::SUCCESS;
            });
          }
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code ApplicationStart(Object& object) {
    ApplicationStartEvent& event = fresh.emplace<ApplicationStartEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "App Name") return ReadString(v, &event.app_name, 1024);
      if (key == "App ID") return ReadString(v, &event.app_id, 256);
      if (key == "App Attempt ID") return ReadString(v, &event.attempt_id, 64);
      if (key == "User") return ReadString(v, &event.user, 256);
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code ApplicationEnd(Object& object) {
    ApplicationEndEvent& event = fresh.emplace<ApplicationEndEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      if (key == "ExitCode") return ReadInt32(v, &event.exit_code);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code LogStart(Object& object) {
    LogStartEvent& event = fresh.emplace<LogStartEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Spark Version") return ReadString(v, &event.spark_version, 128);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code DatabricksMetadata(Object& object) {
    DatabricksMetadataEvent& event = fresh.emplace<DatabricksMetadataEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Spark Version") return ReadString(v, &event.spark_version, 128);
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      if (key == "Rollover Number") return ReadInt(v, &event.rollover_number);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code EnvironmentUpdate(Object& object) {
    EnvironmentUpdateEvent& event = fresh.emplace<EnvironmentUpdateEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Spark Properties") return ReadStringMap(v, &event.spark_properties);
      if (key == "JVM Information") return ReadStringMap(v, &event.jvm_information);
      if (key == "System Properties") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& sv) -> error_code {
          if (k == "java.version" || k == "java.vm.name" || k == "os.name" ||
              k == "sun.java.command") {
            std::string text;
            if (auto e2 = ReadString(sv, &text, 1024)) return e2;
            event.system_properties_subset.emplace_back(std::string(k), std::move(text));
          }
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code ResourceProfileAdded(Object& object) {
    ResourceProfileAddedEvent& event = fresh.emplace<ResourceProfileAddedEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Resource Profile Id") return ReadInt32(v, &event.resource_profile_id);
      if (key == "Executor Resource Requests") {
        return ForEachField(v, [&](std::string_view name, ondemand::value& rv) -> error_code {
          int64_t amount = -1;
          error_code e2 = ForEachField(rv, [&](std::string_view k, ondemand::value& av) {
            if (k == "Amount") return ReadInt(av, &amount);
            return simdjson::SUCCESS;
          });
          if (e2) return e2;
          if (name == "cores") event.executor_cores = amount;
          if (name == "memory") event.executor_memory_mb = amount;
          if (name == "memoryOverhead") event.executor_memory_overhead_mb = amount;
          if (name == "offHeap") event.executor_off_heap_mb = amount;
          return simdjson::SUCCESS;
        });
      }
      if (key == "Task Resource Requests") {
        return ForEachField(v, [&](std::string_view name, ondemand::value& rv) -> error_code {
          if (name != "cpus") return simdjson::SUCCESS;
          return ForEachField(rv, [&](std::string_view k, ondemand::value& av) {
            if (k == "Amount") return ReadDouble(av, &event.task_cpus);
            return simdjson::SUCCESS;
          });
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code ExecutorAdded(Object& object) {
    ExecutorAddedEvent& event = fresh.emplace<ExecutorAddedEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      if (key == "Executor ID") return ReadString(v, &event.executor_id, 256);
      if (key == "Executor Info") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& iv) -> error_code {
          if (k == "Host") return ReadString(iv, &event.host, 256);
          if (k == "Total Cores") return ReadInt32(iv, &event.total_cores);
          if (k == "Resource Profile Id") return ReadInt32(iv, &event.resource_profile_id);
          if (k == "Request Time") return ReadInt(iv, &event.request_time_ms);
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code ExecutorRemoved(Object& object) {
    ExecutorRemovedEvent& event = fresh.emplace<ExecutorRemovedEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      if (key == "Executor ID") return ReadString(v, &event.executor_id, 256);
      if (key == "Removed Reason") return ReadString(v, &event.reason, 4096);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code BlockManager(Object& object, bool added) {
    BlockManagerEvent& event = fresh.emplace<BlockManagerEvent>();
    event.added = added;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Timestamp") return ReadInt(v, &event.timestamp_ms);
      if (key == "Maximum Memory") return ReadInt(v, &event.max_memory_bytes);
      if (key == "Block Manager ID") {
        return ForEachField(v, [&](std::string_view k, ondemand::value& bv) -> error_code {
          if (k == "Executor ID") return ReadString(bv, &event.executor_id, 256);
          if (k == "Host") return ReadString(bv, &event.host, 256);
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code Exclusion(Object& object, std::string_view name) {
    ExclusionEvent& event = fresh.emplace<ExclusionEvent>();
    event.event_name = std::string(name);
    event.excluded = name.find("Unblacklisted") == std::string_view::npos &&
                     name.find("Unexcluded") == std::string_view::npos;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "time") return ReadInt(v, &event.timestamp_ms);
      if (key == "executorId" || key == "hostId") {
        return ReadString(v, &event.executor_or_host, 256);
      }
      if (key == "stageId") return ReadInt32(v, &event.stage_id);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code StageExecutorMetrics(Object& object) {
    StageExecutorMetricsEvent& event = fresh.emplace<StageExecutorMetricsEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Executor ID") return ReadString(v, &event.executor_id, 256);
      if (key == "Stage ID") return ReadInt32(v, &event.stage_id);
      if (key == "Stage Attempt ID") return ReadInt32(v, &event.stage_attempt);
      if (key == "Executor Metrics") return ParseExecutorMetrics(v, &event.peaks);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code SqlExecutionStart(Object& object) {
    SqlExecutionStartEvent& event = fresh.emplace<SqlExecutionStartEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "executionId") return ReadInt(v, &event.execution_id);
      if (key == "rootExecutionId") return ReadInt(v, &event.root_execution_id);
      if (key == "description") return ReadString(v, &event.description, 4096);
      if (key == "details") {
        if (auto e2 = ReadString(v, &scratch)) return e2;
        event.details_head = FirstLine(scratch, limits.max_message_bytes);
        return simdjson::SUCCESS;
      }
      if (key == "physicalPlanDescription") {
        return ReadString(v, &event.physical_plan, limits.max_plan_text_bytes);
      }
      if (key == "sparkPlanInfo") return ParsePlanInfo(v, 0, &event.metrics, &event.plan);
      if (key == "time") return ReadInt(v, &event.time_ms);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code SqlExecutionEnd(Object& object) {
    SqlExecutionEndEvent& event = fresh.emplace<SqlExecutionEndEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "executionId") return ReadInt(v, &event.execution_id);
      if (key == "time") return ReadInt(v, &event.time_ms);
      if (key == "errorMessage") {
        if (auto e2 = ReadString(v, &scratch)) return e2;
        event.error_message_head = FirstLine(scratch, limits.max_message_bytes);
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code SqlAdaptiveUpdate(Object& object) {
    SqlAdaptiveUpdateEvent& event = fresh.emplace<SqlAdaptiveUpdateEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "executionId") return ReadInt(v, &event.execution_id);
      if (key == "physicalPlanDescription") {
        return ReadString(v, &event.physical_plan, limits.max_plan_text_bytes);
      }
      if (key == "sparkPlanInfo") return ParsePlanInfo(v, 0, &event.metrics, &event.plan);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code SqlDriverAccumUpdates(Object& object) {
    SqlDriverAccumUpdatesEvent& event = fresh.emplace<SqlDriverAccumUpdatesEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "executionId") return ReadInt(v, &event.execution_id);
      if (key == "accumUpdates") {
        return ForEachElement(v, [&](ondemand::value& pair) {
          int64_t values[2] = {0, 0};
          int index = 0;
          error_code e2 = ForEachElement(pair, [&](ondemand::value& element) {
            if (index < 2) {
              if (auto e3 = ReadInt(element, &values[index])) return e3;
            }
            ++index;
            return simdjson::SUCCESS;
          });
          if (e2) return e2;
          if (index == 2) event.updates.emplace_back(values[0], values[1]);
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  // ---- Structured Streaming (StreamingQueryListener events). ----

  error_code StreamingQueryStarted(Object& object) {
    StreamingQueryStartedEvent& event = fresh.emplace<StreamingQueryStartedEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "id") return ReadString(v, &event.query_id, 256);
      if (key == "runId") return ReadString(v, &event.run_id, 256);
      if (key == "name") return ReadString(v, &event.name, 256);
      if (key == "timestamp") return ReadIsoTime(v, &event.timestamp_ms);
      return simdjson::SUCCESS;
    });
    if (e) return e;
    if (event.run_id.empty()) {
      problem = "no \"runId\": the query's run cannot be told apart";
      return simdjson::NO_SUCH_FIELD;
    }
    return Done(e, fresh);
  }

  error_code ParseStateOperator(ondemand::value& value, StreamingStateOperator* op) {
    return ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "operatorName") return ReadString(v, &op->operator_name, 128);
      if (key == "numRowsTotal") return ReadInt(v, &op->num_rows_total);
      if (key == "numRowsUpdated") return ReadInt(v, &op->num_rows_updated);
      if (key == "numRowsRemoved") return ReadInt(v, &op->num_rows_removed);
      if (key == "numRowsDroppedByWatermark") {
        return ReadInt(v, &op->num_rows_dropped_by_watermark);
      }
      if (key == "memoryUsedBytes") return ReadInt(v, &op->memory_used_bytes);
      if (key == "commitTimeMs") return ReadInt(v, &op->commit_time_ms);
      if (key == "allUpdatesTimeMs") return ReadInt(v, &op->all_updates_time_ms);
      if (key == "numShufflePartitions") return ReadInt(v, &op->num_shuffle_partitions);
      if (key == "numStateStoreInstances") return ReadInt(v, &op->num_state_store_instances);
      if (key == "customMetrics") {
        return ForEachField(v, [&](std::string_view name, ondemand::value& mv) -> error_code {
          int64_t amount = 0;
          if (auto e = ReadInt(mv, &amount)) return e;
          if (op->custom_metrics.size() < kMaxStreamingMetrics) {
            op->custom_metrics.emplace_back(std::string(name.substr(0, 128)), amount);
          }
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
  }

  error_code ParseSourceProgress(ondemand::value& value, StreamingSourceProgress* source) {
    return ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "description") return ReadString(v, &source->description, 512);
      if (key == "startOffset") return ReadString(v, &source->start_offset, kMaxOffsetTextBytes);
      if (key == "endOffset") return ReadString(v, &source->end_offset, kMaxOffsetTextBytes);
      if (key == "latestOffset") return ReadString(v, &source->latest_offset, kMaxOffsetTextBytes);
      if (key == "numInputRows") return ReadInt(v, &source->num_input_rows);
      if (key == "inputRowsPerSecond") return ReadDoubleOrText(v, &source->input_rows_per_second);
      if (key == "processedRowsPerSecond") {
        return ReadDoubleOrText(v, &source->processed_rows_per_second);
      }
      if (key == "metrics") {
        return ForEachField(v, [&](std::string_view name, ondemand::value& mv) -> error_code {
          double amount = std::numeric_limits<double>::quiet_NaN();
          if (auto e = ReadDoubleOrText(mv, &amount)) return e;
          if (!std::isnan(amount) && source->metrics.size() < kMaxStreamingMetrics) {
            source->metrics.emplace_back(std::string(name.substr(0, 128)), amount);
          }
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
  }

  error_code ParseProgress(ondemand::value& value, StreamingQueryProgressEvent* event) {
    return ForEachField(value, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "id") return ReadString(v, &event->query_id, 256);
      if (key == "runId") return ReadString(v, &event->run_id, 256);
      if (key == "name") return ReadString(v, &event->name, 256);
      if (key == "timestamp") return ReadIsoTime(v, &event->timestamp_ms);
      if (key == "batchId") return ReadInt(v, &event->batch_id);
      if (key == "batchDuration") return ReadInt(v, &event->batch_duration_ms);
      if (key == "durationMs") {
        return ForEachField(v, [&](std::string_view part, ondemand::value& dv) -> error_code {
          if (part == "latestOffset") return ReadInt(dv, &event->latest_offset_ms);
          if (part == "getOffset") return ReadInt(dv, &event->get_offset_ms);
          if (part == "getBatch") return ReadInt(dv, &event->get_batch_ms);
          if (part == "queryPlanning") return ReadInt(dv, &event->query_planning_ms);
          if (part == "addBatch") return ReadInt(dv, &event->add_batch_ms);
          if (part == "walCommit") return ReadInt(dv, &event->wal_commit_ms);
          if (part == "commitOffsets") return ReadInt(dv, &event->commit_offsets_ms);
          if (part == "triggerExecution") return ReadInt(dv, &event->trigger_execution_ms);
          return simdjson::SUCCESS;
        });
      }
      if (key == "eventTime") {
        return ForEachField(v, [&](std::string_view part, ondemand::value& tv) -> error_code {
          if (part == "watermark") return ReadIsoTime(tv, &event->watermark_ms);
          if (part == "min") return ReadIsoTime(tv, &event->event_time_min_ms);
          if (part == "max") return ReadIsoTime(tv, &event->event_time_max_ms);
          return simdjson::SUCCESS;
        });
      }
      if (key == "stateOperators") {
        return ForEachElement(v, [&](ondemand::value& element) -> error_code {
          StreamingStateOperator op;
          if (auto e = ParseStateOperator(element, &op)) return e;
          if (event->state_operators.size() < kMaxStreamingOperators) {
            event->state_operators.push_back(std::move(op));
          }
          return simdjson::SUCCESS;
        });
      }
      if (key == "sources") {
        return ForEachElement(v, [&](ondemand::value& element) -> error_code {
          StreamingSourceProgress source;
          if (auto e = ParseSourceProgress(element, &source)) return e;
          if (event->sources.size() < kMaxStreamingOperators) {
            event->sources.push_back(std::move(source));
          }
          return simdjson::SUCCESS;
        });
      }
      if (key == "sink") {
        return ForEachField(v, [&](std::string_view part, ondemand::value& sv) -> error_code {
          if (part == "description") return ReadString(sv, &event->sink_description, 512);
          if (part == "numOutputRows") return ReadInt(sv, &event->sink_num_output_rows);
          return simdjson::SUCCESS;
        });
      }
      return simdjson::SUCCESS;
    });
  }

  error_code StreamingQueryProgress(Object& object) {
    StreamingQueryProgressEvent& event = fresh.emplace<StreamingQueryProgressEvent>();
    bool saw_progress = false;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "progress") {
        saw_progress = true;
        return ParseProgress(v, &event);
      }
      return simdjson::SUCCESS;
    });
    if (e) return e;
    if (!saw_progress || event.run_id.empty() || event.batch_id < 0) {
      problem = "no \"progress\" with a \"runId\" and a \"batchId\": the batch is not counted";
      return simdjson::NO_SUCH_FIELD;
    }
    return Done(e, fresh);
  }

  error_code StreamingQueryIdle(Object& object) {
    StreamingQueryIdleEvent& event = fresh.emplace<StreamingQueryIdleEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "id") return ReadString(v, &event.query_id, 256);
      if (key == "runId") return ReadString(v, &event.run_id, 256);
      if (key == "timestamp") return ReadIsoTime(v, &event.timestamp_ms);
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  error_code StreamingQueryTerminated(Object& object) {
    StreamingQueryTerminatedEvent& event = fresh.emplace<StreamingQueryTerminatedEvent>();
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "id") return ReadString(v, &event.query_id, 256);
      if (key == "runId") return ReadString(v, &event.run_id, 256);
      if (key == "exception") {
        if (auto e2 = ReadString(v, &scratch)) return e2;
        event.exception_head = FirstLine(scratch, limits.max_message_bytes);
      }
      return simdjson::SUCCESS;
    });
    return Done(e, fresh);
  }

  // Walks an event we do not interpret to its end (so a truncated line is still caught),
  // picking up a timestamp if it has one.
  error_code Other(Object& object, std::string_view name) {
    int64_t timestamp_ms = -1;
    error_code e = Fields(object, [&](std::string_view key, ondemand::value& v) -> error_code {
      if (key == "Timestamp" || key == "time" || key == "Time") return ReadInt(v, &timestamp_ms);
      return simdjson::SUCCESS;
    });
    if (e) return e;
    // Kept from the last such line, its name's buffer reused: lines of one kind come in runs.
    auto* other = std::get_if<OtherEvent>(&fresh);
    if (other == nullptr) other = &fresh.emplace<OtherEvent>();
    other->name.assign(name);
    other->timestamp_ms = timestamp_ms;
    return Done(simdjson::SUCCESS, fresh);
  }
};

namespace {

constexpr std::string_view kSqlPrefix = "org.apache.spark.sql.execution.ui.";
constexpr std::string_view kSchedulerPrefix = "org.apache.spark.scheduler.";
constexpr std::string_view kStreamingPrefix =
    "org.apache.spark.sql.streaming.StreamingQueryListener$";

// Events Spark defines that sparkprof reads but has no use for; they are not "unknown".
bool IsKnownIgnoredEvent(std::string_view name) {
  static constexpr std::string_view kIgnored[] = {
      "SparkListenerTaskGettingResult",
      "SparkListenerUnpersistRDD",
      "SparkListenerBlockUpdated",
      "SparkListenerExecutorMetricsUpdate",
      "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveSQLMetricUpdates",
  };
  return std::find(std::begin(kIgnored), std::end(kIgnored), name) != std::end(kIgnored);
}

bool IsExclusionEvent(std::string_view name) {
  if (name.starts_with(kSchedulerPrefix)) name.remove_prefix(kSchedulerPrefix.size());
  if (!name.starts_with("SparkListener")) return false;
  // Blacklisted / Unblacklisted / Excluded / Unexcluded (case differs after "Un").
  return name.find("lacklisted") != std::string_view::npos ||
         name.find("xcluded") != std::string_view::npos;
}

}  // namespace

EventParser::EventParser(EventSink& sink, ParserLimits limits)
    : impl_(std::make_unique<Impl>(&sink, limits)) {}

EventParser::EventParser(ParserLimits limits) : impl_(std::make_unique<Impl>(nullptr, limits)) {}

EventSink& EventParser::sink() const { return *impl_->sink; }

EventParser::~EventParser() = default;

bool EventParser::photon_plan_seen() const { return impl_->photon_plan_seen; }

void EventParser::set_photon_plan_seen(bool seen) { impl_->photon_plan_seen = seen; }

void EventParser::CountEvent(std::string_view event_name, bool interpreted) {
  auto count = [](std::map<std::string, int64_t, std::less<>>& map, std::string_view key) {
    auto it = map.find(key);
    if (it == map.end()) it = map.emplace(std::string(key), 0).first;
    ++it->second;
  };
  count(event_counts_, event_name);
  if (!interpreted) count(unknown_events_, event_name);
}

Status EventParser::ParseLine(const char* data, size_t size, size_t capacity) {
  LineInfo info;
  Status status = ParseLineUncounted(data, size, capacity, &info);
  if (!status.ok()) return status;
  impl_->sink->OnEvent(*info.event);
  CountEvent(info.event_name, info.interpreted);
  return status;
}

Status EventParser::ParseLineUncounted(const char* data, size_t size, size_t capacity,
                                       LineInfo* info) {
  info->event_name.clear();
  info->interpreted = true;
  info->photon_plan = false;
  info->event = nullptr;
  if (capacity < size + simdjson::SIMDJSON_PADDING) {
    return Internal("line buffer lacks JSON parser padding");
  }
  if (const size_t parser_capacity = impl_->parser.capacity(); size > parser_capacity) {
    // Grown 2x at a time (up to kParserDoublingLimit): when plans grow line by line, a few
    // reallocations of ~7x a line's size instead of one for every longer line -- each left the
    // allocator's heap higher (q88: 9 of them; peak RSS 1.3 MB lower this way). Should it fail,
    // iterate() below allocates just what the line needs.
    const size_t grown = std::max(size, std::min(2 * parser_capacity, kParserDoublingLimit));
    if (impl_->parser.allocate(grown, impl_->parser.max_depth()) != simdjson::SUCCESS) {
      // left to iterate()
    }
  }
  ondemand::document doc;
  auto describe = [&](error_code code, const char* where) {
    std::string message = simdjson::error_message(code);
    if (where[0] != '\0') message += std::string(" (") + where + ")";
    return Corrupt("invalid JSON: " + message);
  };
  if (auto e = impl_->parser.iterate(data, size, capacity).get(doc)) return describe(e, "");
  ondemand::object object;
  if (auto e = doc.get_object().get(object)) {
    if (e == simdjson::INCORRECT_TYPE) {
      return Corrupt("not an event object: the line is not a JSON object");
    }
    return describe(e, "");
  }
  // "Event" comes first in everything Spark writes; find it wherever it is.
  std::string_view name;
  {
    ondemand::value event_value;
    if (auto e = object.find_field_unordered("Event").get(event_value)) {
      if (e == simdjson::NO_SUCH_FIELD) return Corrupt("not an event object: no \"Event\" key");
      return describe(e, "Event");
    }
    if (event_value.get_string().get(name) != simdjson::SUCCESS) {
      return Corrupt("not an event object: \"Event\" is not a string");
    }
  }
  // `name` points into the parser's string buffer, which later string reads reuse; copy it.
  std::string& event_name = info->event_name;
  event_name.assign(name);
  if (auto e = object.reset().error()) return describe(e, "");

  Impl& p = *impl_;
  p.doc = &doc;
  p.problem = nullptr;
  p.produced = nullptr;
  p.line_photon_plan = false;
  std::string_view n = event_name;
  std::string_view short_name = n;
  if (short_name.starts_with(kSqlPrefix)) short_name.remove_prefix(kSqlPrefix.size());
  error_code result = simdjson::SUCCESS;
  bool interpreted = true;
  if (n == "SparkListenerTaskEnd") {
    result = p.TaskEnd(object);
  } else if (n == "SparkListenerTaskStart") {
    result = p.TaskStart(object);
  } else if (n == "SparkListenerStageSubmitted") {
    result = p.StageSubmitted(object);
  } else if (n == "SparkListenerStageCompleted") {
    result = p.StageCompleted(object);
  } else if (n == "SparkListenerJobStart") {
    result = p.JobStart(object);
  } else if (n == "SparkListenerJobEnd") {
    result = p.JobEnd(object);
  } else if (n == "SparkListenerApplicationStart") {
    result = p.ApplicationStart(object);
  } else if (n == "SparkListenerApplicationEnd") {
    result = p.ApplicationEnd(object);
  } else if (n == "SparkListenerLogStart") {
    result = p.LogStart(object);
  } else if (n == "DBCEventLoggingListenerMetadata") {
    result = p.DatabricksMetadata(object);
  } else if (n == "SparkListenerEnvironmentUpdate") {
    result = p.EnvironmentUpdate(object);
  } else if (n == "SparkListenerResourceProfileAdded") {
    result = p.ResourceProfileAdded(object);
  } else if (n == "SparkListenerExecutorAdded") {
    result = p.ExecutorAdded(object);
  } else if (n == "SparkListenerExecutorRemoved") {
    result = p.ExecutorRemoved(object);
  } else if (n == "SparkListenerBlockManagerAdded") {
    result = p.BlockManager(object, true);
  } else if (n == "SparkListenerBlockManagerRemoved") {
    result = p.BlockManager(object, false);
  } else if (n == "SparkListenerStageExecutorMetrics") {
    result = p.StageExecutorMetrics(object);
  } else if (IsExclusionEvent(n)) {
    result = p.Exclusion(object, n);
  } else if (short_name != n && short_name == "SparkListenerSQLExecutionStart") {
    result = p.SqlExecutionStart(object);
  } else if (short_name != n && short_name == "SparkListenerSQLExecutionEnd") {
    result = p.SqlExecutionEnd(object);
  } else if (short_name != n && short_name == "SparkListenerSQLAdaptiveExecutionUpdate") {
    result = p.SqlAdaptiveUpdate(object);
  } else if (short_name != n && short_name == "SparkListenerDriverAccumUpdates") {
    result = p.SqlDriverAccumUpdates(object);
  } else if (n.starts_with(kStreamingPrefix) &&
             n.substr(kStreamingPrefix.size()) == "QueryProgressEvent") {
    result = p.StreamingQueryProgress(object);
  } else if (n.starts_with(kStreamingPrefix) &&
             n.substr(kStreamingPrefix.size()) == "QueryStartedEvent") {
    result = p.StreamingQueryStarted(object);
  } else if (n.starts_with(kStreamingPrefix) &&
             n.substr(kStreamingPrefix.size()) == "QueryIdleEvent") {
    result = p.StreamingQueryIdle(object);
  } else if (n.starts_with(kStreamingPrefix) &&
             n.substr(kStreamingPrefix.size()) == "QueryTerminatedEvent") {
    result = p.StreamingQueryTerminated(object);
  } else {
    interpreted = IsKnownIgnoredEvent(n);
    result = p.Other(object, n);
  }
  info->photon_plan = p.line_photon_plan;  // the flag stays set whatever the line's fate
  if (result == simdjson::TRAILING_CONTENT) {
    return Corrupt("trailing content after the JSON object");
  }
  if (result != simdjson::SUCCESS) {
    if (p.problem != nullptr) return Corrupt("invalid " + event_name + ": " + p.problem);
    return Corrupt("invalid " + event_name + ": " + simdjson::error_message(result));
  }
  info->interpreted = interpreted;
  if (p.produced == nullptr) return Internal("the line parsed but gave no event");
  BoundValues(*p.produced);
  info->event = p.produced;
  return Status::Ok();
}

}  // namespace sparkprof::eventlog
