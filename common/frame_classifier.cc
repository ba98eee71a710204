#include "common/frame_classifier.h"

#include <string>
#include <vector>

namespace sparkprof::classifier {
namespace {

bool MethodListContains(std::string_view list, std::string_view method) {
  while (!list.empty()) {
    size_t bar = list.find('|');
    if (list.substr(0, bar) == method) return true;
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return false;
}

bool ClassMatches(std::string_view pattern, std::string_view class_name) {
  if (!pattern.empty() && pattern.back() == '*') {
    return class_name.starts_with(pattern.substr(0, pattern.size() - 1));
  }
  return class_name == pattern;
}

// "package/Class.method" or "package.Class.method" -> class and method; false without a dot.
// `dotted` holds the converted text when the frame has slashes.
bool SplitFrame(std::string_view frame, std::string& dotted, std::string_view* class_name,
                std::string_view* method) {
  if (frame.find('/') != std::string_view::npos) {
    dotted.assign(frame);
    for (char& c : dotted) {
      if (c == '/') c = '.';
    }
    frame = dotted;
  }
  size_t dot = frame.rfind('.');
  if (dot == std::string_view::npos) return false;
  *class_name = frame.substr(0, dot);
  *method = frame.substr(dot + 1);
  return true;
}

template <typename Rule>
int16_t FirstMatch(std::span<const Rule> rules, std::string_view class_name,
                   std::string_view method) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!ClassMatches(rules[i].class_pattern, class_name)) continue;
    if (!rules[i].methods.empty() && !MethodListContains(rules[i].methods, method)) continue;
    return static_cast<int16_t>(i);
  }
  return -1;
}

}  // namespace

WaitFrameMatch MatchWaitFrame(std::string_view frame) {
  std::string dotted;
  std::string_view class_name, method;
  WaitFrameMatch match;
  if (!SplitFrame(frame, dotted, &class_name, &method)) return match;
  match.primitive_rule = FirstMatch(WaitPrimitiveRules(), class_name, method);
  match.wait_rule = FirstMatch(WaitRules(), class_name, method);
  return match;
}

Category CombineWaitMatches(std::span<const WaitFrameMatch> matches_innermost_first,
                            bool blocked_in_jvm) {
  auto primitives = WaitPrimitiveRules();
  auto rules = WaitRules();
  size_t leaf = matches_innermost_first.size();
  for (size_t i = 0; i < matches_innermost_first.size() && i < kWaitLeafFrames; ++i) {
    if (matches_innermost_first[i].primitive_rule >= 0) {
      leaf = i;
      break;
    }
  }
  if (leaf == matches_innermost_first.size()) {
    return blocked_in_jvm ? Category::kLockWait : Category::kOffCpuOther;
  }
  const WaitPrimitiveRule& primitive =
      primitives[static_cast<size_t>(matches_innermost_first[leaf].primitive_rule)];
  const uint8_t bit = PrimitiveBit(primitive.primitive);
  std::optional<Category> weak;
  bool in_primitive = true;  // the primitive's own wrappers (LockSupport.park over Unsafe.park)
  for (size_t i = leaf + 1; i < matches_innermost_first.size(); ++i) {
    const WaitFrameMatch& match = matches_innermost_first[i];
    if (in_primitive && match.primitive_rule >= 0) continue;
    in_primitive = false;
    if (match.wait_rule < 0) continue;
    const WaitRule& rule = rules[static_cast<size_t>(match.wait_rule)];
    if ((rule.primitives & bit) == 0) continue;
    if (rule.strength == Strength::kStrong) return rule.category;
    if (!weak) weak = rule.category;
  }
  return weak ? *weak : primitive.category;
}

Category ClassifyOffCpuStack(std::span<const std::string_view> frames_innermost_first,
                             bool blocked_in_jvm) {
  std::vector<WaitFrameMatch> matches;
  matches.reserve(frames_innermost_first.size());
  for (std::string_view frame : frames_innermost_first) matches.push_back(MatchWaitFrame(frame));
  return CombineWaitMatches(matches, blocked_in_jvm);
}

std::optional<FrameMatch> ClassifyFrame(std::string_view frame) {
  std::string dotted;
  std::string_view class_name, method;
  if (!SplitFrame(frame, dotted, &class_name, &method)) return std::nullopt;
  auto rules = FrameRules();
  for (size_t i = 0; i < rules.size(); ++i) {
    const FrameRule& rule = rules[i];
    if (!ClassMatches(rule.class_pattern, class_name)) continue;
    if (!rule.methods.empty() && !MethodListContains(rule.methods, method)) continue;
    return FrameMatch{rule.category, rule.strength, static_cast<int>(i)};
  }
  return std::nullopt;
}

std::optional<Category> ClassifyThreadName(std::string_view thread_name) {
  for (const ThreadNameRule& rule : ThreadNameRules()) {
    if (thread_name.starts_with(rule.name_prefix)) return rule.category;
  }
  return std::nullopt;
}

Category CombineMatches(std::span<const std::optional<FrameMatch>> matches_innermost_first,
                        std::string_view thread_name) {
  std::optional<Category> weak;
  std::optional<Category> fallback;
  for (const auto& match : matches_innermost_first) {
    if (!match) continue;
    if (match->strength == Strength::kStrong) return match->category;
    if (match->strength == Strength::kWeak && !weak) weak = match->category;
    if (match->strength == Strength::kFallback && !fallback) fallback = match->category;
  }
  if (weak) return *weak;
  if (auto by_thread = ClassifyThreadName(thread_name)) return *by_thread;
  if (fallback) return *fallback;
  return Category::kCompute;
}

Category ClassifyStack(std::span<const std::string_view> frames_innermost_first,
                       std::string_view thread_name) {
  std::vector<std::optional<FrameMatch>> matches;
  matches.reserve(frames_innermost_first.size());
  for (std::string_view frame : frames_innermost_first) matches.push_back(ClassifyFrame(frame));
  return CombineMatches(matches, thread_name);
}

}  // namespace sparkprof::classifier
