#include "native-agent/cpu_use.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace sparkprof::agent {
namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > at) fields.push_back(line.substr(at, end - at));
    at = end;
  }
  return fields;
}

// mountinfo escapes spaces, tabs, newlines and backslashes in paths as \ooo.
std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      int value = 0;
      bool octal = true;
      for (size_t k = 1; k <= 3; ++k) {
        if (text[i + k] < '0' || text[i + k] > '7') {
          octal = false;
          break;
        }
        value = value * 8 + (text[i + k] - '0');
      }
      if (octal) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

bool HasToken(std::string_view list, std::string_view token) {
  for (std::string_view part : Split(list, ',')) {
    if (part == token) return true;
  }
  return false;
}

uint64_t Since(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

uint64_t ProcessCpuNs() {
  timespec now{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) != 0) return 0;
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace

std::string ReadSmallFile(const std::string& path, size_t limit) {
  std::string text;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  while (text.size() < limit) {
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  if (text.size() > limit) text.resize(limit);
  return text;
}

std::optional<HostTicks> ParseProcStatCpuLine(std::string_view text) {
  const size_t newline = text.find('\n');
  std::vector<std::string_view> fields = Fields(text.substr(0, newline));
  if (fields.size() < 5 || fields[0] != "cpu") return std::nullopt;
  uint64_t values[8] = {};
  for (size_t i = 1; i < fields.size() && i <= 8; ++i) {
    std::optional<uint64_t> value = ParseNumber<uint64_t>(fields[i]);
    if (!value) return std::nullopt;
    values[i - 1] = *value;
  }
  HostTicks ticks;
  ticks.busy = values[0] + values[1] + values[2] + values[5] + values[6];
  ticks.idle = values[3] + values[4];
  ticks.steal = values[7];
  return ticks;
}

CgroupMembership ParseProcCgroup(std::string_view text, std::string_view controller) {
  CgroupMembership membership;
  for (std::string_view line : Split(text, '\n')) {
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) {
      membership.has_v2 = true;
      membership.v2_path = std::string(path);
    } else if (HasToken(controllers, controller)) {
      membership.has_v1 = true;
      membership.v1_path = std::string(path);
    }
  }
  return membership;
}

CgroupMounts ParseMountinfo(std::string_view text, std::string_view controller) {
  CgroupMounts mounts;
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string_view> fields = Fields(line);
    size_t dash = 0;
    for (size_t i = 6; i < fields.size(); ++i) {
      if (fields[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 1 >= fields.size()) continue;
    const std::string_view type = fields[dash + 1];
    const std::string_view options = dash + 3 < fields.size() ? fields[dash + 3] : "";
    if (type == "cgroup" && mounts.v1_mount.empty() && HasToken(options, controller)) {
      mounts.v1_root = Unescape(fields[3]);
      mounts.v1_mount = Unescape(fields[4]);
    } else if (type == "cgroup2" && mounts.v2_mount.empty()) {
      mounts.v2_root = Unescape(fields[3]);
      mounts.v2_mount = Unescape(fields[4]);
    }
  }
  return mounts;
}

std::string CgroupDirectory(const std::string& mount, const std::string& root,
                            const std::string& path) {
  std::string relative = path;
  if (root != "/" && !root.empty()) {
    // Not below what the mount shows (or the root itself): the mount's own directory.
    relative = path.starts_with(root + "/") ? path.substr(root.size()) : "/";
  }
  if (relative.find("/..") != std::string::npos) relative = "/";
  if (relative == "/" || relative.empty()) return mount;
  return mount + relative;
}

std::optional<uint64_t> StatFileValue(std::string_view text, std::string_view key) {
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string_view> fields = Fields(line);
    if (fields.size() == 2 && fields[0] == key) return ParseNumber<uint64_t>(fields[1]);
  }
  return std::nullopt;
}

std::optional<uint32_t> ParseCpuMax(std::string_view text) {
  std::vector<std::string_view> fields = Fields(text.substr(0, text.find('\n')));
  if (fields.empty() || fields.size() > 2) return std::nullopt;
  if (fields[0] == "max") return 0u;
  std::optional<uint64_t> quota = ParseNumber<uint64_t>(fields[0]);
  std::optional<uint64_t> period =
      fields.size() == 2 ? ParseNumber<uint64_t>(fields[1]) : std::optional<uint64_t>(100000);
  if (!quota || !period || *period == 0) return std::nullopt;
  const uint64_t milli = *quota * 1000 / *period;
  return static_cast<uint32_t>(std::min<uint64_t>(milli, UINT32_MAX));
}

std::optional<uint32_t> ParseCfsQuota(std::string_view quota_us, std::string_view period_us) {
  std::optional<int64_t> quota = ParseNumber<int64_t>(quota_us);
  if (!quota) return std::nullopt;
  if (*quota < 0) return 0u;
  std::optional<uint64_t> period = ParseNumber<uint64_t>(period_us);
  if (!period || *period == 0) return std::nullopt;
  const uint64_t milli = static_cast<uint64_t>(*quota) * 1000 / *period;
  return static_cast<uint32_t>(std::min<uint64_t>(milli, UINT32_MAX));
}

CgroupLocation LocateCgroup(const std::string& proc, std::string_view controller,
                            std::string_view v1_probe, std::string_view v2_probe) {
  const CgroupMembership membership =
      ParseProcCgroup(ReadSmallFile(proc + "/self/cgroup"), controller);
  const CgroupMounts mounts =
      ParseMountinfo(ReadSmallFile(proc + "/self/mountinfo", 1 << 20), controller);
  if (membership.has_v1 && !mounts.v1_mount.empty()) {
    std::string directory = CgroupDirectory(mounts.v1_mount, mounts.v1_root, membership.v1_path);
    if (!ReadSmallFile(directory + "/" + std::string(v1_probe)).empty()) {
      return {1, std::move(directory)};
    }
  }
  if (membership.has_v2 && !mounts.v2_mount.empty()) {
    // The unified hierarchy has some files of a controller that is not enabled; the probe (e.g.
    // cpu.max, memory.max) is there only when it is.
    std::string directory = CgroupDirectory(mounts.v2_mount, mounts.v2_root, membership.v2_path);
    if (!ReadSmallFile(directory + "/" + std::string(v2_probe)).empty()) {
      return {2, std::move(directory)};
    }
  }
  return {};
}

CpuUseMeter::CpuUseMeter(Paths paths) : paths_(std::move(paths)) {
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second > 0) tick_ns_ = 1'000'000'000 / ticks_per_second;
  CgroupLocation cgroup = LocateCgroup(paths_.proc, "cpu", "cpu.stat", "cpu.max");
  cgroup_version_ = cgroup.version;
  cgroup_directory_ = std::move(cgroup.directory);
  last_ = Read();
}

