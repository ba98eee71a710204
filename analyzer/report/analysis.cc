#include "analyzer/report/analysis.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/codec/codec.h"
#include "analyzer/codec/format_detect.h"
#include "analyzer/diagnosis/diagnose.h"
#include "analyzer/executor_logs/executor_logs.h"
#include "analyzer/model/model_builder.h"
#include "common/input_stream.h"
#include "flamegraph/profile_file_reader.h"

namespace sparkprof::report {

namespace {

// Generous on purpose (fewer bytes per task, more decoded bytes per stored byte than real logs
// show: NDS q72 has 3.5 KB of JSON per task, Photon q88 29 KB; zstd stores them 40x smaller),
// since a reserved page that is never written costs nothing.
constexpr uint64_t kJsonBytesPerTaskAttempt = 2048;
constexpr uint64_t kDecodedBytesPerCompressedByte = 48;

size_t ExpectedTaskAttempts(const source::ApplicationLog& log) {
  return static_cast<size_t>(EstimatedJsonBytes(log, kDecodedBytesPerCompressedByte) /
                             kJsonBytesPerTaskAttempt);
}

}  // namespace

uint64_t EstimatedJsonBytes(const source::ApplicationLog& log,
                            uint64_t decoded_per_compressed_byte) {
  uint64_t json_bytes = 0;
  for (const source::LogPart& part : log.parts) {
    const codec::Format format =
        codec::FormatFromFileName(part.display_name).value_or(codec::Format::kPlain);
    json_bytes += format == codec::Format::kPlain ? part.size_bytes
                                                  : part.size_bytes * decoded_per_compressed_byte;
  }
  return json_bytes;
}

void NotAnalysedList::Add(const source::ApplicationLog& log, std::string why) {
  if (entries.size() >= kMax) {
    ++left_out;
    return;
  }
  std::string path = log.parts.empty() ? log.name : log.parts.front().display_name;
  if (log.layout != "single") {  // rolling, Databricks: the folder holding the parts
    const size_t cut = path.find_last_of("/!");
    if (cut != std::string::npos) path.resize(cut);
  }
  entries.push_back({std::move(path), std::move(why)});
}

std::string NothingAnalysableWhy(const eventlog::ReadReport& read) {
  std::string why;
  for (const eventlog::FileReadReport& file : read.files) {
    if (file.error.empty()) continue;
    why += why.empty() ? "" : "; ";
    if (read.files.size() > 1) why += file.file + ": ";
    why += file.error;
  }
  if (!why.empty()) return why;
  if (read.lines == 0) return "no Spark events could be read: empty";
  return "no Spark events could be read: " + std::to_string(read.lines) +
         " line(s), none a Spark event";
}

Result<std::unique_ptr<InputStream>> DecodeProfileFile(std::unique_ptr<InputStream> file,
                                                       const std::string& path,
                                                       uint64_t max_bytes) {
  SPARKPROF_ASSIGN_OR_RETURN(std::string head, ReadHead(*file, codec::kSniffBytes));
  const codec::Format format = codec::DetectFormat(head, path);
  // A profile as it is, or what no codec reads (left for the profile reader to name): the file.
  const bool as_is = flamegraph::LooksLikeProfileFile(head) || format == codec::Format::kZip ||
                     format == codec::Format::kUnknownBinary;
  std::unique_ptr<InputStream> whole = MakePrefixedInputStream(std::move(head), std::move(file));
  if (as_is) return whole;  // MakeDecoder gives kPlain back unchanged
  codec::DecoderLimits limits;
  limits.max_output_bytes = max_bytes;
  return codec::MakeDecoder(format, std::move(whole), limits);
}

Analysis Analyze(const source::ApplicationLog& log, const eventlog::ReaderOptions& options,
                 const cost::CostOptions& cost_options, const std::string& profile_path,
                 const std::string& logs_path) {
  Analysis analysis;
  analysis.log_name = log.name;
  analysis.layout = log.layout;
  analysis.in_progress_by_name = log.in_progress_by_name;
  analysis.not_read = log.warnings;
  analysis.not_read_left_out = log.warnings_left_out;
  model::ModelBuilder builder;
  builder.ReserveTaskAttempts(ExpectedTaskAttempts(log));
  analysis.read = eventlog::ReadApplicationLog(log, builder, options);
  for (const eventlog::FileReadReport& file : analysis.read.files) {
    if (!file.not_read) continue;
    if (analysis.not_read.size() < source::ApplicationLog::kMaxWarningsPerLog) {
      analysis.not_read.push_back({file.file, file.error});
    } else {
      ++analysis.not_read_left_out;
    }
  }
  analysis.model = builder.Finish();
  if (!profile_path.empty()) {
    profile::ProfileLoadOptions profile_options;
    profile_options.decoder = &DecodeProfileFile;
    AttachProfile(analysis, profile_path, profile_options);
  }
  if (!logs_path.empty()) AttachExecutorLogs(analysis, logs_path);
  CompleteAnalysis(analysis, cost_options);
  return analysis;
}

void AttachExecutorLogs(Analysis& analysis, const std::string& logs_path) {
  Result<executor_logs::ExecutorLogs> logs =
      executor_logs::ReadExecutorLogs(logs_path, analysis.model.app_id);
  if (!logs.ok()) {
    analysis.logs_error = logs.status().message();
    return;
  }
  analysis.logs = std::make_shared<const executor_logs::ExecutorLogs>(std::move(*logs));
}

void ReleaseTaskRecords(Analysis& analysis) {
  // Swapped with empty vectors: their memory goes back now (clear() and `= {}` keep it).
  model::ApplicationModel& model = analysis.model;
  std::vector<model::TaskAttempt>().swap(model.tasks);
  std::vector<model::TaskFailure>().swap(model.task_failures);
  std::vector<uint32_t>().swap(model.stage_task_order);
  // TasksOf() of every stage is empty from now on, never a range into the freed order.
  for (auto& [key, stage] : model.stages) stage.tasks_begin = stage.tasks_end = 0;
}

}  // namespace sparkprof::report
