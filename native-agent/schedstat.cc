#include "native-agent/schedstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "native-agent/jvm_internal_threads.h"

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

bool ProcessRunDelay::Poll(int64_t now_epoch_ms) {
  if (last_poll_ms_ >= 0 && now_epoch_ms <= last_poll_ms_) {
    // In the previous poll's millisecond (or the wall clock stepped back): a step of no width
    // is kept by nobody; what the threads waited is the next poll's.
    if (last_poll_ms_ - now_epoch_ms <= kMaxClockStepBackMs) return true;
    last_poll_ms_ = -1;  // stepped back further: this poll is a new baseline
    last_.clear();
  }
  DIR* dir = opendir(task_dir_.c_str());
  if (dir == nullptr) return false;
  const bool baseline = last_poll_ms_ < 0;
  ++generation_;
  uint64_t total = 0, busiest = 0;
  const int dir_fd = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    pid_t tid = 0;
    const char* name = entry->d_name;
    const char* name_end = name + std::strlen(name);
    auto [end, error] = std::from_chars(name, name_end, tid);
    if (error != std::errc() || end != name_end || tid <= 0) continue;  // ".", ".."
    auto it = last_.find(tid);
    if (it == last_.end() && last_.size() >= kMaxThreads) {
      ++not_followed_;
      continue;
    }
    const int64_t cpu_ns = ThreadCpuNs(tid);
    if (it != last_.end() && cpu_ns >= 0 && cpu_ns == it->second.cpu_ns && !it->second.waited &&
        it->second.skipped < kMaxSkips) {
      ++it->second.skipped;  // slept through the step
      it->second.generation = generation_;
      continue;
    }
    char path[32];
    std::snprintf(path, sizeof(path), "%d/schedstat", static_cast<int>(tid));
    const int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // ended since the listing
    std::optional<SchedstatReading> reading = ReadSchedstat(fd);
    close(fd);
    if (!reading) continue;
    ++reads_;
    uint64_t waited = 0;
    if (it == last_.end()) {
      // Began since the last poll (every thread's first reading is its baseline on the first).
      if (!baseline) waited = static_cast<uint64_t>(reading->run_delay_ns);
      it = last_.emplace(tid, Followed{}).first;
    } else if (reading->run_delay_ns >= it->second.run_delay_ns) {
      waited = static_cast<uint64_t>(reading->run_delay_ns - it->second.run_delay_ns);
    } else {
      waited = static_cast<uint64_t>(reading->run_delay_ns);  // the id was taken by a new thread
    }
    it->second = {reading->run_delay_ns, generation_, cpu_ns, 0, waited > 0};
    total += waited;
    busiest = std::max(busiest, waited);
  }
  closedir(dir);
  std::erase_if(last_,
                [this](const auto& entry) { return entry.second.generation != generation_; });
  if (!baseline) {
    ++taken_.polls;
    taken_.total_ns += total;
    if (total > 0) {
      if (taken_.steps.size() < kMaxSteps) {
        taken_.steps.push_back({last_poll_ms_, now_epoch_ms, total, busiest});
      } else {
        RunDelayStep& step = taken_.steps.back();
        step.end_epoch_ms = now_epoch_ms;
        step.total_ns += total;
        step.busiest_ns += busiest;
      }
    }
  }
  last_poll_ms_ = now_epoch_ms;
  return true;
}

ProcessRunDelay::Taken ProcessRunDelay::Take() {
  Taken taken = std::move(taken_);
  taken_ = Taken{};
  return taken;
}

}  // namespace sparkprof::agent
