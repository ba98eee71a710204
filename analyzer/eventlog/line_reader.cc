#include "analyzer/eventlog/line_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/read_ahead_stream.h"

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

// What handing one line on gave: whether it went to the consumer (not blank), and whether the
// consumer asked to stop.
struct HandedOn {
  bool line = false;
  bool stop = false;
};

// Counts the line [begin, begin + size) of `buffer` and hands it to `on_line` unless it is blank
// (spaces, tabs, '\r'); `size` loses a trailing '\r'. `at`: its first byte's stream offset.
HandedOn HandOn(LineReaderResult& result, const LineBuffer& buffer, size_t begin, size_t& size,
                uint64_t at, bool without_newline,
                const std::function<bool(const Line&)>& on_line) {
  ++result.lines;
  const char* bytes = buffer->data() + begin;
  if (size > 0 && bytes[size - 1] == '\r') --size;
  if (std::all_of(bytes, bytes + size, [](char c) { return c == ' ' || c == '\t' || c == '\r'; })) {
    ++result.blank_lines;
    return {};
  }
  Line line{bytes, size, buffer->size() - begin, &buffer, result.lines, at, without_newline};
  return {true, !on_line(line)};
}

// The lines of a read-ahead stream's chunks, in place: a line inside a chunk is handed on in
// the chunk's buffer (the consumer may keep it), a line across chunks is joined in a buffer of
// its own. No byte is copied but those of lines that cross a chunk's end.
LineReaderResult ReadChunkLines(ReadAheadStream& stream, const LineReaderOptions& options,
                                const std::function<bool(const Line&)>& on_line) {
  LineReaderResult result;
  const size_t padding = options.padding_bytes;
  uint64_t offset = 0;  // decoded stream offset of the next byte not yet in a line or `joined`
  // The start of a line the last chunk ended in (a partial line), unless it is being skipped.
  ReadBuffer joined;
  size_t joined_size = 0;
  uint64_t joined_offset = 0;
  bool partial = false;   // a line started in an earlier chunk and has not ended yet
  bool skipping = false;  // ... and is longer than the limit: counted, not kept
  OversizedLine skipped{};

  // Delivers [begin, begin + size) of `buffer` (a chunk's or `joined`'s); false: stop.
  auto deliver = [&](const LineBuffer& buffer, size_t begin, size_t size, uint64_t at,
                     bool without_newline) {
    return !HandOn(result, buffer, begin, size, at, without_newline, on_line).stop;
  };
  // Appends to `joined` (into a buffer no consumer holds: they may keep earlier joined lines).
  auto join = [&](const char* bytes, size_t size) {
    const size_t needed = joined_size + size + padding;
    if (joined.bytes == nullptr || !OnlyReaderHolds(joined) || joined.bytes->size() < needed) {
      ReadBuffer grown = NewBuffer(joined_size == 0 ? needed : needed + needed / 2);
      if (joined_size > 0) std::memcpy(grown.bytes->data(), joined.bytes->data(), joined_size);
      joined = std::move(grown);
    }
    std::memcpy(joined.bytes->data() + joined_size, bytes, size);
    joined_size += size;
  };
  // A partial line grew by `size` bytes: past the limit, it is counted and no longer kept.
  auto grow_partial = [&](const char* bytes, size_t size) {
    if (!skipping && joined_size + size > options.max_line_bytes) {
      skipping = true;
      skipped = OversizedLine{result.lines + 1, joined_offset, joined_size};
      joined_size = 0;
    }
    if (skipping) {
      skipped.size_bytes += size;
    } else {
      join(bytes, size);
    }
  };
  // The partial line ended: delivers it (or counts it as oversized); false: stop.
  auto end_partial = [&](bool without_newline) {
    partial = false;
    if (skipping) {
      skipping = false;
      ++result.lines;
      result.oversized.push_back(skipped);
      return true;
    }
    std::memset(joined.bytes->data() + joined_size, 0, padding);
    const size_t size = joined_size;
    joined_size = 0;
    return deliver(joined.shared, 0, size, joined_offset, without_newline);
  };

  while (true) {
    ReadAheadChunk chunk = stream.NextChunk();
    if (chunk.size == 0) {
      if (!chunk.status.ok()) {
        result.stream_status = chunk.status;  // a partial line at a corruption point is dropped
      } else if (partial && (skipping || joined_size > 0)) {
        end_partial(/*without_newline=*/true);
      }
      return result;
    }
    result.bytes += chunk.size;
    const char* data = chunk.bytes->data();
    size_t at = 0;  // first byte of `chunk` not yet consumed
    if (partial) {
      const char* newline = static_cast<const char*>(std::memchr(data, '\n', chunk.size));
      const size_t size = newline == nullptr ? chunk.size : static_cast<size_t>(newline - data);
      grow_partial(data, size);
      offset += size;
      if (newline == nullptr) continue;
      at = size + 1;
      ++offset;
      if (!end_partial(/*without_newline=*/false)) return result;
    }
    while (at < chunk.size) {
      const char* newline = static_cast<const char*>(std::memchr(data + at, '\n', chunk.size - at));
      if (newline == nullptr) break;
      const size_t size = static_cast<size_t>(newline - data) - at;
      if (size > options.max_line_bytes) {
        ++result.lines;
        result.oversized.push_back({result.lines, offset, size});
      } else if (!deliver(chunk.bytes, at, size, offset, false)) {
        return result;
      }
      at += size + 1;
      offset += size + 1;
    }
    if (at < chunk.size) {  // a line the next chunk goes on with
      partial = true;
      joined_offset = offset;
      grow_partial(data + at, chunk.size - at);
      offset += chunk.size - at;
    }
  }
}

}  // namespace

LineReaderResult ReadLines(InputStream& stream, const LineReaderOptions& options,
                           const std::function<bool(const Line&)>& on_line) {
  if (auto* ahead = dynamic_cast<ReadAheadStream*>(&stream);
      ahead != nullptr && options.padding_bytes <= kReadAheadPaddingBytes) {
    return ReadChunkLines(*ahead, options, on_line);
  }
  LineReaderResult result;
  const size_t padding = options.padding_bytes;
  const size_t initial_capacity = std::max<size_t>(options.initial_buffer_bytes, 4096);
  ReadBuffer buffer = NewBuffer(initial_capacity + padding);
  std::vector<ReadBuffer> retired;  // earlier buffers consumers held, reused once they let go
  size_t begin = 0;                 // first unconsumed byte
  size_t end = 0;                   // one past the last valid byte
  uint64_t offset_of_begin = 0;     // decoded stream offset of buffer[begin]
  size_t kept_end = 0;  // what a consumer may hold of `buffer` (lines and padding) ends here

  // While skipping an oversized line we do not buffer it, only count it.
  bool skipping = false;
  OversizedLine skipped{};

  bool stopped = false;
  auto deliver = [&](size_t line_begin, size_t line_end, bool without_newline) {
    size_t size = line_end - line_begin;
    const HandedOn handed =
        HandOn(result, buffer.shared, line_begin, size, offset_of_begin + (line_begin - begin),
               without_newline, on_line);
    if (handed.line) kept_end = line_begin + size + padding;
    if (handed.stop) stopped = true;
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
