#include "analyzer/eventlog/line_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/read_ahead_stream.h"

namespace sparkprof::eventlog {
namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<int64_t> numbers;
  std::vector<uint64_t> offsets;
  LineReaderResult result;
};

Collected Collect(std::string text, LineReaderOptions options = {}) {
  Collected c;
  auto stream = MakeMemoryInputStream(std::move(text));
  c.result = ReadLines(*stream, options, [&](const Line& line) {
    EXPECT_GE(line.capacity, line.size + options.padding_bytes);
    c.lines.emplace_back(line.data, line.size);
    c.numbers.push_back(line.number);
    c.offsets.push_back(line.byte_offset);
    return true;
  });
  return c;
}

TEST(LineReader, SplitsLinesAndTracksNumbersAndOffsets) {
  Collected c = Collect("{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}");
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[0], "{\"a\":1}");
  EXPECT_EQ(c.lines[1], "{\"b\":2}");  // '\r' stripped
  EXPECT_EQ(c.lines[2], "{\"c\":3}");  // last line without newline still delivered
  EXPECT_EQ(c.numbers, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(c.offsets, (std::vector<uint64_t>{0, 9, 18}));
  EXPECT_EQ(c.result.lines, 4);
  EXPECT_EQ(c.result.blank_lines, 1);
}

TEST(LineReader, GrowsForLongLinesAcrossReads) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 16;
  std::string long_line(100000, 'x');
  Collected c = Collect("short\n" + long_line + "\nend\n", options);
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[1].size(), long_line.size());
  EXPECT_EQ(c.lines[2], "end");
  EXPECT_EQ(c.offsets[2], 6 + long_line.size() + 1);
}

TEST(LineReader, SkipsOversizedLineWithoutBufferingIt) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 4096;
  options.max_line_bytes = 8192;
  std::string huge(1 << 20, 'y');
  Collected c = Collect("first\n" + huge + "\nlast\n", options);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0], "first");
  EXPECT_EQ(c.lines[1], "last");
  ASSERT_EQ(c.result.oversized.size(), 1u);
  EXPECT_EQ(c.result.oversized[0].number, 2);
  EXPECT_EQ(c.result.oversized[0].byte_offset, 6u);
  EXPECT_EQ(c.result.oversized[0].size_bytes, huge.size());
  EXPECT_EQ(c.numbers[1], 3);
  EXPECT_EQ(c.offsets[1], 6 + huge.size() + 1);
}

TEST(LineReader, OversizedLastLineWithoutNewline) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 4096;
  options.max_line_bytes = 8192;
  Collected c = Collect("ok\n" + std::string(50000, 'z'), options);
  ASSERT_EQ(c.lines.size(), 1u);
  ASSERT_EQ(c.result.oversized.size(), 1u);
  EXPECT_EQ(c.result.oversized[0].size_bytes, 50000u);
}

// max_line_bytes is the longest line delivered, newline not counted (docs/limits.md).
TEST(LineReader, LineAtTheLimitIsReadOneByteLongerIsSkipped) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 4096;
  options.max_line_bytes = 8192;
  for (size_t initial : {size_t{4096}, size_t{8192}, size_t{16384}}) {
    options.initial_buffer_bytes = initial;
    Collected at = Collect("a\n" + std::string(8192, 'x') + "\nb\n", options);
    ASSERT_EQ(at.lines.size(), 3u) << initial;
    EXPECT_EQ(at.lines[1].size(), 8192u);
    EXPECT_TRUE(at.result.oversized.empty());
    Collected at_end = Collect("a\n" + std::string(8192, 'x'), options);  // no newline
    ASSERT_EQ(at_end.lines.size(), 2u) << initial;
    EXPECT_TRUE(at_end.result.oversized.empty());
    Collected past = Collect("a\n" + std::string(8193, 'x') + "\nb\n", options);
    ASSERT_EQ(past.lines.size(), 2u) << initial;
    ASSERT_EQ(past.result.oversized.size(), 1u);
    EXPECT_EQ(past.result.oversized[0].size_bytes, 8193u);
    EXPECT_EQ(past.lines[1], "b");
  }
}

// A consumer that keeps the last `hold` lines' buffers (as ParallelLineParser's batches do) sees
// the same lines, and each kept line's bytes and padding stay unchanged until it lets go.
// `chunk_bytes` > 0: the text comes through a read-ahead stream of chunks that size, whose
// buffers the reader hands on in place.
Collected CollectKeeping(const std::string& text, LineReaderOptions options, size_t hold,
                         size_t chunk_bytes = 0) {
  struct Kept {
    LineBuffer buffer;
    const char* data;
    std::string bytes;  // the line and its padding when it was delivered
  };
  std::deque<Kept> kept;
  auto check = [&](const Kept& line) {
    EXPECT_EQ(std::string(line.data, line.bytes.size()), line.bytes);
  };
  Collected c;
  std::unique_ptr<InputStream> memory = MakeMemoryInputStream(text);
  std::unique_ptr<InputStream> ahead;
  if (chunk_bytes > 0) ahead = MakeReadAheadStream(*memory, chunk_bytes, 3);
  InputStream& stream = chunk_bytes > 0 ? *ahead : *memory;
  c.result = ReadLines(stream, options, [&](const Line& line) {
    EXPECT_NE(line.buffer, nullptr);
    EXPECT_GE(line.capacity, line.size + options.padding_bytes);
    c.lines.emplace_back(line.data, line.size);
    c.numbers.push_back(line.number);
    c.offsets.push_back(line.byte_offset);
    kept.push_back(
        {*line.buffer, line.data, std::string(line.data, line.size + options.padding_bytes)});
    if (kept.size() > hold) {
      check(kept.front());
      kept.pop_front();
    }
    return true;
  });
  for (const Kept& line : kept) check(line);
  return c;
}

