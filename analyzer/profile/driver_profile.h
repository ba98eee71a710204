// The driver's own samples, kept in time so the diagnosis can ask what the driver did while no
// task ran.
//
// A batch from executor "driver" (the driver JVM's agent, drained by the driver plugin -- or, in
// local mode, by the executor plugin sharing that JVM) holds, outside any task, the CPU samples
// of the driver's threads: the application's main thread, the query planner, the scheduler, the
// JVM's GC and compiler threads. A batch is aggregated over its window (the flush interval, 5 s by
// default), so time is known only to that window: a sum over an interval takes each window's
// samples in proportion to how much of the window the interval covers (as if spread evenly over
// it; the error is at most one window at each end of the interval).
//
// Each sample is charged to one "activity": its thread, whether it was on CPU, and the frame that
// says what it did --
// the innermost frame of the application's code (JVM or Python: the function the driver program
// was in), else the innermost frame outside the JDK and Scala's library (the Spark or Hadoop code
// it was in), else its innermost frame. A window keeps its kTopActivities largest activities;
// the rest is summed as `other_ns`. At most kMaxWindows windows are kept (docs/limits.md: a
// 5-second flush interval covers a day); later windows are counted, never kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/profile/spans.h"
#include "flamegraph/profile_file_reader.h"
#include "flamegraph/read_report.h"

namespace sparkprof::profile {

struct DriverActivity {
  std::string thread;
  std::string frame;
  bool application = false;  // `frame` is the application's own code
  bool python = false;       // `frame` is a Python frame (the Python driver program)
  bool off_cpu = false;      // its samples were off CPU (the Python driver's own waits)
};

struct DriverActivityTime {
  uint32_t activity = 0;  // index into DriverProfile::activities
  uint64_t ns = 0;
};

struct DriverWindow {
  int64_t start_epoch_ns = 0;
  int64_t end_epoch_ns = 0;
  uint64_t threads_ns = 0;  // the driver's threads on CPU (every category but gc, jit, vm)
  uint64_t jvm_ns = 0;      // the JVM's own threads: gc, jit, vm
  uint64_t off_cpu_ns = 0;  // of threads_ns, off CPU (a Python driver's own waits)
  std::vector<DriverActivityTime> top;  // of threads_ns, most first
  uint64_t other_ns = 0;                // threads_ns outside `top`
  // The Python driver program's main thread (its sampler, sparkprof_driver.py): on CPU, and of
  // its off-CPU time the kernel's run delay (under kPythonRunnableFrame). Both in threads_ns.
  uint64_t python_cpu_ns = 0;
  uint64_t python_run_delay_ns = 0;
};

inline constexpr size_t kTopActivities = 8;
inline constexpr size_t kMaxDriverWindows = 20'000;
inline constexpr size_t kMaxDriverActivities = 100'000;

// What the driver did within some intervals (see DriverProfile::Within).
struct DriverTime {
  int64_t covered_ms = 0;            // of the intervals, the part some driver window covers
  uint64_t threads_ns = 0;           // the driver's threads on CPU within them
  uint64_t jvm_ns = 0;               // the JVM's own threads
  uint64_t off_cpu_ns = 0;           // of threads_ns, off CPU
  uint64_t other_ns = 0;             // of threads_ns, activities too small to be kept per window
  bool python = false;               // some of it is the Python driver program's (its sampler ran)
  uint64_t python_run_delay_ns = 0;  // of off_cpu_ns, its main thread's run delay
  std::vector<DriverActivityTime> activities;  // of threads_ns, most first
};

struct DriverProfile {
  std::vector<DriverActivity> activities;
  std::vector<DriverWindow> windows;  // by start
  std::string sampled_mode;           // the driver batches' Batch.mode ("cpu", "cpu+wall")
  uint64_t windows_left_out = 0;      // past kMaxDriverWindows
  uint64_t ns_left_out = 0;
  uint64_t activities_left_out_ns = 0;  // samples past kMaxDriverActivities (in other_ns)

  bool empty() const { return windows.empty(); }
  // The samples within the union of `intervals_ms` ([start, end) epoch ms, sorted by start,
  // not overlapping), each window's samples taken in proportion to its overlap.
  DriverTime Within(std::span<const std::pair<int64_t, int64_t>> intervals_ms) const;
  // Every window, whole.
  DriverTime Total() const;
  // The windows of the Python driver program's sampler (those with its CPU or run delay), by
  // start.
  std::vector<ProcessWindow> PythonWindows() const;
};

// Gathers the driver's untagged samples while a profile is read (ProfileFileReadOptions::
// untagged), then hands over the DriverProfile.
class DriverProfileBuilder {
 public:
  static void Receive(void* context, const flamegraph::UntaggedSample& sample);
  void Add(const flamegraph::UntaggedSample& sample);
  // Names what was left out in `report` (after `source_name`).
  DriverProfile Finish(const std::string& source_name, flamegraph::ReadReport& report);

 private:
  struct OpenWindow {
    uint64_t jvm_ns = 0;
    uint64_t off_cpu_ns = 0;
    uint64_t python_cpu_ns = 0;
    uint64_t python_run_delay_ns = 0;
    std::unordered_map<uint32_t, uint64_t> by_activity;
  };
  uint32_t ActivityOf(const flamegraph::UntaggedSample& sample);

  DriverProfile profile_;
  // thread + '\t' + frame + '\t' + off CPU
  std::unordered_map<std::string, uint32_t> activity_index_;
  std::map<std::pair<int64_t, int64_t>, OpenWindow> open_;  // by (start, end)
  uint32_t overflow_activity_ = UINT32_MAX;  // "[more activities than kept]", once needed
};

}  // namespace sparkprof::profile
