// io-wait-bound: task threads spend a large share of their time off CPU waiting for storage or
// network I/O outside the shuffle (object store reads and listings, HDFS, local disk, JDBC): the
// event log counts that time as run time and cannot tell it from computing. Needs off-CPU
// samples (agent mode cpu+wall, the default; wall mode does not split a sample into on and off
// CPU).
//
// Judgement: profile_judgement.h. Efficiency 20-60%: waiting for I/O can be cut (more
// parallel requests, larger reads, a read pattern that fits the format, pruning what is read)
// but not removed: the bytes still have to arrive. The fix follows the frames that waited:
// S3A (org.apache.hadoop.fs.s3a), HDFS (org.apache.hadoop.hdfs), JDBC (java.sql / a driver),
// local files.
#include "analyzer/diagnosis/rules/profile_judgement.h"
#include "analyzer/diagnosis/rules/rules.h"

namespace sparkprof::diagnosis::rules {

void IoWaitBound(const DiagnosisInput& input, std::vector<Finding>& out) {
  std::vector<ProfiledCause> causes = StagesWhere(input, [](const profile::StageProfile& stage) {
    return stage.category_ns[CategoryIndex(TaskCategory::kIoWait)];
  });
  if (causes.empty()) return;
  uint64_t wait = 0;
  for (const ProfiledCause& cause : causes) wait += cause.ns;
  const ProfiledCause& top = causes.front();
  uint64_t s3a = 0, hdfs = 0, jdbc = 0, other = 0;
  for (const profile::Site* site : top.stage.SitesOf(TaskCategory::kIoWait)) {
    const std::string& frame = site->frame;
    if (frame.find(".fs.s3a.") != std::string::npos || frame.find("amazon") != std::string::npos) {
      s3a += site->ns;
    } else if (frame.find(".hadoop.hdfs.") != std::string::npos) {
      hdfs += site->ns;
    } else if (frame.find("jdbc") != std::string::npos || frame.find("JDBC") != std::string::npos ||
               frame.find("java.sql.") != std::string::npos) {
      jdbc += site->ns;
    } else {
      other += site->ns;
    }
  }

  Finding f = NewProfileFinding(input, "io-wait-bound", causes, "io_wait", wait, {});
  for (const ProfiledCause& cause : causes) AddSiteFrames(cause, TaskCategory::kIoWait, f);
  std::string where = "Stage " + std::to_string(top.stage_id) + "'s task threads waited " +
                      TimeAndShare(top) + " for storage or network I/O";
  const std::string sites = SitesText(top.stage, TaskCategory::kIoWait);
  if (!sites.empty()) where += ", in " + sites;
  where += ".";
  f.title = "Tasks wait for I/O";
  if (s3a >= hdfs && s3a >= jdbc && s3a >= other && s3a > 0) {
    f.title = "Tasks wait for the object store (S3A)";
    f.explanation = where + " Most of the wait is in S3A requests.";
    f.recommendations.push_back(
        {"spark.hadoop.fs.s3a.experimental.input.fadvise", "random",
         "Parquet and ORC read footers and column chunks out of order; 'random' avoids "
         "reopening the stream for each seek"});
    f.recommendations.push_back(
        {"spark.hadoop.fs.s3a.connection.maximum", "200",
         "enough connections for every task slot's concurrent reads and the prefetching "
         "threads (fs.s3a.threads.max)"});
  } else if (jdbc >= hdfs && jdbc >= other && jdbc > 0) {
    f.title = "Tasks wait for a JDBC source";
    f.explanation = where +
                    " Most of the wait is in JDBC calls: the database answers slower "
                    "than the tasks consume.";
    f.recommendations.push_back(
        {"",
         "read in parallel (partitionColumn, lowerBound, upperBound, numPartitions) and "
         "raise the fetchsize option",
         "one connection per partition; a larger fetch size means fewer round trips"});
  } else if (hdfs > 0 && hdfs >= other) {
    f.title = "Tasks wait for HDFS";
    f.explanation = where +
                    " Most of the wait is in HDFS reads: remote blocks or busy "
                    "datanodes.";
    f.recommendations.push_back(
        {"spark.locality.wait", "3s",
         "keep tasks where their blocks are (the default; lower values trade locality for "
         "earlier launches)"});
  } else {
    f.explanation = where + " The waits are in file or socket reads outside the shuffle.";
  }
  f.recommendations.push_back(
      {"",
       "read less: prune partitions and columns (filters on partition columns, select only "
       "the columns used) so fewer bytes are requested",
       "the wait grows with the bytes requested"});
  SpreadByCategory(causes, TaskCategory::kIoWait);
  if (!JudgeProfiledCauses(input, causes,
                           {0.20, 0.60, "faster or fewer reads; the bytes still arrive"}, f)) {
    return;
  }
  out.push_back(std::move(f));
}

}  // namespace sparkprof::diagnosis::rules
