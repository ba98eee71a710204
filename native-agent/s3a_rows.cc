#include "native-agent/s3a_rows.h"

#include <algorithm>
#include <limits>

namespace sparkprof::agent {
namespace {

int32_t ToInt32(int64_t value) {
  return static_cast<int32_t>(std::clamp<int64_t>(value, -1, std::numeric_limits<int32_t>::max()));
}

uint64_t NonNegative(int64_t value) { return value < 0 ? 0 : static_cast<uint64_t>(value); }

}  // namespace

bool S3aRows::Append(std::span<const int64_t> flat, size_t row_longs) {
  if (row_longs != kS3aRowLongs || flat.size() % row_longs != 0) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t offset = 0; offset < flat.size(); offset += row_longs) {
    if (rows_.size() >= max_rows_) {
      dropped_ += (flat.size() - offset) / row_longs;
      break;
    }
    S3aRow row;
    row.stage_id = ToInt32(flat[offset]);
    row.stage_attempt = ToInt32(flat[offset + 1]);
    row.tasks = NonNegative(flat[offset + 2]);
    row.request_counts = flat[offset + 3] != 0;
    for (size_t i = 0; i < kS3aFieldCount; ++i) row.fields[i] = NonNegative(flat[offset + 4 + i]);
    rows_.push_back(row);
  }
  return true;
}

std::vector<S3aRow> S3aRows::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<S3aRow> taken;
  taken.swap(rows_);
  return taken;
}

uint64_t S3aRows::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

}  // namespace sparkprof::agent
