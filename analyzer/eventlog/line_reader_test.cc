#include "analyzer/eventlog/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(LineReader, EmptyInput) {
  Collected c = Collect("");
  EXPECT_TRUE(c.lines.empty());
  EXPECT_EQ(c.result.lines, 0);
}

}  // namespace
}  // namespace sparkprof::eventlog
