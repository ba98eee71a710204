#include "analyzer/eventlog/event_log_reader.h"

#include <algorithm>

#include "analyzer/eventlog/parallel_line_parser.h"
#include "analyzer/source/log_names.h"
#include "analyzer/source/zip_archive.h"
#include "common/parallel.h"
#include "common/read_ahead_stream.h"

namespace sparkprof::eventlog {

namespace {

void Problem(const ReaderOptions& options, const std::string& message, bool per_line = false) {
  if (options.on_problem) options.on_problem(message, per_line);
}

// Counts the decoded bytes of one part and stops (TooLarge) past the application's budget or
// the part's expansion ratio. Serves every byte up to the limit, then the error.
class DecodedBudgetStream final : public InputStream {
 public:
  DecodedBudgetStream(InputStream& decoded, uint64_t compressed_bytes, const ReaderOptions& options,
                      uint64_t* decoded_so_far)
      : decoded_(decoded),
        compressed_bytes_(compressed_bytes),
        options_(options),
        decoded_so_far_(decoded_so_far) {}

  Result<size_t> Read(char* buffer, size_t size) override {
    if (!error_.ok()) return error_;
    uint64_t left =
        options_.max_decoded_bytes - std::min(*decoded_so_far_, options_.max_decoded_bytes);
    uint64_t ratio_left = UINT64_MAX;
    if (options_.max_expansion_ratio > 0 && compressed_bytes_ > 0) {
      uint64_t allowed = compressed_bytes_ > UINT64_MAX / options_.max_expansion_ratio
                             ? UINT64_MAX
                             : compressed_bytes_ * options_.max_expansion_ratio;
      allowed = std::max(allowed, options_.expansion_check_after_bytes);
      ratio_left = allowed - std::min(part_bytes_, allowed);
    }
    // One byte past either limit tells "exactly at the limit" from "more than the limit".
    const uint64_t budget = std::min(left, ratio_left);
    const uint64_t want = budget >= size ? size : budget + 1;
    Result<size_t> got = decoded_.Read(buffer, static_cast<size_t>(want));
    if (!got.ok() || *got == 0) return got;
    size_t served = *got;
    if (served > left) {
      error_ = TooLarge("decompressed more than " + std::to_string(options_.max_decoded_bytes) +
                        " bytes for this application (--max-decompressed-bytes); stopped at "
                        "compressed byte " +
                        std::to_string(decoded_.input_offset()));
      served = static_cast<size_t>(left);
    } else if (served > ratio_left) {
      error_ = TooLarge("expands more than " + std::to_string(options_.max_expansion_ratio) +
                        "x its compressed size of " + std::to_string(compressed_bytes_) +
                        " bytes, like a decompression bomb (--max-expansion-ratio); stopped at " +
                        "compressed byte " + std::to_string(decoded_.input_offset()));
      served = static_cast<size_t>(ratio_left);
    }
    part_bytes_ += served;
    *decoded_so_far_ += served;
    if (served == 0) return error_;
    return served;
  }
  uint64_t input_offset() const override { return decoded_.input_offset(); }

