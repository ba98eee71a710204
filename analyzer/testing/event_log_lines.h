// Spark event log lines written by hand in tests: a few Spark 3.5 events, the way Spark writes
// them (only the keys sparkprof reads), for rule tests that need a failure, a removal or a plan
// no synthetic application (synthetic_app.h) makes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sparkprof::testing {

class EventLogLines {
 public:
  // properties: Spark properties besides spark.master and spark.app.id.
  explicit EventLogLines(const std::string& master = "spark://127.0.0.1:7077",
                         const std::vector<std::pair<std::string, std::string>>& properties = {}) {
    std::string more;
    for (const auto& [key, value] : properties) more += R"(,")" + key + R"(":")" + value + "\"";
    Add(R"({"Event":"SparkListenerLogStart","Spark Version":"3.5.9"})");
    Add(R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{},"Spark Properties":{"spark.master":")" +
        master + R"(","spark.app.id":"app-1")" + more +
        R"(},"Hadoop Properties":{},"System Properties":{},"Classpath Entries":{}})");
    Add(R"({"Event":"SparkListenerApplicationStart","App Name":"t","App ID":"app-1","Timestamp":1000,"User":"u"})");
  }
  void Add(const std::string& line) { text_ += line + "\n"; }
  void Executor(const std::string& id, int64_t at) {
    Add(R"({"Event":"SparkListenerExecutorAdded","Timestamp":)" + std::to_string(at) +
        R"(,"Executor ID":")" + id +
        R"(","Executor Info":{"Host":"127.0.0.1","Total Cores":2,"Log Urls":{}}})");
  }
  void ExecutorRemoved(const std::string& id, int64_t at, const std::string& reason) {
    Add(R"({"Event":"SparkListenerExecutorRemoved","Timestamp":)" + std::to_string(at) +
        R"(,"Executor ID":")" + id + R"(","Removed Reason":")" + reason + R"("})");
  }
  // sql_execution_id >= 0: the job runs that SQL execution (its spark.sql.execution.id).
  void JobStart(int job, const std::vector<int>& stages, int64_t at, const std::string& description,
                int64_t sql_execution_id = -1) {
    std::string infos, ids;
    for (int s : stages) {
      if (!ids.empty()) ids += ",", infos += ",";
      ids += std::to_string(s);
      infos += R"({"Stage ID":)" + std::to_string(s) +
               R"(,"Stage Attempt ID":0,"Stage Name":"stage )" + std::to_string(s) +
               R"(","Number of Tasks":4,"Parent IDs":[],"Details":"","Accumulables":[]})";
    }
    Add(R"({"Event":"SparkListenerJobStart","Job ID":)" + std::to_string(job) +
        R"(,"Submission Time":)" + std::to_string(at) + R"(,"Stage Infos":[)" + infos +
        R"(],"Stage IDs":[)" + ids + R"(],"Properties":{"spark.job.description":")" + description +
        "\"" +
        (sql_execution_id >= 0
             ? R"(,"spark.sql.execution.id":")" + std::to_string(sql_execution_id) + "\""
             : std::string()) +
        "}}");
  }
  void StageSubmitted(int stage, int attempt, int64_t at) {
    Add(R"({"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":)" +
        std::to_string(stage) + R"(,"Stage Attempt ID":)" + std::to_string(attempt) +
        R"(,"Stage Name":"stage )" + std::to_string(stage) +
        R"(","Number of Tasks":4,"Parent IDs":[],"Details":"","Submission Time":)" +
        std::to_string(at) + R"(,"Accumulables":[]},"Properties":{}})");
  }
  // accumulables: the JSON array's elements; rdds: "RDD Info" elements.
  void StageCompleted(int stage, int attempt, int64_t submitted, int64_t at,
                      const std::string& failure = "", const std::string& accumulables = "",
                      const std::string& rdds = "") {
    Add(R"({"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":)" +
        std::to_string(stage) + R"(,"Stage Attempt ID":)" + std::to_string(attempt) +
        R"(,"Stage Name":"stage )" + std::to_string(stage) +
        R"(","Number of Tasks":4,"RDD Info":[)" + rdds +
        R"(],"Parent IDs":[],"Details":"","Submission Time":)" + std::to_string(submitted) +
        R"(,"Completion Time":)" + std::to_string(at) +
        (failure.empty() ? std::string() : R"(,"Failure Reason":")" + failure + R"(")") +
        R"(,"Accumulables":[)" + accumulables + "]}}");
  }
  void SqlStart(int64_t id, int64_t at, const std::string& plan_info) {
    Add(R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":)" +
        std::to_string(id) +
        R"(,"description":"q","details":"","physicalPlanDescription":"","sparkPlanInfo":)" +
        plan_info + R"(,"time":)" + std::to_string(at) + "}");
  }
  // error: SQLExecutionEnd's errorMessage ("" for a query that succeeded).
  void SqlEnd(int64_t id, int64_t at, const std::string& error = "") {
    Add(R"({"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd","executionId":)" +
        std::to_string(id) + R"(,"time":)" + std::to_string(at) +
        (error.empty() ? std::string() : R"(,"errorMessage":")" + error + "\"") + "}");
  }
  // reason: the whole "Task End Reason" object.
  void Task(int stage, int64_t tid, int index, int attempt, const std::string& executor,
            int64_t launch, int64_t finish, const std::string& reason, int64_t run_ms,
            int64_t shuffle_write_bytes = 0) {
    const std::string info =
        R"("Task Info":{"Task ID":)" + std::to_string(tid) + R"(,"Index":)" +
        std::to_string(index) + R"(,"Attempt":)" + std::to_string(attempt) + R"(,"Launch Time":)" +
        std::to_string(launch) + R"(,"Executor ID":")" + executor +
        R"(","Host":"127.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":)" +
        std::to_string(finish) + R"(,"Failed":false,"Killed":false,"Accumulables":[]})";
    Add(R"({"Event":"SparkListenerTaskStart","Stage ID":)" + std::to_string(stage) +
        R"(,"Stage Attempt ID":0,)" + info + "}");
    TaskEndOnly(stage, tid, index, attempt, executor, launch, finish, reason, run_ms,
                shuffle_write_bytes);
  }
  void TaskEndOnly(int stage, int64_t tid, int index, int attempt, const std::string& executor,
                   int64_t launch, int64_t finish, const std::string& reason, int64_t run_ms,
                   int64_t shuffle_write_bytes = 0) {
    Add(R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + std::to_string(stage) +
        R"(,"Stage Attempt ID":0,"Task Type":"ShuffleMapTask","Task End Reason":)" + reason +
        R"(,"Task Info":{"Task ID":)" + std::to_string(tid) + R"(,"Index":)" +
        std::to_string(index) + R"(,"Attempt":)" + std::to_string(attempt) + R"(,"Launch Time":)" +
        std::to_string(launch) + R"(,"Executor ID":")" + executor +
        R"(","Host":"127.0.0.1","Locality":"PROCESS_LOCAL","Speculative":false,"Getting Result Time":0,"Finish Time":)" +
        std::to_string(finish) +
        R"(,"Failed":false,"Killed":false,"Accumulables":[]},"Task Metrics":{"Executor Run Time":)" +
        std::to_string(run_ms) + R"(,"Executor CPU Time":)" + std::to_string(run_ms * 1000000) +
        R"(,"Shuffle Write Metrics":{"Shuffle Bytes Written":)" +
        std::to_string(shuffle_write_bytes) +
        R"(,"Shuffle Write Time":0,"Shuffle Records Written":10}}})");
  }
  void JobEnd(int job, int64_t at, const std::string& failure = "") {
    Add(R"({"Event":"SparkListenerJobEnd","Job ID":)" + std::to_string(job) +
        R"(,"Completion Time":)" + std::to_string(at) + R"(,"Job Result":)" +
        (failure.empty() ? std::string(R"({"Result":"JobSucceeded"})")
                         : R"({"Result":"JobFailed","Exception":{"Message":")" + failure +
                               R"(","Stack Trace":[]}})") +
        "}");
  }
  void End(int64_t at) {
    Add(R"({"Event":"SparkListenerApplicationEnd","Timestamp":)" + std::to_string(at) + "}");
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace sparkprof::testing
