#include "driver-aggregator/s3a_io.h"

#include "schema/profile_generated.h"

namespace sparkprof::driver {
namespace {

// Row values are unsigned on the wire; a sum stays below 2^62 so int64 never wraps.
constexpr uint64_t kMaxValue = uint64_t{1} << 62;

void AddSaturating(int64_t& total, uint64_t value) {
  uint64_t clamped = value > kMaxValue ? kMaxValue : value;
  uint64_t sum = static_cast<uint64_t>(total) + clamped;
  total = static_cast<int64_t>(sum > kMaxValue ? kMaxValue : sum);
}

model::S3aIo FromRow(const schema::S3aStatistics& row) {
  model::S3aIo io;
  io.measured = true;
  io.request_counts = row.request_counts();
  AddSaturating(io.tasks, row.tasks());
  AddSaturating(io.bytes_written, row.bytes_written());
  AddSaturating(io.bytes_read, row.bytes_read());
  AddSaturating(io.write_operations, row.write_operations());
  AddSaturating(io.read_operations, row.read_operations());
  AddSaturating(io.put_requests, row.put_requests());
  AddSaturating(io.multipart_initiated, row.multipart_initiated());
  AddSaturating(io.multipart_completed, row.multipart_completed());
  AddSaturating(io.multipart_parts, row.multipart_parts());
  AddSaturating(io.get_requests, row.get_requests());
  AddSaturating(io.head_requests, row.head_requests());
  AddSaturating(io.list_requests, row.list_requests());
  AddSaturating(io.delete_requests, row.delete_requests());
  AddSaturating(io.copy_requests, row.copy_requests());
  AddSaturating(io.retries, row.retries());
  AddSaturating(io.throttled, row.throttled());
  AddSaturating(io.put_ms, row.put_ms());
  AddSaturating(io.multipart_initiate_ms, row.multipart_initiate_ms());
  AddSaturating(io.get_ms, row.get_ms());
  AddSaturating(io.head_ms, row.head_ms());
  AddSaturating(io.list_ms, row.list_ms());
  return io;
}

}  // namespace

Status S3aIoTotals::RegisterMetrics(metrics::PrometheusRegistry& registry) {
  Metrics m;
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* bytes, registry.AddCounter("spark_s3a_bytes_total",
                                       "Bytes the executors wrote to and read from S3A file "
                                       "systems (Hadoop's FileSystem statistics of scheme s3a), "
                                       "by direction (write, read)."));
  m.bytes_written = &bytes->Add({{"direction", "write"}});
  m.bytes_read = &bytes->Add({{"direction", "read"}});
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* operations,
      registry.AddCounter("spark_s3a_filesystem_operations_total",
                          "File system operations on S3A (Hadoop's write and read operation "
                          "counts), by direction (write, read)."));
  m.write_operations = &operations->Add({{"direction", "write"}});
  m.read_operations = &operations->Add({{"direction", "read"}});
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* requests,
      registry.AddCounter("spark_s3a_requests_total",
                          "S3 requests of the executors' S3A file systems (their IOStatistics), "
                          "by request: put, multipart_initiate, multipart_complete, get, head, "
                          "list, delete, copy."));
  m.put = &requests->Add({{"request", "put"}});
  m.multipart_initiate = &requests->Add({{"request", "multipart_initiate"}});
  m.multipart_complete = &requests->Add({{"request", "multipart_complete"}});
  m.get = &requests->Add({{"request", "get"}});
  m.head = &requests->Add({{"request", "head"}});
  m.list = &requests->Add({{"request", "list"}});
  m.delete_requests = &requests->Add({{"request", "delete"}});
  m.copy = &requests->Add({{"request", "copy"}});
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* durations,
      registry.AddCounter("spark_s3a_request_duration_seconds_total",
                          "Summed durations of S3 requests of the executors' S3A file systems, "
                          "by request: put, multipart_initiate, get, head, list."));
  m.put_seconds = &durations->Add({{"request", "put"}});
  m.multipart_initiate_seconds = &durations->Add({{"request", "multipart_initiate"}});
  m.get_seconds = &durations->Add({{"request", "get"}});
  m.head_seconds = &durations->Add({{"request", "head"}});
  m.list_seconds = &durations->Add({{"request", "list"}});
  SPARKPROF_ASSIGN_OR_RETURN(auto* blocks,
                             registry.AddCounter("spark_s3a_block_uploads_total",
                                                 "Blocks S3A output streams uploaded (the parts of "
                                                 "multipart uploads; a small file is one block)."));
  m.block_uploads = &blocks->Add({});
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* retries,
      registry.AddCounter("spark_s3a_retries_total", "S3 requests S3A retried (store_io_retry)."));
  m.retries = &retries->Add({});
  SPARKPROF_ASSIGN_OR_RETURN(
      auto* throttled,
      registry.AddCounter("spark_s3a_throttled_total",
                          "S3 requests throttled by the store (store_io_throttled; 503 Slow "
                          "Down), each retried."));
  m.throttled = &throttled->Add({});
  std::lock_guard<std::mutex> lock(mutex_);
  metrics_ = m;
  registered_ = true;
  return Status::Ok();
}

