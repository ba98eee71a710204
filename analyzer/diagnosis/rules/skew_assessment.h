// Is a stage skewed, and is the skew in the data (one partition holds more rows/bytes) or in the
// hardware (the slow task read as much as the others but its host was slow)? Shared by data-skew
// and by the rules that must name skew as the root cause of their symptom (spill, gc-pressure,
// task-failures) instead of recommending more memory for every executor.
#pragma once

#include "analyzer/diagnosis/stage_stats.h"

namespace sparkprof::diagnosis::rules {

enum class SkewKind { kNone, kData, kSlowHost, kTime };

struct SkewAssessment {
  SkewKind kind = SkewKind::kNone;
  double time_ratio = 0;   // max / median task time
  double bytes_ratio = 0;  // bytes read by the longest task / median bytes read (0: unknown)
  double records_ratio = 0;
  // The longest task belongs to a first wave that was slow as a whole (StageStats): JVM warm-up
  // (class loading, JIT, code generation), not a straggler speculation would fix.
  bool warm_up = false;
};

// Thresholds (see data_skew.cc for the sources):
//   >= 5 successful tasks, max/median task time >= 4, max task >= 5 s, or (short runs) a tail
//   (max - median) >= 10% of the application's wall time and >= 1 s;
//   data: the longest task read >= 2x the median bytes or records;
//   slow host: otherwise, when the other tasks on the longest task's host also took >= 2x the
//   median.
SkewAssessment AssessSkew(const StageStats& stage, int64_t wall_ms);

// Skew explains a symptom concentrated in the slow tasks when at least this share of it sits there.
inline constexpr double kRootCauseShare = 0.5;

}  // namespace sparkprof::diagnosis::rules
