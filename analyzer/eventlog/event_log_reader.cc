#include "analyzer/eventlog/event_log_reader.h"

namespace sparkprof::eventlog {

namespace {

void Problem(const ReaderOptions& options, const std::string& message, bool per_line = false) {
  if (options.on_problem) options.on_problem(message, per_line);
}

}  // namespace

void ReadEventStream(InputStream& stream, const std::string& display_name, EventParser& parser,
                     const ReaderOptions& options, ReadReport& report, FileReadReport& file) {
  int64_t leading_bad_lines = 0;
  bool gave_up = false;

  LineReaderResult lines = ReadLines(stream, options.lines, [&](const Line& line) {
      Status status = parser.ParseLine(line.data, line.size, line.capacity);
      if (status.ok()) {
        ++file.events;
        return true;
      }
      ++report.bad_line_count;
      std::string error = status.message();
      if (line.last_without_newline) {
        error += " (last line, cut short: the log was probably still being written)";
      }
      if (report.bad_lines.size() < options.max_bad_lines_kept) {
        report.bad_lines.push_back({display_name, line.number, line.byte_offset, error});
      }
      Problem(options, display_name + ":" + std::to_string(line.number) + " (byte " +
                           std::to_string(line.byte_offset) + "): " + error,
              /*per_line=*/true);
      if (file.events == 0 && ++leading_bad_lines >= options.max_leading_bad_lines) {
        gave_up = true;
        return false;
      }
      return true;
    });
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
    Problem(options, display_name + ":" + std::to_string(oversized.number) + " (byte " +
                         std::to_string(oversized.byte_offset) + "): " + error,
            /*per_line=*/true);
  }
  if (gave_up) {
    file.error = "not a Spark event log: the first " + std::to_string(leading_bad_lines) +
                 " lines are not event JSON; skipped the rest of the file";
    Problem(options, display_name + ": " + file.error);
  } else if (!lines.stream_status.ok()) {
    file.error = lines.stream_status.message() + "; analysed the " +
                 std::to_string(file.events) + " events before it";
    Problem(options, display_name + ": " + file.error);
  }
}

ReadReport ReadApplicationLog(const source::ApplicationLog& log, EventSink& sink,
                              const ReaderOptions& options) {
  ReadReport report;
  EventParser parser(sink, options.parser);
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
    ReadEventStream(*decoded->stream, part.display_name, parser, options, report, file);
  }
  report.event_counts = parser.event_counts();
  report.unknown_events = parser.unknown_events();
  return report;
}

}  // namespace sparkprof::eventlog
