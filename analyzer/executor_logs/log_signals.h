// What an executor's or the driver's own log says that the event log may not: the lines that tell
// why a JVM or a Python worker died (issue 29 goal 3). One table of signals, each with the words
// that find it; the reader (log_scanner.h) asks every line against it.
//
// The signals only find and locate; which memory ran out is decided by the model's vocabulary of
// Spark's words (model::ReadExhaustion, analyzer/model/failure_causes.h), so a log's "Java heap
// space" and an event log's are read the same way.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "common/civil_time.h"

namespace sparkprof::executor_logs {

// X(enumerator, name in reports, what it is). A list lives in one place: the names, the
// matching and the reports all visit this one.
#define SPARKPROF_LOG_SIGNALS(X)                                                                  \
  X(kHeapSpace, "java-heap-space", "java.lang.OutOfMemoryError: Java heap space")                 \
  X(kGcOverhead, "gc-overhead-limit", "java.lang.OutOfMemoryError: GC overhead limit exceeded")   \
  X(kDirectBufferMemory, "direct-buffer-memory",                                                  \
    "java.lang.OutOfMemoryError: Direct buffer memory, Netty's OutOfDirectMemoryError")           \
  X(kDirectBelowFetchToMem, "direct-below-fetch-to-mem",                                          \
    "an executor refused to start: Netty direct memory below "                                    \
    "spark.network.maxRemoteBlockSizeFetchToMem")                                                 \
  X(kMetaspace, "metaspace", "java.lang.OutOfMemoryError: Metaspace / Compressed class space")    \
  X(kNativeThread, "native-thread", "java.lang.OutOfMemoryError: unable to create native thread") \
  X(kOtherOutOfMemory, "out-of-memory", "another java.lang.OutOfMemoryError")                     \
  X(kContainerMemoryKill, "container-memory-kill",                                                \
    "a container killed for exceeding its memory limit (YARN's words)")                           \
  X(kKernelOomKill, "kernel-oom-kill", "the kernel's OOM killer ended a process (dmesg)")         \
  X(kPodOomKilled, "pod-oom-killed", "a Kubernetes container terminated OOMKilled")               \
  X(kExitCode, "exit-code", "a process's exit code")                                              \
  X(kSigterm, "sigterm", "the JVM received SIGTERM (stopped by its manager)")                     \
  X(kPythonWorkerCrashed, "python-worker-crashed", "Python worker exited unexpectedly (crashed)") \
  X(kPythonMemoryError, "python-memory-error", "a Python MemoryError")                            \
  X(kDiskFull, "disk-full", "No space left on device")                                            \
  X(kFetchFailed, "fetch-failed", "a shuffle fetch failed (FetchFailedException and its cause)")

enum class LogSignal : uint8_t {
#define SPARKPROF_LOG_SIGNAL_ENUM(id, name, what) id,
  SPARKPROF_LOG_SIGNALS(SPARKPROF_LOG_SIGNAL_ENUM)
#undef SPARKPROF_LOG_SIGNAL_ENUM
};
// One element per signal: their count.
inline constexpr unsigned char kLogSignalOnes[] = {
#define SPARKPROF_LOG_SIGNAL_ONE(id, name, what) 1,
    SPARKPROF_LOG_SIGNALS(SPARKPROF_LOG_SIGNAL_ONE)
#undef SPARKPROF_LOG_SIGNAL_ONE
};
inline constexpr int kLogSignalCount = static_cast<int>(std::size(kLogSignalOnes));

const char* LogSignalName(LogSignal signal);  // "java-heap-space", ...
const char* LogSignalWhat(LogSignal signal);  // "java.lang.OutOfMemoryError: Java heap space"

struct SignalMatch {
  LogSignal signal;
  int exit_code = -1;          // kExitCode, kContainerMemoryKill when the words carry one
  int64_t pid = -1;            // kKernelOomKill: the process the kernel ended
  bool memory_cgroup = false;  // kKernelOomKill: a memory cgroup's limit, not the host's memory
  // kKernelOomKill: the victim's resident set when killed (anon-rss + file-rss + shmem-rss), -1
  int64_t resident_bytes = -1;
};
// The signal one line holds, or nullopt. A line is one physical line without its end. Lines
// that quote another process's failure (the driver's "Lost task ... (executor 2):
// java.lang.OutOfMemoryError", a job's abort message) hold none: the process that failed says
// it in its own log.
std::optional<SignalMatch> MatchSignal(std::string_view line);

// What a line says of the process it is in (not signals): "Starting executor ID 3 on host",
// "Started daemon with process name: 4242@host", "Running Spark version" (the driver).
struct OwnerMarks {
  std::string executor_id;  // "" when the line names none
  int64_t pid = -1;
  bool driver = false;
};
OwnerMarks ReadOwnerMarks(std::string_view line);

// The time a line starts with, as log4j and the kernel write it: "26/11/29 16:30:20" (Spark's
// default pattern yy/MM/dd HH:mm:ss), "2026-11-29 16:30:20,123", "2026-11-29T16:30:20.123Z"
// (ISO, kubectl --timestamps), a JSON line's "ts" (Spark's structured logging), "[Sun Nov 29
// 16:30:20 2026]" (dmesg -T). `text`: as written (at most 32 bytes); `epoch_ms`: read as UTC
// (log4j writes the host's local time and names no zone), -1 when the line has no such time.
struct LogTime {
  std::string text;
  int64_t epoch_ms = -1;
};
LogTime ReadLogTime(std::string_view line);
using sparkprof::ParseIsoTime;  // common/civil_time.h

}  // namespace sparkprof::executor_logs