void S3aIoTotals::Export(const model::S3aIo& d) const {
  if (!registered_) return;
  auto add = [](prometheus::Counter* counter, int64_t value) {
    if (value > 0) counter->Increment(static_cast<double>(value));
  };
  auto add_ms = [](prometheus::Counter* counter, int64_t ms) {
    if (ms > 0) counter->Increment(static_cast<double>(ms) / 1000.0);
  };
  const Metrics& m = metrics_;
  add(m.bytes_written, d.bytes_written);
  add(m.bytes_read, d.bytes_read);
  add(m.write_operations, d.write_operations);
  add(m.read_operations, d.read_operations);
  add(m.put, d.put_requests);
  add(m.multipart_initiate, d.multipart_initiated);
  add(m.multipart_complete, d.multipart_completed);
  add(m.get, d.get_requests);
  add(m.head, d.head_requests);
  add(m.list, d.list_requests);
  add(m.delete_requests, d.delete_requests);
  add(m.copy, d.copy_requests);
  add(m.block_uploads, d.multipart_parts);
  add(m.retries, d.retries);
  add(m.throttled, d.throttled);
  add_ms(m.put_seconds, d.put_ms);
  add_ms(m.multipart_initiate_seconds, d.multipart_initiate_ms);
  add_ms(m.get_seconds, d.get_ms);
  add_ms(m.head_seconds, d.head_ms);
  add_ms(m.list_seconds, d.list_ms);
}

void S3aIoTotals::Add(const schema::Batch& batch) {
  const auto* rows = batch.s3a();
  if (rows == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const schema::S3aStatistics* row : *rows) {
    model::S3aIo io = FromRow(*row);
    if (row->stage_id() < 0 && row->tasks() == 0) {  // an executor JVM's totals
      application_.Add(io);
      Export(io);
      continue;
    }
    if (row->stage_id() < 0) continue;  // tasks of stages past the executor's bound
    auto key = std::make_pair(row->stage_id(), row->stage_attempt());
    auto it = stages_.find(key);
    if (it == stages_.end()) {
      if (stages_.size() >= max_stages_) continue;
      it = stages_.emplace(key, model::S3aIo{}).first;
    }
    it->second.Add(io);
  }
}

void S3aIoTotals::ApplyTo(model::ApplicationModel& model) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (application_.measured) model.s3a = application_;
  for (const auto& [key, io] : stages_) {
    auto it = model.stages.find(key);
    if (it != model.stages.end()) it->second.s3a = io;
  }
}

model::S3aIo S3aIoTotals::application() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return application_;
}

model::S3aIo S3aIoTotals::stage(int32_t stage_id, int32_t attempt) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stages_.find({stage_id, attempt});
  return it == stages_.end() ? model::S3aIo{} : it->second;
}

}  // namespace sparkprof::driver
