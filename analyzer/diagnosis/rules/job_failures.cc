// job-failures: a job was aborted (or the application exited with an error). Nothing else in the
// report matters as much: the run did not produce its result, so this finding is always critical
// and always first (Diagnose() orders it ahead of every saving-ranked finding).
//
// Per failed job: the stage whose failure aborted it (a failed stage attempt of the job; the one
// Spark names "Job aborted due to stage failure", else the last to fail), the task index that
// failed most often in that stage and its last failure (exception class and first message line),
// and the cause (analyzer/model/failure_causes.h) with the fix for that cause:
//   a memory or the disk ran out -> said first, with its numbers and the fix sized from them
//                      (rules/kill_causes.h: executor heap, container limit, Python worker,
//                      direct buffers, the driver's result size or heap, a full disk); a job
//                      aborted with no failed task to read (maxResultSize kills the tasks) is
//                      read from Spark's message;
//   fetch failure   -> keep shuffle files when executors go (external shuffle service /
//                      decommissioning), then the reason the executors went;
//   executor lost   -> the executors' own logs and the cluster manager's reason;
//   user code       -> the exception itself: no setting fixes it.
// Also: a Spark 4 ApplicationEnd with a non-zero exit code, and failed SQL executions with no
// failed job (errors raised on the driver before or after the jobs ran).
// Not failures: the jobs and SQL executions of a streaming query's batch that the query's stop
// cancelled (its run's job group cancelled, the run terminated without an error; the report's
// streaming section counts them).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "analyzer/diagnosis/rules/kill_causes.h"
#include "analyzer/diagnosis/rules/rules.h"
#include "analyzer/model/failure_causes.h"

