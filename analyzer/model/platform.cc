#include "analyzer/model/platform.h"

namespace sparkprof::model {

const char* ClusterManagerName(ClusterManager manager) {
  switch (manager) {
    case ClusterManager::kUnknown:
      return "unknown";
    case ClusterManager::kLocal:
      return "local";
    case ClusterManager::kLocalCluster:
      return "local-cluster";
    case ClusterManager::kStandalone:
      return "standalone";
    case ClusterManager::kYarn:
      return "YARN";
    case ClusterManager::kKubernetes:
      return "Kubernetes";
    case ClusterManager::kMesos:
      return "Mesos";
  }
  return "unknown";
}

const char* PlatformName(Platform platform) {
  switch (platform) {
    case Platform::kNone:
      return "";
    case Platform::kDatabricks:
      return "Databricks";
    case Platform::kEmr:
      return "EMR";
    case Platform::kDataproc:
      return "Dataproc";
  }
  return "";
}

ClusterManager ClusterManagerOf(const ApplicationModel& model) {
  const std::string* set = model.SparkProperty("spark.master");
  const std::string master = set != nullptr ? *set : "";
  if (master.rfind("local-cluster", 0) == 0) return ClusterManager::kLocalCluster;
  if (master.rfind("local", 0) == 0) return ClusterManager::kLocal;
  if (master.rfind("yarn", 0) == 0) return ClusterManager::kYarn;
  if (master.rfind("k8s://", 0) == 0) return ClusterManager::kKubernetes;
  if (master.rfind("mesos://", 0) == 0) return ClusterManager::kMesos;
  if (master.rfind("spark://", 0) == 0) return ClusterManager::kStandalone;
  return ClusterManager::kUnknown;
}

Platform PlatformOf(const ApplicationModel& model) {
  if (model.databricks) return Platform::kDatabricks;
  for (const auto& [key, value] : model.spark_properties) {
    if (key.rfind("spark.databricks.", 0) == 0) return Platform::kDatabricks;
    if (key.rfind("spark.emr.", 0) == 0 || key.rfind("spark.hadoop.fs.s3.emr", 0) == 0 ||
        key == "spark.sql.emr.internal.extensions") {
      return Platform::kEmr;
    }
    if (key.rfind("spark.dataproc.", 0) == 0) return Platform::kDataproc;
  }
  return Platform::kNone;
}

}  // namespace sparkprof::model
