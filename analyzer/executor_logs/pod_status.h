// Kubernetes pods as `kubectl get pod -o json` (one Pod, or a List of them) describes them: which
// Spark process each pod ran (labels spark-role, spark-exec-id, spark-app-selector) and how its
// containers ended (status.containerStatuses[].state.terminated and .lastState.terminated:
// reason, exitCode, finishedAt). A container terminated OOMKilled was ended by the kernel's OOM
// killer at its memory limit; other non-zero exit codes are kept as they are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/executor_logs/log_hits.h"

namespace sparkprof::executor_logs {

struct PodTermination {
  std::string container;  // the container's name in the pod
  std::string reason;     // "OOMKilled", "Error", "Completed"
  int exit_code = -1;
  std::string finished_at;  // as written (RFC 3339)
  int64_t finished_ms = -1;
  bool last_state = false;  // from lastState (a restarted container's previous run)
};

struct PodStatus {
  std::string name;
  std::string role;         // spark-role: "driver" or "executor"
  std::string executor_id;  // spark-exec-id; "driver" for the driver's pod
  std::string app_id;       // spark-app-selector
  std::vector<PodTermination> terminations;
};

// The pods `json` describes; a document that is not a Pod or a List of them gives none and a
// problem naming `display_name`. At most kMaxPods pods and kMaxTerminationsPerPod terminations
// each; strings cut at 256 bytes.
inline constexpr size_t kMaxPods = 10'000;
inline constexpr size_t kMaxTerminationsPerPod = 16;
std::vector<PodStatus> ReadPodStatuses(std::string_view json, const std::string& display_name,
                                       LogProblems& problems);

// Whether the first bytes of a file look like a Kubernetes object (a JSON object with "kind").
bool LooksLikePodJson(std::string_view head);

}  // namespace sparkprof::executor_logs
