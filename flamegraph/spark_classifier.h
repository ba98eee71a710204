// The agent's Spark frame classifier (common/frame_classifier.h: rules as data, innermost
// matching frame wins, compute otherwise) as a FrameClassifier for collapsed stacks, so
// async-profiler output gets the same categories as the agent's own profiles.
#pragma once

#include "flamegraph/collapsed_reader.h"

namespace sparkprof::flamegraph {

FrameClassifier SparkFrameClassifier();
// The same rules, each frame name matched once (what readers of big profiles should use).
PerFrameClassifier SparkPerFrameClassifier();

}  // namespace sparkprof::flamegraph
