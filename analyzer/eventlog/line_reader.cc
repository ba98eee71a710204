#include "analyzer/eventlog/line_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace sparkprof::eventlog {

namespace {

// A buffer the reader reads into: `bytes` is the vector `shared` holds (only the reader writes).
struct ReadBuffer {
  LineBuffer shared;
  std::vector<char>* bytes = nullptr;
};

ReadBuffer NewBuffer(size_t size) {
  auto bytes = std::make_shared<std::vector<char>>(size);
  std::vector<char>* writable = bytes.get();
  return {std::move(bytes), writable};
}

// False while a consumer holds the buffer (it may read its lines on another thread).
bool OnlyReaderHolds(const ReadBuffer& buffer) {
  if (buffer.shared.use_count() > 1) return false;
  // The consumer let go with a release: its reads of the bytes happen before our next writes.
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

}  // namespace

LineReaderResult ReadLines(InputStream& stream, const LineReaderOptions& options,
                           const std::function<bool(const Line&)>& on_line) {
  LineReaderResult result;
  const size_t padding = options.padding_bytes;
  const size_t initial_capacity = std::max<size_t>(options.initial_buffer_bytes, 4096);
  ReadBuffer buffer = NewBuffer(initial_capacity + padding);
  std::vector<ReadBuffer> retired;  // earlier buffers consumers held, reused once they let go
  size_t begin = 0;  // first unconsumed byte
  size_t end = 0;    // one past the last valid byte
  uint64_t offset_of_begin = 0;  // decoded stream offset of buffer[begin]
  size_t kept_end = 0;  // what a consumer may hold of `buffer` (lines and padding) ends here

  // While skipping an oversized line we do not buffer it, only count it.
  bool skipping = false;
  OversizedLine skipped{};

  bool stopped = false;
  auto deliver = [&](size_t line_begin, size_t line_end, bool without_newline) {
    ++result.lines;
    const char* bytes = buffer.bytes->data();
    size_t size = line_end - line_begin;
    if (size > 0 && bytes[line_begin + size - 1] == '\r') --size;
    bool blank = true;
    for (size_t i = 0; i < size; ++i) {
      char c = bytes[line_begin + i];
      if (c != ' ' && c != '\t' && c != '\r') {
        blank = false;
        break;
      }
    }
    if (blank) {
      ++result.blank_lines;
      return;
    }
    Line line{bytes + line_begin,
              size,
              buffer.bytes->size() - line_begin,
              &buffer.shared,
              result.lines,
              offset_of_begin + (line_begin - begin),
              without_newline};
    kept_end = line_begin + size + padding;
    if (!on_line(line)) stopped = true;
  };
  // Reads on into a buffer of at least `capacity` (+ padding) that no consumer holds, with the
  // partial line [begin, end) moved to its front; `buffer` stays with whoever holds it.
  auto switch_buffer = [&](size_t capacity) {
    ReadBuffer next;  // the smallest free buffer large enough
    for (ReadBuffer& spare : retired) {
      const size_t size = spare.bytes->size();
      if (size >= capacity + padding && (next.bytes == nullptr || size < next.bytes->size()) &&
          OnlyReaderHolds(spare)) {
        std::swap(next, spare);
      }
    }
    if (next.bytes == nullptr) next = NewBuffer(capacity + padding);
    std::memcpy(next.bytes->data(), buffer.bytes->data() + begin, end - begin);
    end -= begin;
    begin = 0;
    kept_end = 0;
    retired.push_back(std::move(buffer));
    buffer = std::move(next);
    // A buffer grown for a long line goes back to the allocator once nobody holds it.
    std::erase_if(retired, [&](const ReadBuffer& spare) {
      return spare.bytes == nullptr ||
             (spare.bytes->size() > initial_capacity + padding && OnlyReaderHolds(spare));
    });
  };

  while (true) {
    // Consume every complete line in [begin, end).
    while (begin < end) {
      const char* newline =
          static_cast<const char*>(std::memchr(buffer.bytes->data() + begin, '\n', end - begin));
      if (newline == nullptr) break;
      size_t line_end = static_cast<size_t>(newline - buffer.bytes->data());
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
    const size_t capacity = buffer.bytes->size() - padding;
    if (OnlyReaderHolds(buffer) && capacity > initial_capacity && end - begin < initial_capacity) {
      switch_buffer(initial_capacity);  // the long line it grew for is consumed
    } else if (OnlyReaderHolds(buffer)) {
      kept_end = 0;
      if (begin > 0) {
        std::memmove(buffer.bytes->data(), buffer.bytes->data() + begin, end - begin);
        end -= begin;
        begin = 0;
      }
      if (end == capacity) {
        // A line of max_line_bytes fits with its newline: room for max_line_bytes + 1 bytes.
        if (capacity > options.max_line_bytes) {
          skipping = true;
          skipped = OversizedLine{result.lines + 1, offset_of_begin, end};
          offset_of_begin += end;
          end = 0;
        } else {
          buffer.bytes->resize(std::min(capacity * 2, options.max_line_bytes + 1) + padding);
        }
      }
    } else if (end == capacity || end < kept_end) {
      // A consumer holds lines of this buffer: nothing it may read is written; read on into
      // another buffer, as large as the partial line needs (the same growth and limit).
      const size_t partial = end - begin;
      if (partial == capacity && capacity > options.max_line_bytes) {
        skipping = true;
        skipped = OversizedLine{result.lines + 1, offset_of_begin, partial};
        offset_of_begin += partial;
        begin = end;
      }
      size_t next_capacity = initial_capacity;
      while (next_capacity <= end - begin && next_capacity <= options.max_line_bytes) {
        next_capacity = std::min(next_capacity * 2, options.max_line_bytes + 1);
      }
      switch_buffer(std::max(next_capacity, end - begin + 1));
    }
    char* bytes = buffer.bytes->data();
    const size_t room = buffer.bytes->size() - padding - end;
    Result<size_t> got = stream.Read(bytes + end, room);
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
        std::memset(bytes + end, 0, padding);
        deliver(begin, end, true);
        offset_of_begin += end - begin;
      }
      break;
    }
    std::memset(bytes + end + *got, 0, std::min(padding, room + padding - *got));
    end += *got;
    result.bytes += *got;
  }
  return result;
}

}  // namespace sparkprof::eventlog
