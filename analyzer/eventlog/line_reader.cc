#include "analyzer/eventlog/line_reader.h"

#include <algorithm>
#include <cstring>

namespace sparkprof::eventlog {

LineReaderResult ReadLines(InputStream& stream, const LineReaderOptions& options,
                           const std::function<bool(const Line&)>& on_line) {
  LineReaderResult result;
  const size_t padding = options.padding_bytes;
  std::vector<char> buffer(std::max<size_t>(options.initial_buffer_bytes, 4096) + padding);
  size_t begin = 0;  // first unconsumed byte
  size_t end = 0;    // one past the last valid byte
  uint64_t offset_of_begin = 0;  // decoded stream offset of buffer[begin]

  // While skipping an oversized line we do not buffer it, only count it.
  bool skipping = false;
  OversizedLine skipped{};

  bool stopped = false;
  auto deliver = [&](size_t line_begin, size_t line_end, bool without_newline) {
    ++result.lines;
    size_t size = line_end - line_begin;
    if (size > 0 && buffer[line_begin + size - 1] == '\r') --size;
    bool blank = true;
    for (size_t i = 0; i < size; ++i) {
      char c = buffer[line_begin + i];
      if (c != ' ' && c != '\t' && c != '\r') {
        blank = false;
        break;
      }
    }
    if (blank) {
      ++result.blank_lines;
      return;
    }
    Line line{buffer.data() + line_begin,
              size,
              buffer.size() - line_begin,
              result.lines,
              offset_of_begin + (line_begin - begin),
              without_newline};
    if (!on_line(line)) stopped = true;
  };

  while (true) {
    // Consume every complete line in [begin, end).
    while (begin < end) {
      const char* newline =
          static_cast<const char*>(std::memchr(buffer.data() + begin, '\n', end - begin));
      if (newline == nullptr) break;
      size_t line_end = static_cast<size_t>(newline - buffer.data());
      size_t consumed = line_end + 1 - begin;
      if (skipping) {
        skipped.size_bytes += line_end - begin;
        ++result.lines;
        result.oversized.push_back(skipped);
        skipping = false;
      } else if (line_end - begin > options.max_line_bytes) {  // the buffer started larger
        ++result.lines;
        result.oversized.push_back({result.lines, offset_of_begin, line_end - begin});
      } else {
        deliver(begin, line_end, false);
      }
      begin += consumed;
      offset_of_begin += consumed;
      if (stopped) return result;
    }
    if (skipping) {  // drop the partial oversized line's bytes
      skipped.size_bytes += end - begin;
      offset_of_begin += end - begin;
      begin = end;
    }
    // Make room: move the partial line to the front, or grow, or start skipping.
    if (begin > 0) {
      std::memmove(buffer.data(), buffer.data() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    if (end == buffer.size() - padding) {
      // A line of max_line_bytes fits with its newline: room for max_line_bytes + 1 bytes.
      size_t capacity = buffer.size() - padding;
      if (capacity > options.max_line_bytes) {
        skipping = true;
        skipped = OversizedLine{result.lines + 1, offset_of_begin, end};
        offset_of_begin += end;
        end = 0;
      } else {
        buffer.resize(std::min(capacity * 2, options.max_line_bytes + 1) + padding);
      }
    }
    Result<size_t> got = stream.Read(buffer.data() + end, buffer.size() - padding - end);
    if (!got.ok()) {
      result.stream_status = got.status();
      break;  // a partial line at a corruption point is dropped with the error reported
    }
    if (*got == 0) {
      if (skipping) {
        skipped.size_bytes += end;
        ++result.lines;
        result.oversized.push_back(skipped);
      } else if (end - begin > options.max_line_bytes) {
        ++result.lines;
        result.oversized.push_back({result.lines, offset_of_begin, end - begin});
      } else if (end > begin) {
        std::memset(buffer.data() + end, 0, padding);
        deliver(begin, end, true);
        offset_of_begin += end - begin;
      }
      break;
    }
    std::memset(buffer.data() + end + *got, 0,
                std::min(padding, buffer.size() - end - *got));
    end += *got;
    result.bytes += *got;
  }
  return result;
}

}  // namespace sparkprof::eventlog
