#include "native-agent/profile.h"

#include <memory>
#include <tuple>

namespace sparkprof::agent {
namespace {

size_t Mix(size_t seed, uint64_t value) {
  value *= 0x9E3779B97F4A7C15ull;
  value ^= value >> 29;
  return seed ^ (value + 0x7F4A7C159E3779B9ull + (seed << 6) + (seed >> 2));
}

}  // namespace

uint32_t StringTable::Intern(std::string_view text) {
  auto it = index_.find(text);
  if (it != index_.end()) return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(std::make_unique<std::string>(text));
  const std::string& stored = *strings_.back();
  index_.emplace(std::string_view(stored), id);
  memory_bytes_ += 2 * stored.size() + 96;
  return id;
}

size_t SampleKeyHash::operator()(const SampleKey& key) const {
  size_t seed = Mix(key.stack, key.thread);
  seed = Mix(seed, static_cast<uint64_t>(key.tag.task_attempt_id) ^
                       (static_cast<uint64_t>(key.category) << 56));
  return Mix(seed, (static_cast<uint64_t>(static_cast<uint32_t>(key.tag.stage_id)) << 32) |
                       static_cast<uint32_t>(key.tag.stage_attempt));
}

bool TaskCategoryKey::operator<(const TaskCategoryKey& other) const {
  return std::tie(tag.stage_id, tag.stage_attempt, tag.task_attempt_id, category) <
         std::tie(other.tag.stage_id, other.tag.stage_attempt, other.tag.task_attempt_id,
                  other.category);
}

size_t Profile::StackHash::operator()(const std::vector<uint32_t>& frames) const {
  size_t seed = frames.size();
  for (uint32_t frame : frames) seed = Mix(seed, frame);
  return seed;
}

uint32_t Profile::InternStack(std::span<const uint32_t> frames, bool* overflowed) {
  *overflowed = false;
  scratch_.assign(frames.begin(), frames.end());
  auto it = stack_index_.find(scratch_);
  if (it != stack_index_.end()) return it->second;
  if (stacks_.size() >= max_stacks_) {
    *overflowed = true;
    return OverflowStack();
  }
  auto id = static_cast<uint32_t>(stacks_.size());
  stacks_.push_back(scratch_);
  stack_index_.emplace(scratch_, id);
  frame_count_ += frames.size();
  return id;
}

uint32_t Profile::OverflowStack() {
  if (overflow_stack_ < 0) {
    overflow_stack_ = static_cast<int64_t>(stacks_.size());
    stacks_.push_back({overflow_frame_id_});
  }
  return static_cast<uint32_t>(overflow_stack_);
}

TaskCategoryTotal& Profile::TaskTotal(const TaskTag& tag, Category category) {
  TaskCategoryKey key{tag, category};
  auto it = task_times_.find(key);
  if (it != task_times_.end()) return it->second;
  if (task_times_.size() >= max_entries_) {
    ++entries_folded_;
    key.tag = TaskTag{};
  }
  return task_times_[key];
}

bool Profile::AddSample(std::span<const uint32_t> frames_root_first, uint32_t thread,
                        const TaskTag& tag, Category category, uint64_t weight_ns,
                        uint64_t samples) {
  bool overflowed = false;
  uint32_t stack = InternStack(frames_root_first, &overflowed);
  if (overflowed) ++stacks_dropped_cap_;
  SampleKey key{stack, thread, samples_by_task_ ? tag : TaskTag{}, category};
  auto it = samples_.find(key);
  if (it == samples_.end()) {
    if (samples_.size() >= max_entries_) {
      ++entries_folded_;
      key = SampleKey{OverflowStack(), thread, TaskTag{}, category};
    }
    it = samples_.try_emplace(key).first;
  }
  SampleCount& count = it->second;
  count.category = category;
  count.samples += samples;
  count.time_ns += weight_ns;
  TaskCategoryTotal& total = TaskTotal(tag, category);
  total.samples += samples;
  total.time_ns += weight_ns;
  total_samples_ += samples;
  return !overflowed;
}

void Profile::AddGcTime(const TaskTag& tag, uint64_t pause_ns) {
  TaskTotal(tag, Category::kGc).time_ns += pause_ns;
}

void Profile::Clear() {
  stack_index_.clear();
  stacks_.clear();
  samples_.clear();
  task_times_.clear();
  total_samples_ = 0;
  stacks_dropped_cap_ = 0;
  entries_folded_ = 0;
  overflow_stack_ = -1;
  frame_count_ = 0;
}

size_t Profile::memory_bytes() const {
  // Rough: node-based containers cost about 64 bytes per entry on top of their payload.
  return frame_count_ * 8 + stacks_.size() * 96 + samples_.size() * 96 + task_times_.size() * 96;
}

std::string NormaliseThreadName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_digits = false;
  for (char c : name) {
    if (c >= '0' && c <= '9') {
      if (!in_digits) out += 'N';
      in_digits = true;
    } else {
      out += c;
      in_digits = false;
    }
  }
  return out;
}

}  // namespace sparkprof::agent
