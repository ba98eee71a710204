#include "flamegraph/spark_classifier.h"

#include <algorithm>
#include <vector>

#ifdef SPARKPROF_HAVE_FRAME_CLASSIFIER
#include "native-agent/frame_classifier.h"
#endif

namespace sparkprof::flamegraph {

#ifdef SPARKPROF_HAVE_FRAME_CLASSIFIER
FrameClassifier SparkFrameClassifier() {
  return [innermost_first = std::vector<std::string_view>()](
             std::span<const std::string_view> root_first) mutable {
    innermost_first.assign(root_first.rbegin(), root_first.rend());
    return classifier::ClassifyStack(innermost_first, /*thread_name=*/"");
  };
}
#else
FrameClassifier SparkFrameClassifier() { return {}; }
#endif

}  // namespace sparkprof::flamegraph
