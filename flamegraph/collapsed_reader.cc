#include "flamegraph/collapsed_reader.h"

#include <charconv>
#include <cstring>

namespace sparkprof::flamegraph {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Splits "stack count" at the last run of blanks. False when there is no count.
bool SplitCount(std::string_view line, std::string_view& stack, std::string_view& count) {
  size_t end = line.size();
  while (end > 0 && IsBlank(line[end - 1])) --end;
  size_t blank = end;
  while (blank > 0 && !IsBlank(line[blank - 1])) --blank;
  if (blank == 0) return false;
  count = line.substr(blank, end - blank);
  size_t stack_end = blank;
  while (stack_end > 0 && IsBlank(line[stack_end - 1])) --stack_end;
  stack = line.substr(0, stack_end);
  return true;
}

// Root-first frames of `stack` ("" is one empty frame, as "a;;b" has an empty middle one).
void SplitFrames(std::string_view stack, std::vector<std::string_view>& frames) {
  frames.clear();
  const char* position = stack.data();
  const char* end = stack.data() + stack.size();
  while (true) {
    const auto* semicolon =
        static_cast<const char*>(std::memchr(position, ';', static_cast<size_t>(end - position)));
    if (semicolon == nullptr) {
      frames.emplace_back(position, static_cast<size_t>(end - position));
      return;
    }
    frames.emplace_back(position, static_cast<size_t>(semicolon - position));
    position = semicolon + 1;
  }
}

}  // namespace

CollapsedReader::CollapsedReader(const CollapsedReadOptions& options, ProfileModel& model,
                                 ReadReport& report)
    : options_(options), model_(model), report_(report) {}

std::string CollapsedReader::Where() const {
  return options_.source_name + ":" + std::to_string(line_number_) + ": ";
}

void CollapsedReader::Feed(std::string_view bytes) {
  const char* position = bytes.data();
  const char* end = bytes.data() + bytes.size();
  while (position < end) {
    const auto* newline =
        static_cast<const char*>(std::memchr(position, '\n', static_cast<size_t>(end - position)));
    const char* line_end = newline == nullptr ? end : newline;
    auto size = static_cast<size_t>(line_end - position);
    if (newline == nullptr || has_partial_) {
      // Keep at most one byte past the limit (plus a '\r'): enough to know the line is too long.
      size_t keep = options_.max_line_bytes + 2;
      if (partial_.size() < keep) partial_.append(position, std::min(size, keep - partial_.size()));
      partial_bytes_ += size;
      has_partial_ = true;
    }
    if (newline == nullptr) return;
    ++line_number_;
    if (has_partial_) {
      std::string_view line = partial_;
      if (partial_bytes_ > partial_.size()) {
        // Only its start was kept; say how long it really was.
        ++content_lines_;
        report_.Warn(Where() + "line of " + std::to_string(partial_bytes_) +
                     " bytes is longer than the limit of " +
                     std::to_string(options_.max_line_bytes) + "; skipped");
      } else {
        ReadLine(line);
      }
      partial_.clear();
      partial_bytes_ = 0;
      has_partial_ = false;
    } else {
      ReadLine(std::string_view(position, size));
    }
    position = newline + 1;
  }
}

