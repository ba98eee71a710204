// Where an application ran -- its cluster manager and managed platform -- read from its settings
// and events: the vocabulary advice, cost and the what-if simulator share.
#pragma once

#include "analyzer/model/application_model.h"

namespace sparkprof::model {

// Where the application ran: advice names the settings of that cluster manager and platform.
// kLocal: local[N], tasks run as threads of the driver JVM. kLocalCluster: local-cluster[N,C,M],
// Spark's test mode that starts a Master, N Workers and their executor JVMs on this host.
enum class ClusterManager {
  kUnknown,
  kLocal,
  kLocalCluster,
  kStandalone,
  kYarn,
  kKubernetes,
  kMesos
};
enum class Platform { kNone, kDatabricks, kEmr, kDataproc };
const char* ClusterManagerName(ClusterManager manager);  // "local", "standalone", "YARN", ...
const char* PlatformName(Platform platform);             // "", "Databricks", "EMR", "Dataproc"
// The managed platform the run's settings show (Databricks, EMR, Dataproc), else kNone.
Platform PlatformOf(const ApplicationModel& model);
// From spark.master (Databricks clusters are standalone underneath; platform says Databricks).
ClusterManager ClusterManagerOf(const ApplicationModel& model);

}  // namespace sparkprof::model
