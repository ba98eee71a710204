// Reads one application's event log (all its parts, any codec) into an EventSink and reports
// what it read: files, codecs, byte and line counts, every bad line with its location, stream
// errors (corrupt or truncated compressed data), and events it does not interpret.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "analyzer/codec/codec.h"
#include "analyzer/eventlog/event_parser.h"
#include "analyzer/eventlog/line_reader.h"
#include "analyzer/source/log_source.h"

namespace sparkprof::eventlog {

struct BadLine {
  std::string file;
  int64_t line = 0;
  uint64_t byte_offset = 0;  // in the decoded stream of that file
  std::string error;
};

struct FileReadReport {
  std::string file;
  std::string codec;  // FormatName
  uint64_t compressed_bytes = 0;
  uint64_t decoded_bytes = 0;
  int64_t lines = 0;
  int64_t events = 0;  // lines parsed into events
  std::string error;   // stream-level problem (corrupt block, truncation, not an event log)
  // Not read at all, `error` says why (a zip compressed with a log codec): the report names
  // it with what the source left unread (input.not_read), not only among the files read.
  bool not_read = false;
};

struct ReadReport {
  std::vector<FileReadReport> files;
  int64_t lines = 0;
  int64_t events = 0;
  int64_t bad_line_count = 0;
  std::vector<BadLine> bad_lines;  // the first ReaderOptions::max_bad_lines_kept of them
  std::map<std::string, int64_t, std::less<>> event_counts;
  std::map<std::string, int64_t, std::less<>> unknown_events;
  // True when at least one event was read; false means "nothing analysable" (exit code 2).
  bool analysable() const { return events > 0; }
};

// Decompression bombs: a few MB of zstd or lz4 can expand to terabytes of JSON that would keep
// the analyzer busy for hours. Real event logs compress 20x to 40x (NDS q72: 39x).
inline constexpr uint64_t kDefaultMaxDecodedBytes = 64ull << 30;  // per application, all parts
inline constexpr uint64_t kDefaultMaxExpansionRatio = 1000;       // decoded / compressed bytes
// The ratio is checked once a part has decoded this much: tiny files may expand a lot.
inline constexpr uint64_t kExpansionCheckAfterBytes = 64ull << 20;

struct ReaderOptions {
  LineReaderOptions lines;
  // Decoded bytes of all parts of one application together; past it the reading stops with a
  // TooLarge problem naming the part, and what was read before is analysed.
  uint64_t max_decoded_bytes = kDefaultMaxDecodedBytes;
  // Decoded bytes of one part over its compressed size (on disk or in the archive); 0: no limit.
  // Checked once the part has decoded expansion_check_after_bytes.
  uint64_t max_expansion_ratio = kDefaultMaxExpansionRatio;
  uint64_t expansion_check_after_bytes = kExpansionCheckAfterBytes;
  ParserLimits parser;
  codec::DecoderLimits decoder;
  size_t max_bad_lines_kept = 1000;
  // 1: decode and parse in the calling thread; otherwise (0: when more than one CPU is
  // available) each compressed part is decoded on a thread of its own, ahead of the parsing (a
  // plain file on disk is read by the calling thread), and its lines are parsed on this many
  // threads, the calling one included (0: one per CPU), and delivered in log order
  // (ParallelLineParser). The events, their order and every report are the same either way.
  int threads = 0;
  // Lines of garbage before the first event after which a file is declared "not an event log"
  // and skipped (a zip of images, a binary file).
  int64_t max_leading_bad_lines = 50;
  // Called for each problem as it is found (the CLI prints these to stderr). `per_line` is
  // true for a bad line (there may be many) and false for a problem with a whole file.
  std::function<void(const std::string& message, bool per_line)> on_problem;
};

ReadReport ReadApplicationLog(const source::ApplicationLog& log, EventSink& sink,
                              const ReaderOptions& options = {});

// One stream (already opened), for tests, fuzzers and the live feed's replay.
void ReadEventStream(InputStream& stream, const std::string& display_name, EventParser& parser,
                     const ReaderOptions& options, ReadReport& report, FileReadReport& file);

}  // namespace sparkprof::eventlog