// Everything a reader's caller sees, as text.
std::string Summary(const Collected& c) {
  std::string text;
  for (size_t i = 0; i < c.lines.size(); ++i) {
    text +=
        std::to_string(c.numbers[i]) + "@" + std::to_string(c.offsets[i]) + " " + c.lines[i] + "\n";
  }
  for (const OversizedLine& line : c.result.oversized) {
    text += "oversized " + std::to_string(line.number) + "@" + std::to_string(line.byte_offset) +
            " " + std::to_string(line.size_bytes) + "\n";
  }
  return text + std::to_string(c.result.lines) + " lines, " + std::to_string(c.result.blank_lines) +
         " blank, " + std::to_string(c.result.bytes) + " bytes";
}

TEST(LineReader, KeptBuffersAreNotWrittenAndGiveTheSameLines) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 4096;
  options.max_line_bytes = 20000;
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += std::string(static_cast<size_t>(i * 37 % 900), 'a' + static_cast<char>(i % 26));
    text += i % 7 == 0 ? "\r\n" : "\n";
    if (i == 50) text += std::string(9000, 'L') + "\n";    // longer than the buffer
    if (i == 90) text += std::string(20000, 'M') + "\n";   // at the limit
    if (i == 120) text += std::string(20001, 'O') + "\n";  // one byte past: skipped
    if (i == 150) text += "x\n   \n\n";                    // short and blank lines
  }
  for (const std::string& ending :
       {std::string(), std::string("last"), std::string(20000, 'E'), std::string(30000, 'F')}) {
    SCOPED_TRACE(ending.size());
    const std::string input = text + ending;  // a last line without newline (or none)
    const Collected plain = Collect(input, options);
    EXPECT_EQ(plain.result.oversized.size(), ending.size() > 20000 ? 2u : 1u);
    for (size_t hold : {size_t{1}, size_t{5}, size_t{40}, size_t{100000}}) {
      SCOPED_TRACE(hold);
      EXPECT_EQ(Summary(CollectKeeping(input, options, hold)), Summary(plain));
    }
  }
}

// Issue 15: a read-ahead stream's buffers are split in place (lines across their ends joined):
// the same lines, numbers, offsets, oversized lines and counts as from a copying read, whatever
// the chunk size (1 byte to larger than the input), and kept lines stay unchanged.
TEST(LineReader, ReadAheadChunksGiveTheSameLinesInPlace) {
  LineReaderOptions options;
  options.initial_buffer_bytes = 4096;
  options.max_line_bytes = 2000;
  std::string text = "\n\nfirst\r\n \t \n";
  for (int i = 0; i < 120; ++i) {
    text += std::string(static_cast<size_t>(i * 53 % 700), 'a' + static_cast<char>(i % 26));
    text += i % 5 == 0 ? "\r\n" : "\n";
    if (i == 30) text += std::string(2000, 'M') + "\n";  // at the limit
    if (i == 60) text += std::string(2001, 'O') + "\n";  // one byte past: skipped
    if (i == 61) text += std::string(5000, 'P') + "\r\n";
    if (i == 90) text += "\n\r\n\n";
  }
  for (const std::string& ending : {std::string(), std::string("last"), std::string("  "),
                                    std::string(2000, 'E'), std::string(2500, 'F')}) {
    SCOPED_TRACE(ending.size());
    const std::string input = text + ending;
    const std::string expected = Summary(Collect(input, options));
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{100}, size_t{1999}, size_t{2001},
                         size_t{4096}, size_t{1} << 20}) {
      for (size_t hold : {size_t{1}, size_t{30}, size_t{100000}}) {
        // A thread hand-off per byte is slow: once.
        if (chunk == 1 && (hold != 30 || !ending.empty())) continue;
        SCOPED_TRACE(std::to_string(chunk) + " byte chunks, holding " + std::to_string(hold));
        EXPECT_EQ(Summary(CollectKeeping(input, options, hold, chunk)), expected);
      }
    }
  }
}

// A stream error after some chunks: the lines before it, then the error; the partial line at the
// error is dropped (as from a copying read).
TEST(LineReader, ReadAheadChunksStopAtTheStreamError) {
  class Failing final : public InputStream {
   public:
    Result<size_t> Read(char* buffer, size_t size) override {
      if (served_ == text_.size()) return Corrupt("bad block at byte 9");
      const size_t n = std::min(size, text_.size() - served_);
      text_.copy(buffer, n, served_);
      served_ += n;
      return n;
    }
    uint64_t input_offset() const override { return served_; }

   private:
    std::string text_ = "one\ntwo\nthr";
    size_t served_ = 0;
  };
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}}) {
    Failing inner;
    std::unique_ptr<ReadAheadStream> ahead = MakeReadAheadStream(inner, chunk, 2);
    std::vector<std::string> lines;
    LineReaderResult result = ReadLines(*ahead, {}, [&](const Line& line) {
      lines.emplace_back(line.data, line.size);
      return true;
    });
    EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
    EXPECT_FALSE(result.stream_status.ok());
    EXPECT_NE(result.stream_status.message().find("bad block"), std::string::npos);
  }
}

TEST(LineReader, EmptyInput) {
  Collected c = Collect("");
  EXPECT_TRUE(c.lines.empty());
  EXPECT_EQ(c.result.lines, 0);
}

}  // namespace
}  // namespace sparkprof::eventlog
