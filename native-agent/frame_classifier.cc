#include "native-agent/frame_classifier.h"

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

}  // namespace

std::optional<FrameMatch> ClassifyFrame(std::string_view frame) {
  std::string dotted;
  if (frame.find('/') != std::string_view::npos) {
    dotted.assign(frame);
    for (char& c : dotted) {
      if (c == '/') c = '.';
    }
    frame = dotted;
  }
  size_t dot = frame.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view class_name = frame.substr(0, dot);
  std::string_view method = frame.substr(dot + 1);
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
