// The Python workers' samples, one task's worth per file: written by the sampler in each PySpark
// worker (spark-plugin/src/main/python/sparkprof_pyspark_daemon.py, whose header has the format),
// handed over by the executor plugin (NativeAgent.addPythonProfile), parsed here and put into the
// profile by the drain under the JVM frame that waited on the worker. The files come from another
// process, so the parser trusts nothing: sizes, counts and numbers are bounded, and a frame's
// control characters and malformed UTF-8 become '?'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/category.h"
#include "native-agent/task_tag.h"

namespace sparkprof::agent {

// The frame above a worker's own frames (common/category.h), and the thread name its samples carry.
using ::sparkprof::kPythonWorkerFrame;
inline constexpr std::string_view kPythonWorkerThread = "python worker";

inline constexpr size_t kMaxPythonProfileBytes = size_t{1} << 20;  // one task's file
inline constexpr size_t kMaxPythonStacks = 20'000;                 // per file
inline constexpr size_t kMaxPythonFrames = 130;                    // per stack
inline constexpr size_t kMaxPythonFrameBytes = 512;                // longer names are cut
// No real sample weighs more than a day; larger figures are a corrupt or hostile file.
inline constexpr uint64_t kMaxPythonTimeNs = 86'400'000'000'000;

struct PythonStackRecord {
  std::vector<std::string_view> frames;  // root first, views into the parsed text
  uint64_t cpu_ns = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t samples = 0;
};

struct PythonTaskProfile {
  int32_t stage_id = -1;
  int32_t partition_id = -1;
  int32_t attempt_number = -1;
  int64_t task_attempt_id = -1;
  int64_t worker_pid = 0;
  int64_t interval_ns = 0;
  uint64_t samples = 0;
  uint64_t cpu_ns = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t jvm_wait_ns = 0;  // the worker waiting for the JVM: not the worker's time
  uint64_t stacks_folded = 0;
  uint64_t files_dropped = 0;  // earlier files this worker could not write (spool full)
  std::vector<PythonStackRecord> stacks;
};

// Parses one file; on failure returns "line N: why" and leaves `out` unspecified.
std::optional<std::string> ParsePythonProfile(std::string_view text, PythonTaskProfile& out);

// A frame name as the profile keeps it: at most kMaxPythonFrameBytes, control characters and
// malformed UTF-8 replaced by '?', never empty.
std::string SanitisePythonFrame(std::string_view frame);

// What the drain remembers of recent tasks, to place a task's Python samples: its full tag (the
// worker knows no stage attempt) and the innermost JVM stack in which a thread of the task waited
// on its Python worker. Bounded: the oldest task is forgotten first.
class RecentTasks {
 public:
  static constexpr size_t kMaxTasks = 8192;

  struct Entry {
    TaskTag tag;
    std::vector<uint32_t> python_wait_stack;  // root-first string ids; empty: none seen
  };

  void Remember(const TaskTag& tag);
  void RememberPythonWait(const TaskTag& tag, std::span<const uint32_t> frames_root_first);
  const Entry* Find(int64_t task_attempt_id) const;
  size_t size() const { return entries_.size(); }

 private:
  Entry& Slot(const TaskTag& tag);

  std::unordered_map<int64_t, Entry> entries_;
  std::deque<int64_t> order_;  // insertion order, for eviction
};

}  // namespace sparkprof::agent
