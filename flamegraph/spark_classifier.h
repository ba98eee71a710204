// The agent's Spark frame classifier (native-agent/frame_classifier.h: rules as data, innermost
// matching frame wins, compute otherwise) as a FrameClassifier for collapsed stacks, so
// async-profiler output gets the same categories as the agent's own profiles.
#pragma once

#include "flamegraph/collapsed_reader.h"

namespace sparkprof::flamegraph {

// Empty (every unannotated line counts as `other`) when this build has no agent classifier
// (configured with -DSPARKPROF_AGENT=OFF).
FrameClassifier SparkFrameClassifier();
// The same rules, each frame name matched once (what readers of big profiles should use); empty
// in a build without the agent.
PerFrameClassifier SparkPerFrameClassifier();

}  // namespace sparkprof::flamegraph
