#include "flamegraph/spark_classifier.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/frame_classifier.h"

namespace sparkprof::flamegraph {

FrameClassifier SparkFrameClassifier() {
  return [innermost_first = std::vector<std::string_view>()](
             std::span<const std::string_view> root_first) mutable {
    innermost_first.assign(root_first.rbegin(), root_first.rend());
    return classifier::ClassifyStack(innermost_first, /*thread_name=*/"");
  };
}

PerFrameClassifier SparkPerFrameClassifier() {
  PerFrameClassifier result;
  // 0: no rule matched; otherwise the index of the matching rule plus one.
  result.classify_frame = [](std::string_view frame) -> uint32_t {
    std::optional<classifier::FrameMatch> match = classifier::ClassifyFrame(frame);
    return match ? static_cast<uint32_t>(match->rule_index) + 1 : 0;
  };
  result.combine = [matches = std::vector<std::optional<classifier::FrameMatch>>()](
                       std::span<const uint32_t> results_innermost_first) mutable {
    std::span<const classifier::FrameRule> rules = classifier::FrameRules();
    matches.clear();
    for (uint32_t result : results_innermost_first) {
      if (result == 0) {
        matches.emplace_back();
      } else {
        const classifier::FrameRule& rule = rules[result - 1];
        matches.push_back(
            classifier::FrameMatch{rule.category, rule.strength, static_cast<int>(result - 1)});
      }
    }
    return classifier::CombineMatches(matches, /*thread_name=*/"");
  };
  return result;
}

}  // namespace sparkprof::flamegraph
