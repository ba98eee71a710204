// Decides the category of a sample from its frames: the innermost frame that matches a strong
// rule wins; if none does, the innermost weak match; if none, the thread's name (helper pools such
// as s3a-transfer-*); otherwise compute. The rules are data, in frame_classifier_rules.cc.
//
// A small library of its own (sparkprof::frame_classifier) so the flame graph code can colour
// frames with the same rules.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/category.h"

namespace sparkprof::classifier {

// The project-wide categories (common/category.h, same values as schema/profile.fbs).
using ::sparkprof::Category;
using ::sparkprof::CategoryName;
using ::sparkprof::kCategoryCount;

// A weak rule names an outer frame that also runs other kinds of work inside it (e.g. the block
// writer used by both shuffle write and spill): it counts only when no strong rule matches.
// A fallback rule names a JDK primitive that every kind of work uses (FileOutputStream.writeBytes
// under shuffle, spill and user code alike): it counts only when no strong or weak rule and no
// thread-name rule matches, e.g. for an application's own file writes.
enum class Strength : uint8_t { kStrong, kWeak, kFallback };

struct FrameRule {
  // Fully qualified class; a trailing '*' makes it a prefix ("org.apache.parquet.*").
  std::string_view class_pattern;
  // '|'-separated method names that must match exactly; empty = any method.
  std::string_view methods;
  Category category;
  Strength strength;
};

struct ThreadNameRule {
  std::string_view name_prefix;
  Category category;
};

std::span<const FrameRule> FrameRules();
std::span<const ThreadNameRule> ThreadNameRules();

struct FrameMatch {
  Category category;
  Strength strength;
  int rule_index;  // into FrameRules()
};

// Matches one frame, "package.Class.method" (JVM internal '/' separators are accepted too).
std::optional<FrameMatch> ClassifyFrame(std::string_view frame);
std::optional<Category> ClassifyThreadName(std::string_view thread_name);

// `frames` innermost first. The result of ClassifyFrame for each frame may be supplied by the
// caller (cached) through `match_of`; this overload classifies the strings directly.
Category ClassifyStack(std::span<const std::string_view> frames_innermost_first,
                       std::string_view thread_name);

// Combines per-frame matches (innermost first) with the thread rule: the shared core.
Category CombineMatches(std::span<const std::optional<FrameMatch>> matches_innermost_first,
                        std::string_view thread_name);

}  // namespace sparkprof::classifier