CpuUseReading CpuUseMeter::Read() const {
  CpuUseReading reading;
  if (std::optional<HostTicks> ticks =
          ParseProcStatCpuLine(ReadSmallFile(paths_.proc + "/stat", 4096))) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    reading.host_cpus = online > 0 ? static_cast<uint32_t>(online) : 1;
    const uint64_t tick = static_cast<uint64_t>(tick_ns_);
    reading.host_busy_ns = ticks->busy * tick;
    reading.host_steal_ns = ticks->steal * tick;
    reading.host_total_ns = ticks->total() * tick;
  }
  reading.process_cpu_ns = ProcessCpuNs();
  if (cgroup_version_ == 0) return reading;
  CgroupCpu& cgroup = reading.cgroup;
  const std::string stat = ReadSmallFile(cgroup_directory_ + "/cpu.stat");
  cgroup.version = cgroup_version_;
  cgroup.periods = StatFileValue(stat, "nr_periods").value_or(0);
  cgroup.throttled_periods = StatFileValue(stat, "nr_throttled").value_or(0);
  if (cgroup_version_ == 1) {
    cgroup.throttled_ns = StatFileValue(stat, "throttled_time").value_or(0);
    cgroup.quota_millicpus = ParseCfsQuota(ReadSmallFile(cgroup_directory_ + "/cpu.cfs_quota_us"),
                                           ReadSmallFile(cgroup_directory_ + "/cpu.cfs_period_us"))
                                 .value_or(0);
  } else {
    cgroup.throttled_ns = StatFileValue(stat, "throttled_usec").value_or(0) * 1000;
    cgroup.quota_millicpus = ParseCpuMax(ReadSmallFile(cgroup_directory_ + "/cpu.max")).value_or(0);
  }
  return reading;
}

CpuUseDelta CpuUseMeter::TakeDelta() {
  const CpuUseReading now = Read();
  CpuUseDelta delta;
  delta.host_cpus = now.host_cpus;
  if (now.host_cpus > 0 && last_.host_cpus > 0) {
    delta.host_busy_ns = Since(now.host_busy_ns, last_.host_busy_ns);
    delta.host_steal_ns = Since(now.host_steal_ns, last_.host_steal_ns);
    delta.host_total_ns = Since(now.host_total_ns, last_.host_total_ns);
  } else {
    delta.host_cpus = 0;
  }
  delta.process_cpu_ns = Since(now.process_cpu_ns, last_.process_cpu_ns);
  delta.cgroup.version = now.cgroup.version;
  delta.cgroup.quota_millicpus = now.cgroup.quota_millicpus;
  delta.cgroup.periods = Since(now.cgroup.periods, last_.cgroup.periods);
  delta.cgroup.throttled_periods =
      Since(now.cgroup.throttled_periods, last_.cgroup.throttled_periods);
  delta.cgroup.throttled_ns = Since(now.cgroup.throttled_ns, last_.cgroup.throttled_ns);
  last_ = now;
  return delta;
}

}  // namespace sparkprof::agent
