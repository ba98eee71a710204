// Opens any profile `sparkprof flamegraph` accepts and tells the formats apart by content:
// a size-prefixed flatbuffers buffer with identifier "SPPF" is a saved profile (*.sparkprof),
// anything else is read as collapsed stacks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "flamegraph/collapsed_reader.h"
#include "flamegraph/profile_file_reader.h"
#include "flamegraph/profile_model.h"
#include "flamegraph/read_report.h"

namespace sparkprof::flamegraph {

enum class ProfileFormat : uint8_t { kProfileFile, kCollapsed };

struct LoadOptions {
  std::optional<int32_t> stage_id;  // profile files only: collapsed stacks carry no stage
  std::optional<Category> category;
  WeightUnit weight = WeightUnit::kSamples;  // profile files: samples or weight_ns
  FrameClassifier classifier;                // collapsed lines without a category annotation
  PerFrameClassifier per_frame_classifier;   // the same, faster; used instead when set
  uint64_t max_file_bytes = uint64_t{2} << 30;
};

struct LoadedProfile {
  ProfileModel model;
  ProfileFormat format = ProfileFormat::kCollapsed;
  ReadReport report;
  ProfileFileSummary file_summary;  // profile files only
};

ProfileFormat DetectProfileFormat(std::string_view bytes);

// `source_name` names the input in messages.
Result<LoadedProfile> LoadProfileFromBytes(std::string_view bytes, const std::string& source_name,
                                           const LoadOptions& options);
Result<LoadedProfile> LoadProfileFromFile(const std::string& path, const LoadOptions& options);

}  // namespace sparkprof::flamegraph
