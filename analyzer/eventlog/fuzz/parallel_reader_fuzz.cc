// Differential fuzz target: arbitrary bytes read as an event log on one thread and on three
// (ParallelLineParser: batches on workers, delivered in order) must give the same events in the
// same order and the same bad lines and counts; any difference aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/eventlog/event_log_reader.h"

namespace {

using namespace sparkprof;

// Every event, as a line naming it and the fields lines can differ in.
class TraceSink final : public eventlog::EventSink {
 public:
  std::string trace;
  void OnEvent(const eventlog::Event& event) override {
    using namespace eventlog;
    std::visit(
        Overloaded{
            [&](const LogStartEvent& e) { trace += "log" + e.spark_version; },
            [&](const JobStartEvent& e) { trace += "job" + std::to_string(e.job_id); },
            [&](const StageCompletedEvent& e) {
              trace += "stage" + std::to_string(e.stage.stage_id);
            },
            [&](const TaskStartEvent& e) { trace += "start" + std::to_string(e.info.task_id); },
            [&](const TaskEndEvent& e) {
              trace += "end" + std::to_string(e.info.task_id) + "/" +
                       std::to_string(e.info.photon_peak_memory_bytes) + "/" +
                       std::to_string(e.info.photon_peak_memory_largest_operator_bytes) + "/" +
                       e.reason.reason + "/" + std::to_string(e.metrics.executor_run_time_ms);
            },
            [&](const SqlExecutionStartEvent& e) {
              trace += "sql" + std::to_string(e.execution_id) + "/" + std::to_string(e.plan.size());
            },
            [&](const StreamingQueryProgressEvent& e) {
              trace += "batch" + e.run_id + "/" + std::to_string(e.batch_id) + "/" +
                       std::to_string(e.timestamp_ms) + "/" + std::to_string(e.sources.size());
            },
            [&](const OtherEvent& e) { trace += e.name + std::to_string(e.timestamp_ms); },
            [](const auto&) {},
        },
        event);
  }
};

std::string Read(const std::string& bytes, int threads, std::string* trace) {
  TraceSink sink;
  source::ApplicationLog log;
  log.name = "fuzz";
  source::LogPart part;
  part.display_name = "fuzz";
  part.open = [&bytes]() -> Result<std::unique_ptr<InputStream>> {
    return MakeMemoryInputStream(bytes);
  };
  log.parts.push_back(part);
  eventlog::ReaderOptions options;
  options.threads = threads;
  options.lines.initial_buffer_bytes = 4096;
  options.lines.max_line_bytes = 1 << 17;
  eventlog::ReadReport report = eventlog::ReadApplicationLog(log, sink, options);
  *trace = sink.trace;
  std::string summary = std::to_string(report.lines) + " " + std::to_string(report.events) + " " +
                        std::to_string(report.bad_line_count) + "\n";
  for (const eventlog::BadLine& bad : report.bad_lines) {
    summary +=
        std::to_string(bad.line) + ":" + std::to_string(bad.byte_offset) + " " + bad.error + "\n";
  }
  for (const auto& [name, count] : report.event_counts) {
    summary += name + "=" + std::to_string(count) + "\n";
  }
  for (const auto& [name, count] : report.unknown_events) {
    summary += "?" + name + "=" + std::to_string(count) + "\n";
  }
  for (const eventlog::FileReadReport& file : report.files) summary += file.error + "\n";
  return summary;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string one_trace, many_trace;
  const std::string one = Read(bytes, 1, &one_trace);
  const std::string many = Read(bytes, 3, &many_trace);
  if (one != many || one_trace != many_trace) {
    std::fprintf(stderr, "one thread:\n%s\n%s\nthree threads:\n%s\n%s\n", one.c_str(),
                 one_trace.c_str(), many.c_str(), many_trace.c_str());
    std::abort();
  }
  return 0;
}
