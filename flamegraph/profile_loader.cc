#include "flamegraph/profile_loader.h"

#include <memory>

#include "common/input_stream.h"

namespace sparkprof::flamegraph {

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
  if (options.stage_id) {
    return InvalidArgument(source_name +
                           ": --stage needs a sparkprof profile file; collapsed stacks carry no "
                           "stage (render the stage's own collapsed file instead)");
  }
  if (options.weight == WeightUnit::kNanoseconds) {
    return InvalidArgument(source_name + ": collapsed stacks hold counts, not nanoseconds");
  }
  CollapsedReadOptions read_options;
  read_options.source_name = source_name;
  read_options.classifier = options.classifier;
  SPARKPROF_RETURN_IF_ERROR(ReadCollapsed(bytes, read_options, loaded.model, loaded.report));
  if (options.category) loaded.model = loaded.model.FilteredByCategory(*options.category);
  return loaded;
}

Result<LoadedProfile> LoadProfileFromFile(const std::string& path, const LoadOptions& options) {
  // Refuses FIFOs and devices, and never blocks on a file without data (see input_stream.h).
  SPARKPROF_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> file, OpenFileInputStream(path));
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    SPARKPROF_ASSIGN_OR_RETURN(size_t got, file->Read(buffer, sizeof(buffer)));
    if (got == 0) break;
    if (got > options.max_file_bytes - bytes.size()) {
      return TooLarge(path + ": larger than the limit of " +
                      std::to_string(options.max_file_bytes) + " bytes");
    }
    bytes.append(buffer, got);
  }
  return LoadProfileFromBytes(bytes, path, options);
}

}  // namespace sparkprof::flamegraph
