// Problems a reader met and stepped over: counted, and the first few kept with their location
// ("profile.txt:12: ..."), so a bad line or batch never stops the rest of the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparkprof::flamegraph {

struct ReadReport {
  static constexpr size_t kMaxKeptMessages = 20;

  uint64_t problem_count = 0;
  std::vector<std::string> messages;  // the first kMaxKeptMessages problems

  void Warn(std::string message) {
    ++problem_count;
    if (messages.size() < kMaxKeptMessages) messages.push_back(std::move(message));
  }
};

}  // namespace sparkprof::flamegraph
