// Splits a decoded byte stream into lines, keeping the JSON parser's read-ahead padding after
// every line and bounding memory: a line longer than the limit is skipped (and reported), not
// buffered. A consumer may keep a line's buffer to parse the line later (on another thread)
// instead of copying it: the reader then reads on into another buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/input_stream.h"

namespace sparkprof::eventlog {

struct LineReaderOptions {
  size_t initial_buffer_bytes = 1 << 20;
  size_t max_line_bytes = 256u << 20;  // Spark plans can make multi-MB lines; GB lines are hostile
  size_t padding_bytes = 64;           // readable bytes required after each line's end
};

// The bytes some lines point into. While a consumer holds a reference (taken in on_line), the
// reader writes nothing into [line.data, line.data + line.size + padding_bytes) of those lines;
// it reads on into another buffer (one nobody else holds any more, or a new one).
using LineBuffer = std::shared_ptr<const std::vector<char>>;

struct Line {
  const char* data;
  size_t size;                // without the newline (and without a trailing '\r')
  size_t capacity;            // readable bytes from data (>= size + padding; kept: size + padding)
  const LineBuffer* buffer;   // holds `data`
  int64_t number;             // 1-based
  uint64_t byte_offset;       // of the line's first byte in the decoded stream
  bool last_without_newline;  // the stream ended inside this line (maybe cut mid-write)
};

struct OversizedLine {
  int64_t number;
  uint64_t byte_offset;
  uint64_t size_bytes;  // how long it was (counted while skipping)
};

struct LineReaderResult {
  int64_t lines = 0;  // all lines, including blank and oversized ones
  int64_t blank_lines = 0;
  uint64_t bytes = 0;  // decoded bytes consumed
  std::vector<OversizedLine> oversized;
  Status stream_status;  // not ok when the stream reported corruption / truncation
};

// Calls `on_line` for every non-blank line until it returns false; returns what it saw.
LineReaderResult ReadLines(InputStream& stream, const LineReaderOptions& options,
                           const std::function<bool(const Line&)>& on_line);

}  // namespace sparkprof::eventlog
