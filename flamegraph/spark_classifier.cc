#include "flamegraph/spark_classifier.h"

#include <algorithm>
#include <vector>

#ifdef SPARKPROF_HAVE_FRAME_CLASSIFIER
#include "native-agent/frame_classifier.h"
#endif

namespace sparkprof::flamegraph {

#ifdef SPARKPROF_HAVE_FRAME_CLASSIFIER
// Both enums mirror `enum Category` in schema/profile.fbs, value for value.
static_assert(classifier::kCategoryCount == kCategoryCount);
static_assert(static_cast<int>(classifier::Category::kSerialization) ==
              CategoryIndex(Category::kSerialization));
static_assert(static_cast<int>(classifier::Category::kOther) == CategoryIndex(Category::kOther));

FrameClassifier SparkFrameClassifier() {
  return [innermost_first = std::vector<std::string_view>()](
             std::span<const std::string_view> root_first) mutable {
    innermost_first.assign(root_first.rbegin(), root_first.rend());
    return static_cast<Category>(classifier::ClassifyStack(innermost_first, /*thread_name=*/""));
  };
}
#else
FrameClassifier SparkFrameClassifier() { return {}; }
#endif

}  // namespace sparkprof::flamegraph
