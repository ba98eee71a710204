#include "analyzer/source/log_layouts.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "analyzer/source/log_names.h"

namespace sparkprof::source {
namespace {

LogPart ToPart(const FileEntry& file) {
  return LogPart{.display_name = file.display_name,
                 .open = file.open,
                 .size_bytes = file.size_bytes,
                 .disk_file = file.disk_file};
}

ApplicationLog NewLog(std::string name, std::string layout, const std::string& archive) {
  ApplicationLog log;
  log.name = std::move(name);
  log.layout = std::move(layout);
  log.archive = archive;
  return log;
}

}  // namespace

ApplicationLog MakeSingleFileLog(const FileEntry& file) {
  ApplicationLog log = NewLog(file.name, "single", file.archive);
  log.in_progress_by_name = HasInProgressSuffix(file.name);
  log.parts.push_back(ToPart(file));
  return log;
}

bool IsRollingFolder(const std::string& folder_name, const std::vector<FileEntry>& files) {
  if (HasRollingDirectoryPrefix(folder_name)) return true;
  bool has_status = false;
  bool has_events = false;
  for (const FileEntry& file : files) {
    has_status = has_status || IsAppStatusName(file.name);
    has_events = has_events || ParseRollingEventFileName(file.name).has_value();
  }
  return has_status && has_events;
}

std::optional<ApplicationLog> MakeRollingLog(const Folder& folder,
                                             const std::vector<FileEntry>& files,
                                             std::vector<DiscoveryWarning>* warnings) {
  struct EventFile {
    RollingEventFileName parsed;
    const FileEntry* file;
  };
  std::vector<EventFile> events;
  const FileEntry* status = nullptr;
  for (const FileEntry& file : files) {
    if (std::optional<RollingEventFileName> parsed = ParseRollingEventFileName(file.name)) {
      events.push_back({*parsed, &file});
    } else if (IsAppStatusName(file.name)) {
      if (status != nullptr) {
        warnings->push_back({file.display_name,
                             "second appstatus file in a rolling directory; "
                             "using " +
                                 status->name});
      } else {
        status = &file;
      }
    } else {
      warnings->push_back({file.display_name,
                           "ignored: not an events_<N>_ or appstatus_ file "
                           "of the rolling event log around it"});
    }
  }
  if (events.empty()) {
    warnings->push_back({folder.display_name(),
                         "rolling event-log directory holds no "
                         "events_<N>_ files; skipped"});
    return std::nullopt;
  }
  std::sort(events.begin(), events.end(), [](const EventFile& a, const EventFile& b) {
    return std::tie(a.parsed.index, a.parsed.compact, a.file->name) <
           std::tie(b.parsed.index, b.parsed.compact, b.file->name);
  });
  // A compact file holds the surviving events of every file up to its index, so the files
  // before it are stale copies (the compactor may not have deleted them yet).
  auto last_compact = std::find_if(events.rbegin(), events.rend(),
                                   [](const EventFile& e) { return e.parsed.compact; });
  if (last_compact != events.rend()) events.erase(events.begin(), std::prev(last_compact.base()));

  ApplicationLog log = NewLog(folder.name(), "rolling", events.front().file->archive);
  if (status == nullptr) {
    warnings->push_back({folder.display_name(),
                         "rolling event-log directory has no appstatus_ file; cannot tell from "
                         "the names whether the application finished"});
  } else {
    log.in_progress_by_name = HasInProgressSuffix(status->name);
  }
  if (!events.front().parsed.compact && events.front().parsed.index != 1) {
    warnings->push_back(
        {folder.display_name(), "rolling event log starts at events_" +
                                    std::to_string(events.front().parsed.index) +
                                    "; earlier files are missing, so early events are lost"});
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) {
      uint64_t previous = events[i - 1].parsed.index;
      uint64_t current = events[i].parsed.index;
      if (current == previous) {
        warnings->push_back(
            {events[i].file->display_name,
             "same index as " + events[i - 1].file->name + "; both are read, events may repeat"});
      } else if (current != previous + 1) {
        warnings->push_back({folder.display_name(), "rolling event log skips from events_" +
                                                        std::to_string(previous) + " to events_" +
                                                        std::to_string(current) +
                                                        "; events in between are lost"});
      }
    }
    log.parts.push_back(ToPart(*events[i].file));
  }
  return log;
}

std::optional<ApplicationLog> TakeDatabricksLog(const Folder& folder,
                                                std::vector<FileEntry>* files) {
  struct Part {
    DatabricksPartName parsed;
    FileEntry file;
  };
  std::vector<Part> parts;
  std::vector<FileEntry> others;
  for (FileEntry& file : *files) {
    if (std::optional<DatabricksPartName> parsed = ParseDatabricksPartName(file.name)) {
      parts.push_back({std::move(*parsed), std::move(file)});
    } else {
      others.push_back(std::move(file));
    }
  }
  *files = std::move(others);
  if (parts.empty()) return std::nullopt;
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return std::tie(a.parsed.current, a.parsed.time_key, a.file.name) <
           std::tie(b.parsed.current, b.parsed.time_key, b.file.name);
  });
  ApplicationLog log = NewLog(folder.name(), "databricks", parts.front().file.archive);
  for (const Part& part : parts) log.parts.push_back(ToPart(part.file));
  return log;
}

}  // namespace sparkprof::source