 private:
  InputStream& decoded_;
  uint64_t compressed_bytes_;
  const ReaderOptions& options_;
  uint64_t* decoded_so_far_;
  uint64_t part_bytes_ = 0;
  Status error_;
};

// A zip compressed with a log codec but named like a log ("x.gz", not "x.zip.gz") reaches the
// reader: discovery looks into a compressed file only when its name has ".zip" among its
// extensions, so that a folder left unchanged costs a listing, not a read of every file. Its
// decoded start names it: why it is not read, "" otherwise. `decoded` is handed back whole.
std::string CompressedArchiveWhy(codec::DecodedStream& decoded, const std::string& display_name) {
  if (decoded.format == codec::Format::kPlain) return "";  // a plain zip is found by discovery
  Result<std::string> head = ReadHead(*decoded.stream, 4);
  if (head.ok() && source::StartsWithZipSignature(*head)) {
    return std::string("a zip archive compressed as ") + codec::FormatName(decoded.format) +
           ", not an event log: rename it " +
           source::CompressedArchiveName(display_name, codec::FormatExtension(decoded.format)) +
           " (a compressed file is searched for logs only when .zip is among its extensions) "
           "or unpack it";
  }
  // A read error comes back on the next read: decoders repeat it.
  decoded.stream = MakePrefixedInputStream(head.ok() ? std::move(*head) : std::string(),
                                           std::move(decoded.stream));
  return "";
}

}  // namespace

void ReadEventStream(InputStream& stream, const std::string& display_name, EventParser& parser,
                     const ReaderOptions& options, ReadReport& report, FileReadReport& file) {
  int64_t leading_bad_lines = 0;
  bool gave_up = false;

  // A line's outcome, in log order; false: the file is not an event log, stop reading it.
  auto on_parsed = [&](int64_t number, uint64_t byte_offset, bool last_without_newline,
                       const Status& status) {
    if (status.ok()) {
      ++file.events;
      return true;
    }
    ++report.bad_line_count;
    std::string error = status.message();
    if (last_without_newline) {
      error += " (last line, cut short: the log was probably still being written)";
    }
    if (report.bad_lines.size() < options.max_bad_lines_kept) {
      report.bad_lines.push_back({display_name, number, byte_offset, error});
    }
    Problem(options,
            display_name + ":" + std::to_string(number) + " (byte " + std::to_string(byte_offset) +
                "): " + error,
            /*per_line=*/true);
    if (file.events == 0 && ++leading_bad_lines >= options.max_leading_bad_lines) {
      gave_up = true;
      return false;
    }
    return true;
  };
  // Lines are parsed here until the file shows its first event (so a file that is not an event
  // log is given up at the same line), then on all cores, delivered in order.
  const int threads = ThreadsOrAvailable(options.threads);
  std::unique_ptr<ParallelLineParser> parallel;
  LineReaderOptions line_options = options.lines;
  if (threads > 1) {
    // Batches hold the reader's buffers until their lines are delivered: smaller ones, less held.
    line_options.initial_buffer_bytes =
        std::min(line_options.initial_buffer_bytes, kParallelReadBufferBytes);
  }
  LineReaderResult lines = ReadLines(stream, line_options, [&](const Line& line) {
    if (parallel) {
      parallel->Add(line);
      return true;
    }
    const bool keep_reading = on_parsed(line.number, line.byte_offset, line.last_without_newline,
                                        parser.ParseLine(line.data, line.size, line.capacity));
    if (file.events > 0 && threads > 1) {
      parallel = std::make_unique<ParallelLineParser>(
          parser, parser.sink(), options.parser, threads,
          [&](const ParallelLineParser::Position& at, const Status& status) {
            on_parsed(at.number, at.byte_offset, at.last_without_newline, status);
          },
          dynamic_cast<ReadAheadStream*>(&stream));
    }
    return keep_reading;
  });
  if (parallel) parallel->Finish();
  file.lines += lines.lines;
  file.decoded_bytes += lines.bytes;
  file.compressed_bytes = std::max(file.compressed_bytes, stream.input_offset());
  report.lines += lines.lines;
  report.events += file.events;
  for (const OversizedLine& oversized : lines.oversized) {
    ++report.bad_line_count;
    std::string error = "line of " + std::to_string(oversized.size_bytes) +
                        " bytes exceeds the limit of " +
                        std::to_string(options.lines.max_line_bytes) + " bytes; skipped";
    if (report.bad_lines.size() < options.max_bad_lines_kept) {
      report.bad_lines.push_back({display_name, oversized.number, oversized.byte_offset, error});
    }
    Problem(options,
            display_name + ":" + std::to_string(oversized.number) + " (byte " +
                std::to_string(oversized.byte_offset) + "): " + error,
            /*per_line=*/true);
  }
  if (gave_up) {
    file.error = "not a Spark event log: the first " + std::to_string(leading_bad_lines) +
                 " lines are not event JSON; skipped the rest of the file";
    Problem(options, display_name + ": " + file.error);
  } else if (!lines.stream_status.ok()) {
    file.error = lines.stream_status.message() + "; analysed the " + std::to_string(file.events) +
                 " events before it";
    Problem(options, display_name + ": " + file.error);
  }
}

ReadReport ReadApplicationLog(const source::ApplicationLog& log, EventSink& sink,
                              const ReaderOptions& options) {
  ReadReport report;
  EventParser parser(sink, options.parser);
  uint64_t decoded_bytes = 0;
  const bool read_ahead = ThreadsOrAvailable(options.threads) > 1;
  for (const source::LogPart& part : log.parts) {
    FileReadReport& file = report.files.emplace_back();
    file.file = part.display_name;
    file.compressed_bytes = part.size_bytes;
    Result<std::unique_ptr<InputStream>> raw = part.open();
    if (!raw.ok()) {
      file.error = raw.status().message();
      Problem(options, part.display_name + ": " + file.error);
      continue;
    }
    Result<codec::DecodedStream> decoded =
        codec::OpenDecoded(std::move(raw).value(), part.display_name, options.decoder);
    if (!decoded.ok()) {
      file.error = decoded.status().message();
      Problem(options, part.display_name + ": " + file.error);
      continue;
    }
    file.codec = codec::FormatName(decoded->format);
    if (std::string why = CompressedArchiveWhy(*decoded, part.display_name); !why.empty()) {
      file.error = std::move(why);
      file.not_read = true;
      Problem(options, part.display_name + ": " + file.error);
      continue;
    }
    DecodedBudgetStream budget(*decoded->stream, part.size_bytes, options, &decoded_bytes);
    // A plain file on disk is read here, one copy per buffer: cheaper than a thread's hand-over.
    const bool plain_disk_file =
        decoded->format == codec::Format::kPlain && log.archive.empty() && !part.disk_file.empty();
    if (read_ahead && !plain_disk_file) {
      // Decoding (and the budget's count) runs ahead on its own thread while this one parses,
      // each on a CPU of its own.
      std::unique_ptr<InputStream> ahead = MakeReadAheadStream(
          budget, kReadAheadBufferBytes, kReadAheadBuffers, /*apart_from_caller=*/true);
      ReadEventStream(*ahead, part.display_name, parser, options, report, file);
    } else {
      ReadEventStream(budget, part.display_name, parser, options, report, file);
    }
  }
  report.event_counts = parser.event_counts();
  report.unknown_events = parser.unknown_events();
  return report;
}

}  // namespace sparkprof::eventlog
