// The kernel's per-thread scheduler statistics, /proc/self/task/<tid>/schedstat: "<ns on CPU>
// <ns runnable but waiting for a CPU (run delay)> <timeslices>". The run delay is what mode
// cpu+wall charges to cpu_starved. Read by the wall timer thread (and on the task thread when its
// tag is set), never in a signal handler: none of this is async-signal-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sparkprof::agent {

// A schedstat line's run delay (second field) and timeslices (third: how many times the thread
// was put on a CPU -- it moves whenever the thread wakes, however briefly it then runs).
struct SchedstatReading {
  int64_t run_delay_ns = 0;
  uint64_t timeslices = 0;
};

// nullopt when the text is not three unsigned decimal fields (a kernel without CONFIG_SCHEDSTATS
// has the file but may write zeros; that parses, as 0).
std::optional<SchedstatReading> ParseSchedstat(std::string_view text);

// Opens /proc/self/task/<tid>/schedstat read-only, close-on-exec; -1 on failure (errno set).
// `task_dir` is for tests.
int OpenSchedstat(pid_t tid, const char* task_dir = "/proc/self/task");

// Reads and parses the file behind `fd` from offset 0 (pread: safe from any thread); nullopt
// when the read fails or the text does not parse.
std::optional<SchedstatReading> ReadSchedstat(int fd);

// The run delay of every thread of this process, in steps (CpuUse.run_delay_steps): how long the
// JVM's threads -- all of them, not only the sampled task threads -- were runnable but had no CPU
// between two polls. What the driver waited for CPUs while no task ran (planning, collecting,
// the gaps between jobs) is told from it; the sampler measures only the task threads' run delay.
// Each poll lists the process's threads (/proc/self/task) and reads each one's schedstat (open,
// read, close: no descriptor is held between polls, so a JVM near its descriptor limit is not
// pushed over it). A thread first seen in a later poll began since the previous one: all of its
// run delay is the step's; the first poll only sets every thread's baseline. A thread that ended
// between two polls takes the run delay of its last part with it (at most one step's).
// A thread that waited nothing in the previous step and used no CPU since (its CPU clock, one
// system call) slept through the step: its schedstat is not read (opening a /proc file costs
// ~6 us; a driver JVM has 100-200 threads, most of them parked), except at least every
// kMaxSkips + 1 polls. Only a thread woken and then kept off every CPU for a whole step -- longer
// than the scheduler lets a runnable thread wait but under a throttled quota -- has its wait
// counted a step or more late.
// A step is at least a millisecond wide: a poll in the previous one's millisecond reads nothing and
// leaves the wait to the next poll (the window's closing poll can follow a periodic one closely).
// A wall clock stepped back by more than kMaxClockStepBackMs makes the poll a new baseline (what
// the threads waited since the previous poll is not counted: its step has no place on the clock).
// Bounded: at most kMaxThreads threads are followed (more are counted, not read) and at most
// kMaxSteps steps are kept until taken (later polls add to the last step). Not
// async-signal-safe; one thread at a time (the drain's).
struct RunDelayStep {
  int64_t start_epoch_ms = 0;
  int64_t end_epoch_ms = 0;
  uint64_t total_ns = 0;    // summed over the threads
  uint64_t busiest_ns = 0;  // the thread that waited longest in the step
};

class ProcessRunDelay {
 public:
  static constexpr size_t kMaxThreads = 4096;
  static constexpr size_t kMaxSteps = 1024;
  static constexpr uint32_t kMaxSkips = 3;
  static constexpr int64_t kMaxClockStepBackMs = 60'000;

  explicit ProcessRunDelay(std::string task_dir = "/proc/self/task")
      : task_dir_(std::move(task_dir)) {}

  // Reads every thread's run delay at `now_epoch_ms`; the step since the previous poll is kept
  // when any thread waited in it. False when the thread list cannot be read (nothing kept).
  bool Poll(int64_t now_epoch_ms);

  // The steps kept since the last call (only those with run delay), the polls made and the run
  // delay summed over them; each starts afresh.
  struct Taken {
    std::vector<RunDelayStep> steps;
    uint32_t polls = 0;
    uint64_t total_ns = 0;
  };
  Taken Take();

  size_t followed() const { return last_.size(); }
  uint64_t threads_not_followed() const { return not_followed_; }
  uint64_t schedstat_reads() const { return reads_; }

 private:
  struct Followed {
    int64_t run_delay_ns = 0;
    uint64_t generation = 0;
    int64_t cpu_ns = -1;   // its CPU clock at the last poll (-1: not readable)
    uint32_t skipped = 0;  // polls since its schedstat was last read
    bool waited = false;   // it waited in the last step read
  };
  std::string task_dir_;
  std::unordered_map<pid_t, Followed> last_;
  uint64_t generation_ = 0;
  int64_t last_poll_ms_ = -1;
  uint64_t not_followed_ = 0;
  uint64_t reads_ = 0;
  Taken taken_;
};

}  // namespace sparkprof::agent
