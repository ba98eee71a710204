// The executors' S3A statistics (schema/profile.fbs S3aStatistics rows, measured by the plugin's
// S3aStatistics.java) folded on the driver: per stage attempt (rows of the tasks' per-thread
// figures) and for the application (rows of each executor JVM's totals), exported as the
// spark_s3a_* metrics (docs/metrics.md) and handed to the end-of-application model, where the
// write findings cite them.
//
// Labels are fixed sets (direction, request): no stage or executor ids, so the series count does
// not grow with the application. Thread safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "analyzer/model/application_model.h"
#include "common/status.h"
#include "metrics/prometheus_registry.h"

namespace sparkprof::schema {
struct Batch;  // schema/profile_generated.h
}  // namespace sparkprof::schema

namespace sparkprof::driver {

class S3aIoTotals {
 public:
  // Stage attempts kept; later ones count in the application totals only.
  explicit S3aIoTotals(size_t max_stages = 10'000) : max_stages_(max_stages) {}

  // Registers the spark_s3a_* families; every series exists (at 0) from the first scrape.
  Status RegisterMetrics(metrics::PrometheusRegistry& registry);

  // Adds a verified batch's S3A rows (none: nothing happens).
  void Add(const schema::Batch& batch);

  // Sets the measured stage attempts' and the application's S3aIo in `model`.
  void ApplyTo(model::ApplicationModel& model) const;

  model::S3aIo application() const;
  model::S3aIo stage(int32_t stage_id, int32_t attempt) const;  // measured = false when none

 private:
  struct Metrics {
    prometheus::Counter* bytes_written = nullptr;
    prometheus::Counter* bytes_read = nullptr;
    prometheus::Counter* write_operations = nullptr;
    prometheus::Counter* read_operations = nullptr;
    prometheus::Counter* put = nullptr;
    prometheus::Counter* multipart_initiate = nullptr;
    prometheus::Counter* multipart_complete = nullptr;
    prometheus::Counter* get = nullptr;
    prometheus::Counter* head = nullptr;
    prometheus::Counter* list = nullptr;
    prometheus::Counter* delete_requests = nullptr;
    prometheus::Counter* copy = nullptr;
    prometheus::Counter* block_uploads = nullptr;
    prometheus::Counter* retries = nullptr;
    prometheus::Counter* throttled = nullptr;
    prometheus::Counter* put_seconds = nullptr;
    prometheus::Counter* multipart_initiate_seconds = nullptr;
    prometheus::Counter* get_seconds = nullptr;
    prometheus::Counter* head_seconds = nullptr;
    prometheus::Counter* list_seconds = nullptr;
  };
  void Export(const model::S3aIo& delta) const;

  const size_t max_stages_;
  Metrics metrics_;
  bool registered_ = false;
  mutable std::mutex mutex_;  // guards the two below
  std::map<std::pair<int32_t, int32_t>, model::S3aIo> stages_;
  model::S3aIo application_;
};

}  // namespace sparkprof::driver
