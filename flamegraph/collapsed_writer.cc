#include "flamegraph/collapsed_writer.h"

#include <string_view>
#include <vector>

#include "flamegraph/escaping.h"

namespace sparkprof::flamegraph {
namespace {

void AppendFrame(std::string_view name, std::string& out) {
  for (char c : name) {
    if (c == ';') {
      out.push_back(':');
    } else if (c == '\n' || c == '\r') {
      // Not a blank: a leaf frame ending in blanks would lose them to the count separator.
      out.push_back('_');
    } else {
      out.push_back(c);
    }
  }
}

// Whether a line starting with this frame would be read back as a comment (its first byte
// after blanks is '#').
bool ReadsAsComment(std::string_view first_frame) {
  const size_t text = first_frame.find_first_not_of(" \t");
  return text != std::string_view::npos && first_frame[text] == '#';
}

}  // namespace

void WriteCollapsed(const ProfileModel& model, const CollapsedWriteOptions& options,
                    std::string& out) {
  // Frames are cleaned once per distinct name, not once per line.
  std::vector<std::string> cleaned(model.strings().size());
  std::vector<bool> cleaned_ready(model.strings().size(), false);
  model.ForEachStack([&](std::span<const FrameId> frames, Category category, uint64_t weight) {
    bool annotate =
        options.annotation == CategoryAnnotation::kAlways ||
        (options.annotation == CategoryAnnotation::kAllButOther && category != Category::kOther) ||
        // A real first frame that looks like an annotation must not be read as one, nor one
        // that starts like a comment make the line one.
        (options.annotation != CategoryAnnotation::kNever && !frames.empty() &&
         (model.FrameName(frames.front()).starts_with(kCategoryFramePrefix) ||
          ReadsAsComment(model.FrameName(frames.front()))));
    bool need_separator = false;
    if (annotate) {
      out.append(kCategoryFramePrefix);
      out.append(CategoryName(category));
      out.push_back(']');
      need_separator = true;
    }
    for (FrameId frame : frames) {
      if (need_separator) out.push_back(';');
      need_separator = true;
      if (!cleaned_ready[frame]) {
        AppendFrame(model.FrameName(frame), cleaned[frame]);
        cleaned_ready[frame] = true;
      }
      out.append(cleaned[frame]);
    }
    out.push_back(' ');
    AppendDecimal(weight, out);
    out.push_back('\n');
  });
}

}  // namespace sparkprof::flamegraph
