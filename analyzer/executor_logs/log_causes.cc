// What a hit says as the cause of a death: apart from executor_logs.cc, which reads files through
// the codecs, so that what only renders or judges hits (the report, the kill causes, the driver's
// library) links no codec.
#include "analyzer/executor_logs/executor_logs.h"

namespace sparkprof::executor_logs {

namespace {

// Rank of a hit as the cause of a death (lower first); -1: never the cause.
int CauseRank(LogSignal signal) {
  switch (signal) {
    case LogSignal::kPythonMemoryError:
      return 0;
    case LogSignal::kHeapSpace:
    case LogSignal::kGcOverhead:
    case LogSignal::kDirectBufferMemory:
    case LogSignal::kDirectBelowFetchToMem:
    case LogSignal::kOtherOutOfMemory:
      return 1;
    case LogSignal::kContainerMemoryKill:
    case LogSignal::kPodOomKilled:
      return 2;
    case LogSignal::kKernelOomKill:
      return 3;
    case LogSignal::kPythonWorkerCrashed:
      return 4;
    case LogSignal::kDiskFull:
      return 5;
    case LogSignal::kMetaspace:
    case LogSignal::kNativeThread:
    case LogSignal::kExitCode:
    case LogSignal::kSigterm:
    case LogSignal::kFetchFailed:
      return -1;
  }
  return -1;
}

}  // namespace

model::ExhaustionReading ReadingOf(const LogHit& hit, bool driver) {
  model::ExhaustionReading reading;
  switch (hit.signal) {
    case LogSignal::kKernelOomKill:
      reading.exit_code = 137;
      reading.used_bytes = hit.resident_bytes;  // the victim's; its cgroup's limit is not said
      if (hit.memory_cgroup) reading.what = model::Exhaustion::kContainerMemory;
      return reading;
    case LogSignal::kPodOomKilled:
      reading.exit_code = hit.exit_code >= 0 ? hit.exit_code : 137;
      reading.what = model::Exhaustion::kContainerMemory;
      return reading;
    case LogSignal::kMetaspace:
    case LogSignal::kNativeThread:
    case LogSignal::kSigterm:
    case LogSignal::kFetchFailed:
      return reading;  // no memory the model names; evidence only
    default:
      break;
  }
  // The words name the cause; an exit code alone is only what the log says it is (137 is not
  // read as memory here: the scheduler's own removal reason says where a limit exists).
  reading = model::ReadExhaustion(hit.text, /*exit_137_is_memory=*/false, driver);
  if (reading.exit_code < 0) reading.exit_code = hit.exit_code;
  return reading;
}

const LogHit* ExecutorLogs::CauseFor(const std::string& executor_id) const {
  const LogHit* best = nullptr;
  int best_rank = 0;
  for (const LogHit& hit : hits) {
    if (ExecutorOf(hit) != executor_id) continue;
    const int rank = CauseRank(hit.signal);
    if (rank < 0 || ReadingOf(hit, executor_id == "driver").what == model::Exhaustion::kUnknown) {
      continue;
    }
    if (best == nullptr || rank < best_rank) best = &hit, best_rank = rank;
  }
  return best;
}

}  // namespace sparkprof::executor_logs
