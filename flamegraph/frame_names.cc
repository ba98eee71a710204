#include "flamegraph/frame_names.h"

#include <array>

namespace sparkprof::flamegraph {
namespace {

bool IsJavaNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '/' || c == '.' || c == '<' || c == '>' || c == '-';
}

}  // namespace

std::string ReadableFrameName(std::string_view raw) {
  size_t name_end = raw.find_first_of("( \t");
  if (name_end == std::string_view::npos) name_end = raw.size();
  std::string_view name = raw.substr(0, name_end);
  // Java class names start with a letter, '_' or '$' ("<init>" may only follow a '.').
  bool java_like = !name.empty() && IsJavaNameChar(name.front()) && name.front() != '/' &&
                   name.front() != '.' && name.front() != '<' && name.front() != '>' &&
                   name.front() != '-' && name.find('/') != std::string_view::npos;
  for (char c : name) java_like = java_like && IsJavaNameChar(c);
  std::string readable(raw);
  if (java_like) {
    for (size_t i = 0; i < name_end; ++i) {
      if (readable[i] == '/') readable[i] = '.';
    }
  }
  return readable;
}

std::string_view FrameKindName(FrameKind kind) {
  static constexpr std::array<std::string_view, kFrameKindCount> kNames = {"java", "inlined", "c++",
                                                                           "kernel", "native"};
  return kNames[static_cast<int>(kind)];
}

FrameKind ClassifyFrameKind(std::string_view raw) {
  if (raw.ends_with("_[j]")) return FrameKind::kJava;
  if (raw.ends_with("_[i]")) return FrameKind::kInlined;
  if (raw.ends_with("_[k]")) return FrameKind::kKernel;
  if (raw.find("::") != std::string_view::npos) return FrameKind::kCpp;
  if (!raw.empty() && raw.front() != '/' && raw.find('/') != std::string_view::npos) {
    return FrameKind::kJava;
  }
  static constexpr std::array<std::string_view, 10> kJavaPackages = {
      "java.", "javax.", "jdk.", "sun.", "com.", "org.", "net.", "io.", "scala.", "kotlin."};
  for (std::string_view prefix : kJavaPackages) {
    if (raw.starts_with(prefix)) return FrameKind::kJava;
  }
  return FrameKind::kNative;
}

}  // namespace sparkprof::flamegraph
