#include "analyzer/executor_logs/pod_status.h"

#include <simdjson.h>

#include <utility>

namespace sparkprof::executor_logs {

namespace {

namespace dom = simdjson::dom;

std::string StringAt(dom::element object, std::string_view key) {
  std::string_view value;
  if (object[key].get_string().get(value) != simdjson::SUCCESS) return "";
  return CleanText(value, 256);
}

void ReadTerminated(dom::element state, bool last_state, PodStatus& pod,
                    std::string_view container) {
  dom::element terminated;
  if (state["terminated"].get(terminated) != simdjson::SUCCESS || !terminated.is_object()) return;
  if (pod.terminations.size() >= kMaxTerminationsPerPod) return;
  PodTermination t;
  t.container = CleanText(container, 256);
  t.reason = StringAt(terminated, "reason");
  int64_t code = -1;
  if (terminated["exitCode"].get_int64().get(code) == simdjson::SUCCESS && code >= 0 &&
      code < 256) {
    t.exit_code = static_cast<int>(code);
  }
  t.finished_at = StringAt(terminated, "finishedAt");
  t.finished_ms = ParseIsoTime(t.finished_at);
  t.last_state = last_state;
  pod.terminations.push_back(std::move(t));
}

void ReadPod(dom::element pod_object, std::vector<PodStatus>& pods) {
  PodStatus pod;
  dom::element metadata;
  if (pod_object["metadata"].get(metadata) == simdjson::SUCCESS && metadata.is_object()) {
    pod.name = StringAt(metadata, "name");
    dom::element labels;
    if (metadata["labels"].get(labels) == simdjson::SUCCESS && labels.is_object()) {
      pod.role = StringAt(labels, "spark-role");
      pod.executor_id = StringAt(labels, "spark-exec-id");
      pod.app_id = StringAt(labels, "spark-app-selector");
    }
  }
  if (pod.role == "driver" && pod.executor_id.empty()) pod.executor_id = "driver";
  dom::array statuses;
  if (pod_object["status"]["containerStatuses"].get_array().get(statuses) == simdjson::SUCCESS) {
    for (dom::element status : statuses) {
      if (!status.is_object()) continue;
      std::string_view container;
      if (status["name"].get_string().get(container) != simdjson::SUCCESS) container = "";
      for (const auto& [key, last] : {std::pair<std::string_view, bool>{"lastState", true},
                                      std::pair<std::string_view, bool>{"state", false}}) {
        dom::element state;
        if (status[key].get(state) == simdjson::SUCCESS && state.is_object()) {
          ReadTerminated(state, last, pod, container);
        }
      }
    }
  }
  pods.push_back(std::move(pod));
}

}  // namespace

bool LooksLikePodJson(std::string_view head) {
  size_t at = 0;
  while (at < head.size() &&
         (head[at] == ' ' || head[at] == '\n' || head[at] == '\r' || head[at] == '\t')) {
    ++at;
  }
  return at < head.size() && head[at] == '{' && head.find("\"kind\"") != std::string_view::npos;
}

std::vector<PodStatus> ReadPodStatuses(std::string_view json, const std::string& display_name,
                                       LogProblems& problems) {
  std::vector<PodStatus> pods;
  dom::parser parser;
  dom::element document;
  if (const auto error = parser.parse(json.data(), json.size()).get(document);
      error != simdjson::SUCCESS) {
    problems.Add(display_name + ": not a Kubernetes pod description (" +
                 simdjson::error_message(error) + ")");
    return pods;
  }
  std::string_view kind;
  if (!document.is_object() || document["kind"].get_string().get(kind) != simdjson::SUCCESS) {
    problems.Add(display_name + ": JSON without a \"kind\": not a Kubernetes object; not read");
    return pods;
  }
  if (kind == "Pod") {
    ReadPod(document, pods);
  } else if (kind == "List" || kind == "PodList") {
    dom::array items;
    if (document["items"].get_array().get(items) == simdjson::SUCCESS) {
      for (dom::element item : items) {
        if (pods.size() >= kMaxPods) {
          problems.Add(display_name + ": more than " + std::to_string(kMaxPods) +
                       " pods; the rest are not read");
          break;
        }
        std::string_view item_kind;
        if (item.is_object() && item["kind"].get_string().get(item_kind) == simdjson::SUCCESS &&
            item_kind == "Pod") {
          ReadPod(item, pods);
        }
      }
    }
  } else {
    problems.Add(display_name + ": a Kubernetes " + CleanText(kind, 64) +
                 ", not a Pod or a List of pods; not read");
  }
  return pods;
}

}  // namespace sparkprof::executor_logs