namespace sparkprof::diagnosis::rules {

namespace {

// "... (TID 9) (127.0.0.1 executor 0): java.lang.RuntimeException: boom" -> the exception class,
// when the message names one after the last "): ".
std::string ExceptionClassIn(const std::string& message) {
  size_t at = message.rfind("): ");
  if (at == std::string::npos) return "";
  std::string rest = message.substr(at + 3);
  size_t colon = rest.find(':');
  std::string name = rest.substr(0, colon);
  if (name.empty() || name.find(' ') != std::string::npos || name.find('.') == std::string::npos) {
    return "";
  }
  return name;
}

// No task of the job's stages ended (ran to any end) or started.
bool RanNoTask(const model::ApplicationModel& m, const model::Job& job) {
  for (const auto& [key, stage] : m.stages) {
    if (std::find(job.stage_ids.begin(), job.stage_ids.end(), stage.stage_id) ==
        job.stage_ids.end()) {
      continue;
    }
    auto [begin, end] = m.TasksOf(stage);
    if (begin != end) return false;
  }
  return true;
}

struct FailedTask {
  int32_t index = -1;
  int64_t failures = 0;
  const model::TaskAttempt* last = nullptr;
};

void AddCauseAdvice(const DiagnosisInput& input, model::FailureCause cause, const KillCause& kill,
                    std::span<const int32_t> stage_ids, const std::string& exception, Finding& f) {
  if (AddCauseFix(input, kill, stage_ids, f)) {
    f.category = Category::kResourceConfiguration;
    return;
  }
  switch (cause) {
    case model::FailureCause::kFetchFailure:
      f.category = Category::kResourceConfiguration;
      f.recommendations.push_back(
          {"spark.shuffle.service.enabled", "true",
           "the shuffle output of a lost executor can then still be fetched (YARN and standalone "
           "run an external shuffle service; on Kubernetes use "
           "spark.decommission.enabled=true with "
           "spark.storage.decommission.shuffleBlocks.enabled)"});
      f.recommendations.push_back(
          {"", "find why executors went away (the executor-loss finding, executor logs)",
           "fetch failures are the consequence; the stage failed after its retries ran out"});
      break;
    case model::FailureCause::kOutOfMemory:  // a cause kill_causes could not size
    case model::FailureCause::kDiskFull:
    case model::FailureCause::kExecutorLost:
      f.category = Category::kResourceConfiguration;
      f.recommendations.push_back(
          {"", "read the lost executors' logs and the cluster manager's removal reason",
           "the task failed because its executor died each time; more memory overhead helps if the "
           "container was killed for memory"});
      break;
    case model::FailureCause::kUserCode:
    case model::FailureCause::kNone:
      f.category = Category::kAlgorithmic;
      f.recommendations.push_back(
          {"",
           "fix the code or the input record that throws " +
               (exception.empty() ? std::string("the exception") : exception),
           "the same task failed on every retry with the same exception: a deterministic error "
           "in the application or its data, which no setting and no retry fixes"});
      break;
  }
}

}  // namespace

void JobFailures(const DiagnosisInput& input, std::vector<Finding>& out) {
  const model::ApplicationModel& m = *input.model;
  size_t found = 0;
  std::set<int64_t> sql_with_failed_job;
  for (const auto& [job_id, job] : m.jobs) {
    if (job.result.empty() || job.result == "JobSucceeded") continue;
    if (job.sql_execution_id >= 0) sql_with_failed_job.insert(job.sql_execution_id);
    if (model::CancelledByQueryStop(m.streaming, job)) continue;
    // The failed stage attempt that aborted the job.
    const model::StageAttempt* failed_stage = nullptr;
    for (const auto& [key, stage] : m.stages) {
      if (stage.status != model::StageStatus::kFailed) continue;
      if (std::find(job.stage_ids.begin(), job.stage_ids.end(), stage.stage_id) ==
          job.stage_ids.end()) {
        continue;
      }
      const bool aborted = stage.failure_reason.rfind("Job aborted", 0) == 0;
      if (failed_stage == nullptr || aborted ||
          (failed_stage->failure_reason.rfind("Job aborted", 0) != 0 &&
           stage.completion_time_ms >= failed_stage->completion_time_ms)) {
        failed_stage = &stage;
      }
    }
    // The task index that failed most often in that stage (all its attempts).
    FailedTask worst;
    int64_t failed_attempts = 0;
    std::vector<const model::TaskAttempt*> failed_tasks;
    if (failed_stage != nullptr) {
      std::map<int32_t, FailedTask> by_index;
      for (const auto& [key, stage] : m.stages) {
        if (stage.stage_id != failed_stage->stage_id) continue;
        auto [begin, end] = m.TasksOf(stage);
        for (const uint32_t* it = begin; it != end; ++it) {
          const model::TaskAttempt& task = m.tasks[*it];
          if (model::ClassifyTaskFailure(m, task) == model::FailureCause::kNone) continue;
          ++failed_attempts;
          failed_tasks.push_back(&task);
          FailedTask& entry = by_index[task.index];
          entry.index = task.index;
          ++entry.failures;
          if (entry.last == nullptr || task.finish_time_ms >= entry.last->finish_time_ms) {
            entry.last = &task;
          }
        }
      }
      for (const auto& [index, entry] : by_index) {
        if (entry.failures > worst.failures) worst = entry;
      }
    }
    const std::string message =
        !job.failure_message_head.empty()
            ? job.failure_message_head
            : (failed_stage != nullptr ? failed_stage->failure_reason : std::string());
    model::FailureCause cause = model::FailureCause::kUserCode;
    std::string exception = ExceptionClassIn(message);
    std::string task_message, root_cause;
    KillCause kill;
    if (worst.last != nullptr) {
      cause = model::ClassifyTaskFailure(m, *worst.last);
      kill = TaskKillCause(input, *worst.last);
      // A container kill is shown best by the attempt whose executor reported the fullest
      // container last (readings come every flush interval; the kill falls between two).
      for (const model::TaskAttempt* task : failed_tasks) {
        if (kill.reading.what != model::Exhaustion::kContainerMemory) break;
        KillCause other = TaskKillCause(input, *task);
        if (other.reading.what == kill.reading.what &&
            MeasuredLimitShare(other) > MeasuredLimitShare(kill)) {
          kill = std::move(other);
        }
      }
      if (worst.last->failure != model::kNone) {
        const model::TaskFailure& failure = m.task_failures[worst.last->failure];
        if (!failure.exception_class.empty()) exception = failure.exception_class;
        task_message = failure.message_head;
        root_cause = failure.root_cause.substr(0, 120);
      }
    } else {
      // No failed task to read (maxResultSize kills the stage's tasks; a driver-side error):
      // Spark's message says it, and an out-of-memory there is the driver's.
      kill = MessageKillCause(input, message, /*driver_side=*/true);
      // A job none of whose tasks ran, while executors refused to start: they are why (the job
      // waited for them until it was cancelled or the application gave up).
      if (kill.reading.what == model::Exhaustion::kUnknown && RanNoTask(m, job)) {
        KillCause refused = RefusedStartCause(input);
        if (refused.reading.what != model::Exhaustion::kUnknown) kill = std::move(refused);
      }
      std::string lower = message;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (lower.find("fetchfailed") != std::string::npos ||
          lower.find("fetch failed") != std::string::npos) {
        cause = model::FailureCause::kFetchFailure;
      }
    }
    // The driver could not get the results (a result lost, "Exception while getting task
    // result"): its heap, when the results could not fit in it.
    if (kill.reading.what == model::Exhaustion::kUnknown && failed_stage != nullptr) {
      KillCause results = DriverResultsCause(input, *failed_stage, message);
      if (results.reading.what != model::Exhaustion::kUnknown) kill = std::move(results);
    }
    if (model::IsMemory(kill.reading.what)) cause = model::FailureCause::kOutOfMemory;
    if (kill.reading.what == model::Exhaustion::kDiskFull) cause = model::FailureCause::kDiskFull;
    if (cause == model::FailureCause::kOutOfMemory && !model::IsMemory(kill.reading.what)) {
      cause = model::FailureCause::kExecutorLost;  // a SIGKILL nothing ties to memory
    }

    Finding f = NewFinding("job-failures");
    f.severity = Severity::kCritical;
    f.confidence = {ConfidenceLevel::kHigh,
                    "the JobEnd result, the failed stage and its failed task attempts are in the "
                    "log; the cause is read from the exception Spark recorded"};
    if (kill.inferred_from_settings) {
      f.confidence = {ConfidenceLevel::kMedium,
                      kill.reading.what == model::Exhaustion::kDriverHeap
                          ? "the JobEnd result and the results the driver received are in the "
                            "log; that they exhausted its heap is inferred from their size "
                            "against spark.driver.memory (the OutOfMemoryError is in the "
                            "driver's log)"
                          : "the JobEnd result and the executors' removals are in the log; their "
                            "cause is inferred from the settings, which fail Spark's start-up "
                            "check, and the exit code (no executor log was read: --logs)"};
    } else if (kill.log != nullptr) {
      f.confidence.reason += kill.executor != nullptr ? "; the lost executor's own log names it"
                                                      : "; the driver's own log names it";
    }
    if (failed_stage != nullptr) f.stage_ids = {failed_stage->stage_id};
    const std::string what = job.description.empty() ? "" : " (" + job.description + ")";
    f.title = "Job " + std::to_string(job_id) + what + " failed";
    if (failed_stage != nullptr) {
      f.title += " in stage " + std::to_string(failed_stage->stage_id);
    }
    const bool known = kill.reading.what != model::Exhaustion::kUnknown;
    if (known) {
      // The innermost cause names it best ("MemoryError" rather than PythonException).
      const std::string& named = root_cause.empty() ? exception : root_cause;
      f.title += ": " + CauseTitle(kill.reading.what) +
                 (named.empty() ? std::string() : " (" + named + ")");
    } else if (!exception.empty()) {
      f.title += ": " + exception;
    }
    const int64_t duration =
        std::max<int64_t>(model::ElapsedMs(job.submission_time_ms, job.completion_time_ms), 0);
    f.evidence = {
        {"job_id", static_cast<double>(job_id), "count"},
        {"job_ms", static_cast<double>(duration), "ms"},
        {"failed_stage_id",
         static_cast<double>(failed_stage != nullptr ? failed_stage->stage_id : -1), "count"},
        {"failed_task_attempts_in_stage", static_cast<double>(failed_attempts), "tasks"},
        {"task_index", static_cast<double>(worst.index), "count"},
        {"task_failures", static_cast<double>(worst.failures), "count"},
    };
    const std::vector<int32_t> failed_stages = f.stage_ids;
    const std::string cause_sentence = CauseSentence(input, kill, failed_stages);
    f.explanation = cause_sentence.empty() ? "" : cause_sentence + " ";
    f.explanation +=
        "Job " + std::to_string(job_id) + what + " was aborted after " + HumanDurationMs(duration);
    if (failed_stage != nullptr) {
      f.explanation += ": stage " + std::to_string(failed_stage->stage_id) + " (" +
                       failed_stage->name + ") failed";
    }
    if (worst.last != nullptr) {
      f.explanation += "; its task " + std::to_string(worst.index) + " failed " +
                       std::to_string(worst.failures) + " time(s)" +
                       (exception.empty() ? std::string() : " with " + exception) +
                       (task_message.empty() ? std::string() : ": \"" + task_message + "\"");
    }
    f.explanation +=
        ". Spark's message: \"" + message + "\"." +
        (cause_sentence.empty() ? std::string(" Cause: ") + model::FailureCauseName(cause) + "."
                                : std::string()) +
        " The job's result was not produced; its time and everything after it in "
        "the application are lost until this is fixed.";
    AddCauseEvidence(input, kill, f);
    AddCauseAdvice(input, cause, kill, failed_stages, exception, f);
    f.impact.time_saved_ms_low = 0;
    f.impact.time_saved_ms_high = duration;
    f.impact.method =
        "a failed job's whole run time is wasted (high); the retry after the fix costs it again "
        "(low)";
    f.cost_ms = std::max<int64_t>(duration, 1);
    out.push_back(std::move(f));
    ++found;
  }

  // SQL executions that failed without a failed job: errors on the driver (analysis, planning,
  // a broadcast that could not be built, a write that could not commit).
  for (const auto& [id, sql] : m.sql_executions) {
    if (sql.error_message_head.empty() || sql_with_failed_job.count(id) != 0) continue;
    if (model::InterruptedByQueryStop(m.streaming, sql)) continue;
    Finding f = NewFinding("job-failures");
    f.severity = Severity::kCritical;
    f.category = Category::kAlgorithmic;
    f.confidence = {ConfidenceLevel::kHigh, "SQLExecutionEnd carries the error message"};
    f.title = "SQL execution " + std::to_string(id) + " failed: " + sql.error_message_head;
    f.evidence = {{"sql_execution_id", static_cast<double>(id), "count"},
                  {"jobs", static_cast<double>(sql.job_ids.size()), "count"}};
    // The driver's own memory (a broadcast it could not build, a result too large) says so.
    const KillCause kill = MessageKillCause(input, sql.error_message_head, /*driver_side=*/true);
    const std::string cause_sentence = CauseSentence(input, kill, {});
    if (kill.reading.what != model::Exhaustion::kUnknown) {
      f.title = "SQL execution " + std::to_string(id) +
                " failed: " + CauseTitle(kill.reading.what) + ": " + sql.error_message_head;
    }
    f.explanation = (cause_sentence.empty() ? "" : cause_sentence + " ") + "SQL execution " +
                    std::to_string(id) +
                    (sql.description.empty() ? std::string() : " (" + sql.description + ")") +
                    " ended with an error and no failed job: the error was raised on the driver "
                    "(planning, a broadcast, the commit). Error: \"" +
                    sql.error_message_head + "\".";
    AddCauseEvidence(input, kill, f);
    if (AddCauseFix(input, kill, {}, f)) {
      f.category = Category::kResourceConfiguration;
    } else {
      f.recommendations.push_back({"",
                                   "fix the error quoted above (driver log for the stack trace)",
                                   "no task failed, so no executor setting is involved"});
    }
    f.impact.method = "the query's result was not produced";
    f.cost_ms = 1;
    out.push_back(std::move(f));
    ++found;
  }

  if (m.exit_code > 0 && found == 0) {
    Finding f = NewFinding("job-failures");
    f.severity = Severity::kCritical;
    f.category = Category::kAlgorithmic;
    f.confidence = {ConfidenceLevel::kMedium,
                    "ApplicationEnd's exit code; no job or SQL execution in the log failed, so the "
                    "error happened on the driver outside Spark's jobs"};
    f.title = "The application exited with code " + std::to_string(m.exit_code);
    f.evidence = {{"exit_code", static_cast<double>(m.exit_code), "count"}};
    f.explanation = "Spark recorded exit code " + std::to_string(m.exit_code) +
                    " at the application end, and no job failed: the driver program itself "
                    "failed. Its log has the stack trace.";
    f.recommendations.push_back({"", "read the driver log for the exception",
                                 "the event log does not carry driver-side exceptions"});
    f.impact.method = "the application's result was not produced";
    f.cost_ms = 1;
    out.push_back(std::move(f));
  }
}

}  // namespace sparkprof::diagnosis::rules
