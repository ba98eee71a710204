// Fuzzes the parser of the Python workers' files (another process writes them): arbitrary bytes
// are refused with a located reason or parsed within the bounds, and every frame sanitised.
#include <cstdint>
#include <string>
#include <string_view>

#include "native-agent/python_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace agent = sparkprof::agent;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  agent::PythonTaskProfile profile;
  if (std::optional<std::string> error = agent::ParsePythonProfile(text, profile)) {
    if (error->rfind("line ", 0) != 0 && error->rfind("the file holds", 0) != 0) __builtin_trap();
    return 0;
  }
  if (profile.stacks.size() > agent::kMaxPythonStacks) __builtin_trap();
  size_t bytes = 0;
  for (const agent::PythonStackRecord& stack : profile.stacks) {
    if (stack.frames.size() > agent::kMaxPythonFrames) __builtin_trap();
    for (std::string_view frame : stack.frames) {
      std::string clean = agent::SanitisePythonFrame(frame);
      if (clean.empty() || clean.size() > agent::kMaxPythonFrameBytes) __builtin_trap();
      for (unsigned char c : clean) {
        if (c < 0x20 || c == 0x7f) __builtin_trap();
      }
      bytes += clean.size();
    }
  }
  volatile size_t sink = bytes;
  (void)sink;
  return 0;
}
