#include "flamegraph/profile_file_reader.h"

#include <cstring>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "schema/profile_generated.h"

namespace sparkprof::flamegraph {
namespace {

constexpr size_t kSizePrefixBytes = sizeof(flatbuffers::uoffset_t);
// Size prefix, root offset, identifier.
constexpr size_t kMinimumBatchBytes = 2 * sizeof(flatbuffers::uoffset_t) + 4;
constexpr uint32_t kSupportedSchemaVersion = 1;

uint32_t ReadLittleEndian32(const char* data) {
  uint32_t value;
  std::memcpy(&value, data, sizeof(value));
  return flatbuffers::EndianScalar(value);
}

std::string At(const ProfileFileReadOptions& options, size_t offset) {
  return options.source_name + ": byte " + std::to_string(offset) + ": ";
}

// Reads one verified batch into the model.
class BatchLoader {
 public:
  BatchLoader(const ProfileFileReadOptions& options, ProfileModel& model, ReadReport& report,
              ProfileFileSummary& summary)
      : options_(options), model_(model), report_(report), summary_(summary) {}

  void Load(const schema::Batch& batch, size_t batch_offset) {
    const auto* strings = batch.strings();
    const auto* stacks = batch.stacks();
    const auto* samples = batch.samples();
    if (samples == nullptr) return;
    frame_ids_.assign(strings ? strings->size() : 0, kUnmapped);
    uint64_t bad_references = 0;
    for (const schema::StackSample* sample : *samples) {
      summary_.stage_ids.insert(sample->stage_id());
      std::optional<Category> category =
          CategoryFromSchemaValue(static_cast<uint32_t>(sample->category()));
      if (!category) {
        ++bad_categories_;
        category = Category::kOther;
      }
      if ((options_.stage_id && sample->stage_id() != *options_.stage_id) ||
          (options_.category && *category != *options_.category)) {
        ++summary_.samples_filtered;
        continue;
      }
      if (stacks == nullptr || sample->stack() >= stacks->size()) {
        ++bad_references;
        continue;
      }
      const auto* frames = stacks->Get(sample->stack())->frames();
      size_t depth = frames ? frames->size() : 0;
      if (depth > options_.max_frames_per_stack) {
        report_.Warn(At(options_, batch_offset) + "a stack of " + std::to_string(depth) +
                     " frames is deeper than the limit of " +
                     std::to_string(options_.max_frames_per_stack) + "; its samples are skipped");
        continue;
      }
      path_.clear();
      bool valid = true;
      for (size_t i = 0; i < depth && valid; ++i) {
        uint32_t index = frames->Get(i);
        if (index >= frame_ids_.size() || strings->Get(index) == nullptr) {
          valid = false;
          break;
        }
        if (frame_ids_[index] == kUnmapped) {
          frame_ids_[index] = model_.InternFrame(strings->Get(index)->string_view());
        }
        path_.push_back(frame_ids_[index]);
      }
      if (!valid) {
        ++bad_references;
        continue;
      }
      uint64_t weight =
          options_.weight == WeightUnit::kNanoseconds ? sample->weight_ns() : sample->samples();
      model_.AddStack(path_, *category, weight);
      ++summary_.samples_read;
    }
    if (bad_references > 0) {
      report_.Warn(At(options_, batch_offset) + std::to_string(bad_references) +
                   " sample(s) refer to a stack or string index outside the batch; skipped");
    }
  }

  uint64_t bad_categories() const { return bad_categories_; }

