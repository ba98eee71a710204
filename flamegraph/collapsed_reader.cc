#include "flamegraph/collapsed_reader.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace sparkprof::flamegraph {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string Where(const CollapsedReadOptions& options, uint64_t line_number) {
  return options.source_name + ":" + std::to_string(line_number) + ": ";
}

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

}  // namespace

Status ReadCollapsed(std::string_view text, const CollapsedReadOptions& options,
                     ProfileModel& model, ReadReport& report) {
  uint64_t line_number = 0;
  uint64_t stacks_read = 0;
  bool any_content = false;
  // Frames of the previous line (views into `text`) and their ids: sorted input repeats long
  // prefixes, which then cost a comparison instead of a hash lookup.
  std::vector<std::string_view> previous_frames;
  std::vector<FrameId> previous_ids;
  std::vector<std::string_view> frames;
  std::vector<FrameId> ids;

  // Lines are processed in sorted order: then consecutive stacks share their longest prefixes,
  // and the prefix shortcut above (and the model's own) skips most lookups. Unsorted input,
  // as async-profiler writes it, would otherwise cost a hash lookup per frame.
  struct Line {
    std::string_view text;
    uint64_t number;
  };
  std::vector<Line> lines;
  bool sorted = true;
  size_t position = 0;
  while (position < text.size()) {
    size_t newline = text.find('\n', position);
    if (newline == std::string_view::npos) newline = text.size();
    std::string_view line = text.substr(position, newline - position);
    position = newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t first = 0;
    while (first < line.size() && IsBlank(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;
    if (!lines.empty() && line < lines.back().text) sorted = false;
    lines.push_back({line, line_number});
  }
  any_content = !lines.empty();
  if (!sorted) {
    std::sort(lines.begin(), lines.end(),
              [](const Line& a, const Line& b) { return a.text < b.text; });
  }

  for (const Line& entry : lines) {
    std::string_view line = entry.text;
    uint64_t line_number = entry.number;
    if (line.size() > options.max_line_bytes) {
      report.Warn(Where(options, line_number) + "line of " + std::to_string(line.size()) +
                  " bytes is longer than the limit of " + std::to_string(options.max_line_bytes) +
                  "; skipped");
      continue;
    }

    std::string_view stack;
    std::string_view count_text;
    if (!SplitCount(line, stack, count_text)) {
      report.Warn(Where(options, line_number) +
                  "expected \"frame;frame;... count\" but found no count; skipped");
      continue;
    }
    uint64_t count = 0;
    auto [end, error] =
        std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
    if (error != std::errc() || end != count_text.data() + count_text.size()) {
      report.Warn(Where(options, line_number) + "count \"" + std::string(count_text.substr(0, 40)) +
                  "\" is not a non-negative integer (or is too large); skipped");
      continue;
    }

    frames.clear();
    size_t start = 0;
    while (true) {
      size_t semicolon = stack.find(';', start);
      if (semicolon == std::string_view::npos) {
        frames.push_back(stack.substr(start));
        break;
      }
      frames.push_back(stack.substr(start, semicolon - start));
      start = semicolon + 1;
    }

    std::optional<Category> category;
    std::span<const std::string_view> real_frames = frames;
    std::string_view head = frames.front();
    if (head.starts_with(kCategoryFramePrefix) && head.ends_with(']')) {
      std::string_view name =
          head.substr(kCategoryFramePrefix.size(), head.size() - kCategoryFramePrefix.size() - 1);
      category = ParseCategory(name);
      if (!category) {
        report.Warn(Where(options, line_number) + "unknown category \"" +
                    std::string(name.substr(0, 40)) + "\"; classified from its frames instead");
      }
      real_frames = real_frames.subspan(1);
    }
    // "12" alone or "[category=gc] 12" is weight without frames: it belongs to the root.
    if (real_frames.size() == 1 && real_frames.front().empty()) real_frames = {};
    if (real_frames.size() > options.max_frames_per_stack) {
      report.Warn(Where(options, line_number) + "stack of " + std::to_string(real_frames.size()) +
                  " frames is deeper than the limit of " +
                  std::to_string(options.max_frames_per_stack) + "; skipped");
      continue;
    }
    if (!category) {
      category = options.classifier ? options.classifier(real_frames) : Category::kOther;
    }

    ids.clear();
    size_t shared = 0;
    while (shared < real_frames.size() && shared < previous_frames.size() &&
           real_frames[shared] == previous_frames[shared]) {
      ids.push_back(previous_ids[shared]);
      ++shared;
    }
    for (size_t i = shared; i < real_frames.size(); ++i) {
      ids.push_back(model.InternFrame(real_frames[i]));
    }
    if (model.node_count() + (ids.size() - shared) <= options.max_tree_nodes) {
      model.AddStack(ids, *category, count);  // fast path: cannot pass the limit
    } else {
      NodeId node = model.FindOrInsertPath(ids, options.max_tree_nodes);
      if (node == kNoNode) {
        report.Warn(Where(options, line_number) + "stack skipped: the call tree has reached " +
                    "its limit of " + std::to_string(options.max_tree_nodes) + " nodes");
        continue;
      }
      model.AddWeight(node, *category, count);
    }
    previous_frames.assign(real_frames.begin(), real_frames.end());
    previous_ids.assign(ids.begin(), ids.end());
    ++stacks_read;
  }

  if (any_content && stacks_read == 0) {
    return Corrupt(options.source_name + ": no line in collapsed-stack format (\"frame;frame;... " +
                   "count\") among " + std::to_string(lines.size()) + " line(s); first problem: " +
                   (report.messages.empty() ? std::string("none") : report.messages.front()));
  }
  return Status::Ok();
}

}  // namespace sparkprof::flamegraph
