// Fuzzes the event-log line reader and JSON event parser together: arbitrary bytes as a
// decoded event-log stream must never crash, hang or grow memory without bound.
#include <cstdint>
#include <string>

#include "analyzer/eventlog/event_log_reader.h"
#include "analyzer/model/model_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sparkprof;
  model::ModelBuilder builder;
  eventlog::EventParser parser(builder);
  eventlog::ReaderOptions options;
  options.lines.initial_buffer_bytes = 4096;
  options.lines.max_line_bytes = 1 << 16;
  eventlog::ReadReport report;
  eventlog::FileReadReport file;
  auto stream = MakeMemoryInputStream(std::string(reinterpret_cast<const char*>(data), size));
  eventlog::ReadEventStream(*stream, "fuzz", parser, options, report, file);
  model::ApplicationModel model = builder.Finish();
  (void)model;
  return 0;
}