 private:
  static constexpr FrameId kUnmapped = UINT32_MAX;
  const ProfileFileReadOptions& options_;
  ProfileModel& model_;
  ReadReport& report_;
  ProfileFileSummary& summary_;
  std::vector<FrameId> frame_ids_;  // batch string index -> model frame id
  std::vector<FrameId> path_;
  uint64_t bad_categories_ = 0;
};

}  // namespace

bool LooksLikeProfileFile(std::string_view bytes) {
  return bytes.size() >= kMinimumBatchBytes &&
         std::memcmp(bytes.data() + 2 * kSizePrefixBytes, schema::BatchIdentifier(), 4) == 0;
}

Status ReadProfileFile(std::string_view bytes, const ProfileFileReadOptions& options,
                       ProfileModel& model, ReadReport& report, ProfileFileSummary* summary) {
  ProfileFileSummary local_summary;
  ProfileFileSummary& counts = summary ? *summary : local_summary;
  BatchLoader loader(options, model, report, counts);
  std::vector<uint64_t> aligned;  // scratch copy for a batch that does not start 8-byte aligned
  std::string first_error;

  size_t offset = 0;
  uint64_t batch_number = 0;
  while (offset < bytes.size()) {
    ++batch_number;
    size_t remaining = bytes.size() - offset;
    if (remaining < kSizePrefixBytes) {
      report.Warn(At(options, offset) + std::to_string(remaining) +
                  " trailing byte(s) are too few for a batch size prefix (truncated file?)");
      break;
    }
    uint32_t batch_bytes = ReadLittleEndian32(bytes.data() + offset);
    std::string where = At(options, offset) + "batch " + std::to_string(batch_number) + ": ";
    if (batch_bytes > remaining - kSizePrefixBytes) {
      report.Warn(where + "declares " + std::to_string(batch_bytes) + " bytes but only " +
                  std::to_string(remaining - kSizePrefixBytes) +
                  " remain (truncated file?); stopped reading here");
      ++counts.batches_skipped;
      break;
    }
    size_t buffer_bytes = kSizePrefixBytes + batch_bytes;
    const char* buffer = bytes.data() + offset;
    offset += buffer_bytes;
    if (batch_bytes > options.max_batch_bytes) {
      report.Warn(where + "declares " + std::to_string(batch_bytes) +
                  " bytes, more than the limit of " + std::to_string(options.max_batch_bytes) +
                  "; skipped");
      ++counts.batches_skipped;
      continue;
    }
    if (buffer_bytes < kMinimumBatchBytes ||
        !schema::SizePrefixedBatchBufferHasIdentifier(buffer)) {
      report.Warn(where + "is not a sparkprof batch (no \"SPPF\" identifier); skipped");
      ++counts.batches_skipped;
      continue;
    }
    if (reinterpret_cast<uintptr_t>(buffer) % alignof(uint64_t) != 0) {
      aligned.assign((buffer_bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
      std::memcpy(aligned.data(), buffer, buffer_bytes);
      buffer = reinterpret_cast<const char*>(aligned.data());
    }
    flatbuffers::Verifier::Options verifier_options;
    verifier_options.max_tables = options.max_tables_per_batch;
    flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(buffer), buffer_bytes,
                                   verifier_options);
    if (!schema::VerifySizePrefixedBatchBuffer(verifier)) {
      report.Warn(where + "failed flatbuffers verification (corrupt, or over " +
                  std::to_string(options.max_tables_per_batch) + " tables); skipped");
      ++counts.batches_skipped;
      continue;
    }
    const schema::Batch* batch = schema::GetSizePrefixedBatch(buffer);
    if (batch->schema_version() > kSupportedSchemaVersion) {
      report.Warn(where + "has schema version " + std::to_string(batch->schema_version()) +
                  ", newer than this sparkprof reads (" + std::to_string(kSupportedSchemaVersion) +
                  "); skipped");
      ++counts.batches_skipped;
      continue;
    }
    loader.Load(*batch, offset - buffer_bytes);
    ++counts.batches_read;
  }
  if (loader.bad_categories() > 0) {
    report.Warn(options.source_name + ": " + std::to_string(loader.bad_categories()) +
                " sample(s) have an unknown category value; counted as other");
  }
  if (counts.batches_read == 0) {
    return Corrupt(options.source_name + ": no readable sparkprof batch" +
                   (report.messages.empty() ? std::string(" (empty file)")
                                            : "; first problem: " + report.messages.front()));
  }
  return Status::Ok();
}

}  // namespace sparkprof::flamegraph
