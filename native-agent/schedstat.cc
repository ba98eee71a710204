#include "native-agent/schedstat.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>

namespace sparkprof::agent {

std::optional<SchedstatReading> ParseSchedstat(std::string_view text) {
  uint64_t fields[3] = {};
  const char* at = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (at == end || *at != ' ') return std::nullopt;
      ++at;
    }
    auto [next, error] = std::from_chars(at, end, fields[i]);
    if (error != std::errc() || next == at) return std::nullopt;
    at = next;
  }
  if (at != end && *at != '\n') return std::nullopt;
  if (fields[1] > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return SchedstatReading{static_cast<int64_t>(fields[1]), fields[2]};
}

int OpenSchedstat(pid_t tid, const char* task_dir) {
  char path[256];
  std::snprintf(path, sizeof(path), "%s/%d/schedstat", task_dir, static_cast<int>(tid));
  return open(path, O_RDONLY | O_CLOEXEC);
}

std::optional<SchedstatReading> ReadSchedstat(int fd) {
  if (fd < 0) return std::nullopt;
  char buffer[128];
  ssize_t bytes = pread(fd, buffer, sizeof(buffer), 0);
  if (bytes <= 0 || bytes == static_cast<ssize_t>(sizeof(buffer))) return std::nullopt;
  return ParseSchedstat(std::string_view(buffer, static_cast<size_t>(bytes)));
}

}  // namespace sparkprof::agent
