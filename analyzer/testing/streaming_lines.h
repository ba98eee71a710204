// StreamingQueryListener event lines written by hand in tests, the way Spark writes them to the
// event log (and the plugin's live feed): only the keys sparkprof reads.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace sparkprof::testing {

inline const std::string kStreamingListener =
    "org.apache.spark.sql.streaming.StreamingQueryListener$";

// Spark's progress timestamps: ISO-8601 UTC with milliseconds.
inline std::string IsoTime(int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return std::string(text) + "." + std::to_string(1000 + epoch_ms % 1000).substr(1) + "Z";
}

inline std::string QueryStartedLine(const std::string& id, const std::string& run_id,
                                    const std::string& name, int64_t at_ms) {
  return R"({"Event":")" + kStreamingListener + R"(QueryStartedEvent","id":")" + id +
         R"(","runId":")" + run_id + R"(","name":)" + (name.empty() ? "null" : "\"" + name + "\"") +
         R"(,"timestamp":")" + IsoTime(at_ms) + "\"}";
}

inline std::string QueryTerminatedLine(const std::string& id, const std::string& run_id) {
  return R"({"Event":")" + kStreamingListener + R"(QueryTerminatedEvent","id":")" + id +
         R"(","runId":")" + run_id + R"(","exception":null})";
}

// One micro-batch's progress; addBatch is what the other steps leave of its duration.
struct ProgressLine {
  std::string id;
  std::string run_id;
  std::string name;
  int64_t batch_id = 0;
  int64_t start_ms = 0;
  int64_t duration_ms = 0;
  int64_t rows = 0;
  int64_t latest_offset_ms = 0;
  int64_t get_batch_ms = 0;
  int64_t planning_ms = 0;
  int64_t wal_commit_ms = 0;
  int64_t commit_offsets_ms = 0;
  int64_t state_rows = -1;  // -1: no stateful operator
  int64_t state_bytes = 0;
  int64_t watermark_ms = -1;  // -1: no watermark

  std::string Line() const {
    const int64_t add_batch = duration_ms - latest_offset_ms - get_batch_ms - planning_ms -
                              wal_commit_ms - commit_offsets_ms;
    std::string line =
        R"({"Event":")" + kStreamingListener + R"(QueryProgressEvent","progress":{"id":")" + id +
        R"(","runId":")" + run_id + R"(","name":)" + (name.empty() ? "null" : "\"" + name + "\"") +
        R"(,"timestamp":")" + IsoTime(start_ms) + R"(","batchId":)" + std::to_string(batch_id) +
        R"(,"batchDuration":)" + std::to_string(duration_ms) +
        R"(,"durationMs":{"triggerExecution":)" + std::to_string(duration_ms) +
        R"(,"latestOffset":)" + std::to_string(latest_offset_ms) + R"(,"getBatch":)" +
        std::to_string(get_batch_ms) + R"(,"queryPlanning":)" + std::to_string(planning_ms) +
        R"(,"addBatch":)" + std::to_string(add_batch) + R"(,"walCommit":)" +
        std::to_string(wal_commit_ms) + R"(,"commitOffsets":)" + std::to_string(commit_offsets_ms) +
        R"(},"eventTime":{)";
    if (watermark_ms >= 0) line += R"("watermark":")" + IsoTime(watermark_ms) + "\"";
    line += R"(},"stateOperators":[)";
    if (state_rows >= 0) {
      line += R"({"operatorName":"stateStoreSave","numRowsTotal":)" + std::to_string(state_rows) +
              R"(,"numRowsUpdated":0,"memoryUsedBytes":)" + std::to_string(state_bytes) +
              R"(,"numShufflePartitions":4})";
    }
    line += R"(],"sources":[{"description":"RateStreamV2[rowsPerSecond=10]","numInputRows":)" +
            std::to_string(rows) +
            R"(,"metrics":{}}],"sink":{"description":"noop","numOutputRows":)" +
            std::to_string(rows) + "}}}";
    return line;
  }
};

}  // namespace sparkprof::testing
