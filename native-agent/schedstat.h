// The kernel's per-thread scheduler statistics, /proc/self/task/<tid>/schedstat: "<ns on CPU>
// <ns runnable but waiting for a CPU (run delay)> <timeslices>". The run delay is what mode
// cpu+wall charges to cpu_starved. Read by the wall timer thread (and on the task thread when its
// tag is set), never in a signal handler: none of this is async-signal-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

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

}  // namespace sparkprof::agent
