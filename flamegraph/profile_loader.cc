#include "flamegraph/profile_loader.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/input_stream.h"

namespace sparkprof::flamegraph {
namespace {

constexpr size_t kReadChunkBytes = size_t{1} << 20;
constexpr size_t kFormatSniffBytes = 64;

Status CheckCollapsedOptions(const std::string& source_name, const LoadOptions& options) {
  if (options.stage_id) {
    return InvalidArgument(source_name +
                           ": --stage needs a sparkprof profile file; collapsed stacks carry no "
                           "stage (render the stage's own collapsed file instead)");
  }
  if (options.weight == WeightUnit::kNanoseconds) {
    return InvalidArgument(source_name + ": collapsed stacks hold counts, not nanoseconds");
  }
  return Status::Ok();
}

CollapsedReadOptions CollapsedOptions(const std::string& source_name, const LoadOptions& options) {
  CollapsedReadOptions read_options;
  read_options.source_name = source_name;
  read_options.classifier = options.classifier;
  read_options.per_frame_classifier = options.per_frame_classifier;
  // Filtered while reading: the left-out lines never take memory.
  read_options.only_category = options.category;
  return read_options;
}

}  // namespace

ProfileFormat DetectProfileFormat(std::string_view bytes) {
  return LooksLikeProfileFile(bytes) ? ProfileFormat::kProfileFile : ProfileFormat::kCollapsed;
}

Result<LoadedProfile> LoadProfileFromBytes(std::string_view bytes, const std::string& source_name,
                                           const LoadOptions& options) {
  LoadedProfile loaded{ProfileModel(options.weight), ProfileFormat::kCollapsed, {}, {}};
  loaded.format = DetectProfileFormat(bytes);
  if (loaded.format == ProfileFormat::kProfileFile) {
    ProfileFileReadOptions read_options;
    read_options.source_name = source_name;
    read_options.stage_id = options.stage_id;
    read_options.category = options.category;
    read_options.weight = options.weight;
    SPARKPROF_RETURN_IF_ERROR(
        ReadProfileFile(bytes, read_options, loaded.model, loaded.report, &loaded.file_summary));
    if (options.stage_id && loaded.file_summary.samples_read == 0 &&
        !loaded.file_summary.stage_ids.contains(*options.stage_id)) {
      std::string seen;
      for (int32_t stage : loaded.file_summary.stage_ids) {
        if (seen.size() > 200) {
          seen += " ...";
          break;
        }
        seen += (seen.empty() ? "" : " ") + std::to_string(stage);
      }
      return NotFound(source_name + ": no samples of stage " + std::to_string(*options.stage_id) +
                      "; stages in this file: " + (seen.empty() ? "none" : seen) +
                      " (-1 = outside any task)");
    }
    return loaded;
  }
  SPARKPROF_RETURN_IF_ERROR(CheckCollapsedOptions(source_name, options));
  CollapsedReadOptions read_options = CollapsedOptions(source_name, options);
  SPARKPROF_RETURN_IF_ERROR(ReadCollapsed(bytes, read_options, loaded.model, loaded.report));
  return loaded;
}

Result<LoadedProfile> LoadProfileFromFile(const std::string& path, const LoadOptions& options) {
  // Refuses FIFOs and devices, and never blocks on a file without data (see input_stream.h).
  SPARKPROF_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> file, OpenFileInputStream(path));
  std::string bytes;
  uint64_t total_bytes = 0;
  std::vector<char> buffer(kReadChunkBytes);
  // Reads the next chunk into `buffer`; 0 at the end.
  auto read_chunk = [&]() -> Result<size_t> {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, file->Read(buffer.data(), buffer.size()));
    if (got > options.max_file_bytes - total_bytes) {
      return TooLarge(path + ": larger than the limit of " +
                      std::to_string(options.max_file_bytes) + " bytes");
    }
    total_bytes += got;
    return got;
  };
  // Enough bytes to tell the formats apart (or the whole file, if shorter).
  bool at_end = false;
  while (bytes.size() < kFormatSniffBytes) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, read_chunk());
    if (got == 0) {
      at_end = true;
      break;
    }
    bytes.append(buffer.data(), got);
  }
  if (at_end || DetectProfileFormat(bytes) == ProfileFormat::kProfileFile) {
    // Profile files are read whole: a batch is verified as one buffer.
    std::error_code size_error;
    uint64_t file_bytes = std::filesystem::file_size(path, size_error);
    if (!size_error) bytes.reserve(std::min(file_bytes, options.max_file_bytes));
    while (!at_end) {
      SPARKPROF_ASSIGN_OR_RETURN(size_t got, read_chunk());
      at_end = got == 0;
      bytes.append(buffer.data(), got);
    }
    return LoadProfileFromBytes(bytes, path, options);
  }
  // Collapsed text streams through the reader: memory holds the call tree, not the file.
  SPARKPROF_RETURN_IF_ERROR(CheckCollapsedOptions(path, options));
  LoadedProfile loaded{ProfileModel(options.weight), ProfileFormat::kCollapsed, {}, {}};
  CollapsedReadOptions read_options = CollapsedOptions(path, options);
  CollapsedReader reader(read_options, loaded.model, loaded.report);
  reader.Feed(bytes);
  while (true) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, read_chunk());
    if (got == 0) break;
    reader.Feed(std::string_view(buffer.data(), got));
  }
  SPARKPROF_RETURN_IF_ERROR(reader.Finish());
  return loaded;
}

}  // namespace sparkprof::flamegraph
