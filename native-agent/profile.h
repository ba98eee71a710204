// Aggregated samples: per (task tag, thread, stack) counts with a cap on distinct stacks, plus
// per-task GC pause time. The drain keeps two: the cumulative profile for standalone outputs and
// the pending one that the next JNI batch takes. Not used from signal handlers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/frame_classifier.h"
#include "native-agent/task_tag.h"

namespace sparkprof::agent {

using classifier::Category;

// Interns frame and thread names; ids are stable for the table's life.
class StringTable {
 public:
  uint32_t Intern(std::string_view text);
  const std::string& Get(uint32_t id) const { return *strings_[id]; }
  size_t size() const { return strings_.size(); }
  size_t memory_bytes() const { return memory_bytes_; }

 private:
  std::vector<std::unique_ptr<std::string>> strings_;     // heap-stable, so views stay valid
  std::unordered_map<std::string_view, uint32_t> index_;  // views into strings_
  size_t memory_bytes_ = 0;
};

struct SampleKey {
  uint32_t stack;
  uint32_t thread;  // string id of the thread's (normalised) name
  TaskTag tag;
  // Part of the key: one wall sample's stack holds on-CPU and off-CPU time (mode cpu+wall).
  Category category = Category::kCompute;
  bool operator==(const SampleKey&) const = default;
};

struct SampleKeyHash {
  size_t operator()(const SampleKey& key) const;
};

struct SampleCount {
  Category category = Category::kCompute;
  uint64_t samples = 0;
  uint64_t time_ns = 0;  // the samples' weights (CPU mode: the CPU time they stand for)
};

struct TaskCategoryKey {
  TaskTag tag;
  Category category;
  bool operator<(const TaskCategoryKey& other) const;
};

struct TaskCategoryTotal {
  uint64_t samples = 0;
  uint64_t time_ns = 0;
};

class Profile {
 public:
  // The stack every sample beyond the distinct-stack cap is folded into.
  static constexpr std::string_view kOverflowFrame = "[overflow]";

  // `max_entries` bounds each of samples() and task_times(): a sample or task time that would add
  // a key past it is folded into a key without its task (and, for samples, on the "[overflow]"
  // stack), whose number is bounded by threads and categories; counted in entries_folded().
  // `samples_by_task` false keeps samples() without their task tags (task_times() keeps them):
  // for a profile of the JVM's whole life, whose samples nobody reads per task.
  Profile(uint32_t max_stacks, uint32_t overflow_frame_id, size_t max_entries = SIZE_MAX,
          bool samples_by_task = true)
      : max_stacks_(max_stacks),
        overflow_frame_id_(overflow_frame_id),
        max_entries_(max_entries),
        samples_by_task_(samples_by_task) {}

  // `frames_root_first` are StringTable ids; `samples` samples weighing `weight_ns` together.
  // Returns false when they went to "[overflow]".
  bool AddSample(std::span<const uint32_t> frames_root_first, uint32_t thread, const TaskTag& tag,
                 Category category, uint64_t weight_ns, uint64_t samples = 1);
  void AddGcTime(const TaskTag& tag, uint64_t pause_ns);
  void Clear();

  const std::vector<std::vector<uint32_t>>& stacks() const { return stacks_; }
  const std::unordered_map<SampleKey, SampleCount, SampleKeyHash>& samples() const {
    return samples_;
  }
  const std::map<TaskCategoryKey, TaskCategoryTotal>& task_times() const { return task_times_; }
  uint64_t total_samples() const { return total_samples_; }
  uint64_t stacks_dropped_cap() const { return stacks_dropped_cap_; }
  uint64_t entries_folded() const { return entries_folded_; }
  bool empty() const { return samples_.empty() && task_times_.empty(); }
  size_t memory_bytes() const;

 private:
  struct StackHash {
    size_t operator()(const std::vector<uint32_t>& frames) const;
  };
  uint32_t InternStack(std::span<const uint32_t> frames, bool* overflowed);
  uint32_t OverflowStack();
  TaskCategoryTotal& TaskTotal(const TaskTag& tag, Category category);

  uint32_t max_stacks_;
  uint32_t overflow_frame_id_;
  size_t max_entries_;
  bool samples_by_task_;
  uint64_t entries_folded_ = 0;
  std::unordered_map<std::vector<uint32_t>, uint32_t, StackHash> stack_index_;
  std::vector<std::vector<uint32_t>> stacks_;
  std::unordered_map<SampleKey, SampleCount, SampleKeyHash> samples_;
  std::map<TaskCategoryKey, TaskCategoryTotal> task_times_;
  std::vector<uint32_t> scratch_;
  uint64_t total_samples_ = 0;
  uint64_t stacks_dropped_cap_ = 0;
  int64_t overflow_stack_ = -1;
  size_t frame_count_ = 0;
};

// "Executor task launch worker for task 3.0 in stage 1.0 (TID 7)" ->
// "Executor task launch worker for task N.N in stage N.N (TID N)": low-cardinality thread names.
std::string NormaliseThreadName(std::string_view name);

}  // namespace sparkprof::agent
