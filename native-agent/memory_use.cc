#include "native-agent/memory_use.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <deque>
#include <set>

#include "native-agent/cpu_use.h"

namespace sparkprof::agent {
namespace {

// ParseNumber, leading spaces and tabs allowed too ("VmHWM:\t  1234 kB" values).
std::optional<uint64_t> Number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  return ParseNumber<uint64_t>(text);
}

// The value of the first of `keys` present in a "name value" stat file (memory.stat), else 0.
uint64_t StatValue(std::string_view text, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (std::optional<uint64_t> value = StatFileValue(text, key)) return *value;
  }
  return 0;
}

// The oom_kill line of memory.events (v2) or memory.oom_control (v1, kernels since 4.13).
void ReadOomKills(std::string_view text, MemoryUseReading& reading) {
  if (std::optional<uint64_t> kills = StatFileValue(text, "oom_kill")) {
    reading.cgroup_oom_kills = *kills;
    reading.cgroup_oom_kills_counted = true;
  }
}

}  // namespace

std::optional<uint64_t> ParseStatmResidentBytes(std::string_view text, uint64_t page_size) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(space + 1);
  std::optional<uint64_t> pages = Number(rest.substr(0, rest.find(' ')));
  if (!pages) return std::nullopt;
  return *pages * page_size;
}

std::optional<uint64_t> StatusValue(std::string_view text, std::string_view name) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    std::string_view value = line.substr(name.size() + 1);
    uint64_t scale = 1;
    if (value.ends_with(" kB")) {
      value.remove_suffix(3);
      scale = 1024;
    }
    std::optional<uint64_t> number = Number(value);
    if (!number) return std::nullopt;
    return *number * scale;
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseMemoryLimit(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text == "max") return 0u;
  std::optional<uint64_t> value = Number(text);
  if (!value) return std::nullopt;
  // v1 writes PAGE_COUNTER_MAX x page size (about 2^63) for no limit.
  if (*value >= (uint64_t{1} << 62)) return 0u;
  return value;
}

std::vector<pid_t> ParseChildren(std::string_view text) {
  std::vector<pid_t> pids;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n')) ++at;
    size_t end = at;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    if (end > at) {
      int pid = 0;
      auto [next, error] = std::from_chars(text.data() + at, text.data() + end, pid);
      if (error == std::errc() && next == text.data() + end && pid > 0) pids.push_back(pid);
    }
    at = end;
  }
  return pids;
}

MemoryUseMeter::MemoryUseMeter(Paths paths) : paths_(std::move(paths)) {
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) page_size_ = static_cast<uint64_t>(page);
  CgroupLocation cgroup =
      LocateCgroup(paths_.proc, "memory", "memory.usage_in_bytes", "memory.current");
  cgroup_version_ = cgroup.version;
  cgroup_directory_ = std::move(cgroup.directory);
}

MemoryUseReading MemoryUseMeter::Read() const {
  MemoryUseReading reading;
  reading.rss_bytes =
      ParseStatmResidentBytes(ReadSmallFile(paths_.proc + "/self/statm"), page_size_).value_or(0);
  const std::string status = ReadSmallFile(paths_.proc + "/self/status");
  reading.rss_peak_bytes = StatusValue(status, "VmHWM").value_or(0);
  reading.threads = static_cast<uint32_t>(StatusValue(status, "Threads").value_or(0));
  if (cgroup_version_ != 0) {
    reading.cgroup_version = cgroup_version_;
    const std::string& dir = cgroup_directory_;
    const std::string stat = ReadSmallFile(dir + "/memory.stat");
    if (cgroup_version_ == 1) {
      reading.cgroup_usage_bytes =
          ParseMemoryLimit(ReadSmallFile(dir + "/memory.usage_in_bytes")).value_or(0);
      reading.cgroup_limit_bytes =
          ParseMemoryLimit(ReadSmallFile(dir + "/memory.limit_in_bytes")).value_or(0);
      reading.cgroup_peak_bytes =
          ParseMemoryLimit(ReadSmallFile(dir + "/memory.max_usage_in_bytes")).value_or(0);
      reading.cgroup_anon_bytes = StatValue(stat, {"total_rss", "rss"});
      reading.cgroup_file_bytes = StatValue(stat, {"total_cache", "cache"});
      ReadOomKills(ReadSmallFile(dir + "/memory.oom_control"), reading);
    } else {
      reading.cgroup_usage_bytes =
          ParseMemoryLimit(ReadSmallFile(dir + "/memory.current")).value_or(0);
      reading.cgroup_limit_bytes = ParseMemoryLimit(ReadSmallFile(dir + "/memory.max")).value_or(0);
      reading.cgroup_peak_bytes = ParseMemoryLimit(ReadSmallFile(dir + "/memory.peak")).value_or(0);
      reading.cgroup_anon_bytes = StatValue(stat, {"anon"});
      reading.cgroup_file_bytes = StatValue(stat, {"file"});
      ReadOomKills(ReadSmallFile(dir + "/memory.events"), reading);
    }
  }
  ReadPython(reading);
  return reading;
}

void MemoryUseMeter::ReadPython(MemoryUseReading& reading) const {
  // Breadth first from this process: each of its threads' children (PySpark's daemon is forked
  // by a JVM thread; its workers by the daemon's main thread), then theirs.
  std::deque<std::string> queue{"self"};
  std::set<pid_t> seen;
  while (!queue.empty() && seen.size() < kMaxDescendants) {
    const std::string process = queue.front();
    queue.pop_front();
    const std::string task_dir = paths_.proc + "/" + process + "/task";
    DIR* tasks = opendir(task_dir.c_str());
    if (tasks == nullptr) continue;
    while (dirent* entry = readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      for (pid_t child :
           ParseChildren(ReadSmallFile(task_dir + "/" + entry->d_name + "/children", 16384))) {
        if (seen.size() >= kMaxDescendants || !seen.insert(child).second) continue;
        const std::string child_dir = paths_.proc + "/" + std::to_string(child);
        if (ReadSmallFile(child_dir + "/comm", 64).starts_with("python")) {
          ++reading.python_processes;
          reading.python_rss_bytes +=
              ParseStatmResidentBytes(ReadSmallFile(child_dir + "/statm"), page_size_).value_or(0);
        }
        queue.push_back(std::to_string(child));
      }
    }
    closedir(tasks);
  }
}

}  // namespace sparkprof::agent
