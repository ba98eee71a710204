// S3A statistics rows the executor plugin hands to the agent (NativeAgent.addS3aRows), kept until
// the next batch encodes them (schema/profile.fbs, S3aStatistics). Not signal-handler code: the
// rows arrive on the plugin's flush thread and leave on the drain, under one mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace sparkprof::agent {

// The Java row: stage id, stage attempt, tasks, request_counts (0/1), then kS3aFieldCount values
// in the schema's field order (bytes_written .. list_ms).
inline constexpr size_t kS3aFieldCount = 20;
inline constexpr size_t kS3aRowLongs = 4 + kS3aFieldCount;

struct S3aRow {
  int32_t stage_id = -1;
  int32_t stage_attempt = -1;
  uint64_t tasks = 0;
  bool request_counts = false;
  std::array<uint64_t, kS3aFieldCount> fields{};
};

class S3aRows {
 public:
  explicit S3aRows(size_t max_rows = 4096) : max_rows_(max_rows) {}

  // Appends the rows of a flat Java array of `row_longs` longs per row. Returns false (and keeps
  // nothing) when the layout is not the one this agent knows; rows past the bound are dropped and
  // counted. Negative values (a broken caller) become 0.
  bool Append(std::span<const int64_t> flat, size_t row_longs);
  // The rows so far; the buffer is empty afterwards.
  std::vector<S3aRow> Take();
  uint64_t dropped() const;

 private:
  const size_t max_rows_;
  mutable std::mutex mutex_;
  std::vector<S3aRow> rows_;
  uint64_t dropped_ = 0;
};

}  // namespace sparkprof::agent