void CollapsedReader::ReadLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t first = 0;
  while (first < line.size() && IsBlank(line[first])) ++first;
  if (first == line.size() || line[first] == '#') return;
  ++content_lines_;
  if (line.size() > options_.max_line_bytes) {
    report_.Warn(Where() + "line of " + std::to_string(line.size()) +
                 " bytes is longer than the limit of " + std::to_string(options_.max_line_bytes) +
                 "; skipped");
    return;
  }

  std::string_view stack;
  std::string_view count_text;
  if (!SplitCount(line, stack, count_text)) {
    report_.Warn(Where() + "expected \"frame;frame;... count\" but found no count; skipped");
    return;
  }
  uint64_t count = 0;
  auto [end, error] =
      std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (error != std::errc() || end != count_text.data() + count_text.size()) {
    report_.Warn(Where() + "count \"" + std::string(count_text.substr(0, 40)) +
                 "\" is not a non-negative integer (or is too large); skipped");
    return;
  }

  SplitFrames(stack, frames_);
  std::optional<Category> category;
  std::span<const std::string_view> frames = frames_;
  std::string_view head = frames.front();
  if (head.starts_with(kCategoryFramePrefix) && head.ends_with(']')) {
    std::string_view name =
        head.substr(kCategoryFramePrefix.size(), head.size() - kCategoryFramePrefix.size() - 1);
    category = ParseCategory(name);
    if (!category) {
      report_.Warn(Where() + "unknown category \"" + std::string(name.substr(0, 40)) +
                   "\"; classified from its frames instead");
    }
    frames = frames.subspan(1);
  }
  // "12" alone or "[category=gc] 12" is weight without frames: it belongs to the root.
  if (frames.size() == 1 && frames.front().empty()) frames = {};
  if (frames.size() > options_.max_frames_per_stack) {
    report_.Warn(Where() + "stack of " + std::to_string(frames.size()) +
                 " frames is deeper than the limit of " +
                 std::to_string(options_.max_frames_per_stack) + "; skipped");
    return;
  }
  if (count == 0) {
    ++stacks_read_;  // read, and adds nothing
    return;
  }

  // Frames equal to the previous line's at the same depth keep their ids: no hashing.
  ids_.clear();
  size_t shared = 0;
  while (shared < frames.size() && shared < previous_frames_.size() &&
         frames[shared] == std::string_view(previous_text_.data() + previous_frames_[shared].first,
                                            previous_frames_[shared].second)) {
    ids_.push_back(previous_ids_[shared]);
    ++shared;
  }
  StringTable& strings = *model_.shared_strings();
  hashes_.clear();
  for (size_t i = shared; i < frames.size(); ++i) {
    hashes_.push_back(HashBytes(frames[i]));
    strings.Prefetch(hashes_.back());
  }
  for (size_t i = shared; i < frames.size(); ++i) {
    ids_.push_back(strings.Intern(frames[i], hashes_[i - shared]));
  }

  if (!category) category = Classify(frames);
  if (options_.only_category && *category != *options_.only_category) {
    ++stacks_read_;  // read, and left out
    return;
  }
  NodeId node = model_.FindOrInsertPath(ids_, options_.max_tree_nodes);
  if (node == kNoNode) {
    report_.Warn(Where() + "stack skipped: the call tree has reached its limit of " +
                 std::to_string(options_.max_tree_nodes) + " nodes");
    return;
  }
  model_.AddWeight(node, *category, count);
  ++stacks_read_;

  // Remember this line's frames for the next one (only the part past the shared prefix is new).
  size_t keep_bytes =
      shared == 0 ? 0 : previous_frames_[shared - 1].first + previous_frames_[shared - 1].second;
  previous_text_.resize(keep_bytes);
  previous_frames_.resize(shared);
  previous_ids_.resize(shared);
  for (size_t i = shared; i < frames.size(); ++i) {
    previous_frames_.emplace_back(static_cast<uint32_t>(previous_text_.size()),
                                  static_cast<uint32_t>(frames[i].size()));
    previous_text_.append(frames[i]);
    previous_ids_.push_back(ids_[i]);
  }
}

Category CollapsedReader::Classify(std::span<const std::string_view> frames) {
  const PerFrameClassifier& per_frame = options_.per_frame_classifier;
  if (!per_frame) return options_.classifier ? options_.classifier(frames) : Category::kOther;
  constexpr uint32_t kUnknown = UINT32_MAX;
  if (frame_results_.size() < model_.strings().size()) {
    frame_results_.resize(model_.strings().size(), kUnknown);
  }
  stack_results_.clear();
  for (size_t i = frames.size(); i-- > 0;) {
    uint32_t& result = frame_results_[ids_[i]];
    if (result == kUnknown) result = per_frame.classify_frame(frames[i]);
    stack_results_.push_back(result);
  }
  return per_frame.combine(stack_results_);
}

Status CollapsedReader::Finish() {
  if (has_partial_) {
    // A last line without '\n' (Feed counts lines at their line break).
    Feed("\n");
  }
  if (content_lines_ > 0 && stacks_read_ == 0) {
    return Corrupt(options_.source_name + ": no line in collapsed-stack format (\"frame;frame;" +
                   "... count\") among " + std::to_string(content_lines_) +
                   " line(s); first problem: " +
                   (report_.messages.empty() ? std::string("none") : report_.messages.front()));
  }
  return Status::Ok();
}

Status ReadCollapsed(std::string_view text, const CollapsedReadOptions& options,
                     ProfileModel& model, ReadReport& report) {
  CollapsedReader reader(options, model, report);
  reader.Feed(text);
  return reader.Finish();
}

}  // namespace sparkprof::flamegraph
