// `sparkprof analyze LOG --logs DIR`: the executors' and the driver's own logs, read where the
// cluster manager leaves them, joined to the event log's executors (issue 29 goal 3). Layouts:
//   standalone   a Worker's work directory: <app-id>/<executor-id>/stderr|stdout (rolled files
//                stderr--<time>, gzipped or not, too);
//   YARN         aggregated logs as `yarn logs -applicationId <id>` prints them, saved to a file
//                (log_scanner.h reads its "Container:" sections; a container is named by its
//                "Starting executor ID" line, or the driver's "Running Spark version");
//   Kubernetes   pod descriptions from `kubectl get pod -o json` (*.json: labels and termination
//                states, pod_status.h) beside pod logs (`kubectl logs POD > POD.log`: a file or a
//                folder named after the pod);
//   Databricks   cluster log delivery: <cluster-id>/driver/{stdout,stderr,log4j-active.log} and
//                <cluster-id>/executor/<app-id>/<n>/{stdout,stderr}, rolled files gzipped;
//   kernel       dmesg / journal text ("Memory cgroup out of memory: Killed process <pid>"),
//                joined to the executor whose log named that pid.
// Other files are looked at by name only: stdout*, stderr*, log4j*, *.log, *.txt, *.out, *.err,
// *.json, dmesg*, kern*, syslog*, messages* (each maybe .gz or another event-log codec); the rest
// are counted as not read. Local paths only (a directory or one file); an fsspec URL is the
// Python package's: sparkprof.analyze(..., logs=URL) copies the files named so to a temporary
// directory first (python/src/sparkprof/executor_logs.py), then calls this.
//
// Bounded (docs/limits.md): files looked at, decoded bytes per file and in all, lines per file,
// line length, pod JSON size, hits kept. Hostile input gives located problems, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/executor_logs/log_hits.h"
#include "analyzer/executor_logs/log_scanner.h"
#include "analyzer/model/failure_causes.h"
#include "common/status.h"

namespace sparkprof::executor_logs {

struct LogReadLimits {
  ScanLimits scan;
  uint64_t max_files = 10'000;                   // files looked at below the path
  uint64_t max_total_bytes = uint64_t{4} << 30;  // decoded bytes read over all files
  uint64_t max_pod_json_bytes = uint64_t{64} << 20;
  int max_depth = 16;       // directory levels below the path
  size_t max_hits = 2'000;  // distinct hits kept (repeats are counted on their first)
};

struct ExecutorLogs {
  std::string source;  // the path given
  std::vector<LogProcess> processes;
  std::vector<LogHit> hits;    // of this application (or of no known one), by time, file, line
  uint64_t hits_left_out = 0;  // past max_hits
  uint64_t other_application_hits = 0;  // in processes of another application: dropped
  uint64_t files_read = 0;
  uint64_t files_not_logs = 0;  // not read: not a log by name
  uint64_t files_left_out = 0;  // not read: past max_files or max_total_bytes
  uint64_t bytes_read = 0;      // decoded
  uint64_t lines_read = 0;
  std::vector<std::string> layouts;  // "standalone", "yarn", "kubernetes", "databricks", "kernel"
  LogProblems problems;

  // The executor id a hit's process has ("driver"; "" when its log never said).
  const std::string& ExecutorOf(const LogHit& hit) const {
    return processes[hit.process].executor_id;
  }
  // The hit that best tells why executor `executor_id` ("driver") died, or null: a Python
  // MemoryError, then the JVM's OutOfMemoryError (heap, GC overhead, direct buffers) or its refusal
  // to start with direct memory below spark.network.maxRemoteBlockSizeFetchToMem, then a container
  // killed for memory (YARN, Kubernetes OOMKilled, the kernel in a memory cgroup), then a crashed
  // Python worker, then a full disk. Hits whose words name no cause (an exit code alone, Metaspace,
  // native threads, SIGTERM) are evidence, never the cause.
  const LogHit* CauseFor(const std::string& executor_id) const;
};

// What a hit says ran out, in the model's words (model::ReadExhaustion over its line; a kernel
// kill in a memory cgroup and a pod OOMKilled are the container's limit).
model::ExhaustionReading ReadingOf(const LogHit& hit, bool driver);

// Whether a file called `name` is looked at (the names above); the Python package copies only
// these from a URL.
bool IsLogName(std::string_view name);

// Reads the logs at `path` (a directory or one file) that belong to application `app_id` (its
// spark.app.id; processes of other applications are dropped and counted, processes of no
// known application kept). NotFound when `path` does not exist.
Result<ExecutorLogs> ReadExecutorLogs(const std::string& path, const std::string& app_id,
                                      const LogReadLimits& limits = {});

// The same over bytes already in memory, as one file called `display_name` (tests, fuzzing).
ExecutorLogs ReadExecutorLogBytes(const std::string& display_name, std::string bytes,
                                  const std::string& app_id, const LogReadLimits& limits = {});

}  // namespace sparkprof::executor_logs
