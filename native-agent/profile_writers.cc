#include "native-agent/profile_writers.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "common/json_writer.h"
#include "native-agent/agent_counters.h"
#include "native-agent/stack_walker.h"

namespace sparkprof::agent {
namespace {

void AppendFrame(std::string& out, const std::string& frame) {
  for (char c : frame) out += (c == ';' || c == '\n' || c == '\r') ? '_' : c;
}

struct CategoryTotals {
  uint64_t samples[classifier::kCategoryCount] = {};
  uint64_t time_ns[classifier::kCategoryCount] = {};
};

void WriteCategories(JsonWriter& json, const CategoryTotals& totals) {
  json.Key("categories").BeginObject();
  for (int i = 0; i < classifier::kCategoryCount; ++i) {
    if (totals.samples[i] == 0 && totals.time_ns[i] == 0) continue;
    json.Key(classifier::CategoryName(static_cast<Category>(i))).BeginObject();
    json.Key("samples").Uint(totals.samples[i]);
    json.Key("time_ns").Uint(totals.time_ns[i]);
    json.EndObject();
  }
  json.EndObject();
}

}  // namespace

HealthSnapshot ReadHealthCounters() {
  HealthSnapshot s;
#define SPARKPROF_HEALTH_READ(name) s.name = g_counters.name.load();
#define SPARKPROF_HEALTH_SKIP(name)
  SPARKPROF_AGENT_HEALTH_FIELDS(SPARKPROF_HEALTH_READ, SPARKPROF_HEALTH_SKIP)
#undef SPARKPROF_HEALTH_READ
#undef SPARKPROF_HEALTH_SKIP
  return s;
}

std::string RenderCollapsed(const Profile& profile, const StringTable& strings) {
  std::vector<uint64_t> per_stack(profile.stacks().size(), 0);
  for (const auto& [key, count] : profile.samples()) per_stack[key.stack] += count.samples;
  std::string out;
  for (size_t stack = 0; stack < per_stack.size(); ++stack) {
    if (per_stack[stack] == 0) continue;
    bool first = true;
    for (uint32_t frame : profile.stacks()[stack]) {
      if (!first) out += ';';
      first = false;
      AppendFrame(out, strings.Get(frame));
    }
    out += ' ';
    out += std::to_string(per_stack[stack]);
    out += '\n';
  }
  return out;
}

std::string RenderJson(const ReportContext& context, const Drain& drain,
                       const HealthSnapshot& health) {
  const Profile& profile = drain.cumulative();
  const StringTable& strings = drain.strings();
  JsonWriter json(JsonWriter::Options{.indent = 0});
  json.BeginObject();
  json.Field("format", "sparkprof-agent-profile").Field("version", 1);
  json.Field("mode", context.mode).Field("mechanism", context.mechanism);
  json.Field("walker", context.walker);
  json.Key("interval_ns").Uint(static_cast<uint64_t>(context.interval_ns));
  json.Key("pid").Uint(static_cast<uint64_t>(context.pid));
  json.Key("start_epoch_ns").Uint(static_cast<uint64_t>(context.start_epoch_ns));
  json.Key("end_epoch_ns").Uint(static_cast<uint64_t>(context.end_epoch_ns));
  json.Key("samples").Uint(profile.total_samples());
  json.Key("distinct_stacks").Uint(profile.stacks().size());

  // Category time for the whole process, per task tag, and per thread.
  CategoryTotals all;
  std::map<std::tuple<int32_t, int32_t, int64_t>, CategoryTotals> per_task;
  for (const auto& [key, total] : profile.task_times()) {
    auto index = static_cast<size_t>(key.category);
    all.samples[index] += total.samples;
    all.time_ns[index] += total.time_ns;
    CategoryTotals& task =
        per_task[{key.tag.stage_id, key.tag.stage_attempt, key.tag.task_attempt_id}];
    task.samples[index] += total.samples;
    task.time_ns[index] += total.time_ns;
  }
  std::map<std::string, CategoryTotals> per_thread;
  for (const auto& [key, count] : profile.samples()) {
    CategoryTotals& thread = per_thread[strings.Get(key.thread)];
    auto index = static_cast<size_t>(count.category);
    thread.samples[index] += count.samples;
    thread.time_ns[index] += count.time_ns;
  }
  json.Key("total").BeginObject();
  WriteCategories(json, all);
  json.EndObject();
  json.Key("tasks").BeginArray();
  for (const auto& [tag, totals] : per_task) {
    json.BeginObject();
    json.Key("stage_id").Int(std::get<0>(tag));
    json.Key("stage_attempt").Int(std::get<1>(tag));
    json.Key("task_attempt_id").Int(std::get<2>(tag));
    WriteCategories(json, totals);
    json.EndObject();
  }
  json.EndArray();
  // Thread names come from the JVM (JVMTI's modified UTF-8) and from /proc: any bytes at all.
  json.Key("threads").BeginArray();
  for (const auto& [name, totals] : per_thread) {
    json.BeginObject().Field("thread", name);
    WriteCategories(json, totals);
    json.EndObject();
  }
  json.EndArray();
  const GcSummary& gc = drain.gc_summary();
  json.Key("gc").BeginObject();
  json.Field("note",
             "stop-the-world pauses only (JVMTI GarbageCollectionStart/Finish); "
             "concurrent GC phases are not pauses and are not counted");
  json.Key("pauses").Uint(gc.pauses);
  json.Key("total_pause_ns").Uint(gc.total_ns);
  json.Key("max_pause_ns").Uint(gc.max_ns);
  json.Key("recent_pauses").BeginArray();
  for (const GcPause& pause : drain.recent_pauses()) {
    json.BeginObject();
    json.Key("start_epoch_ns").Int(pause.start_epoch_ns);
    json.Key("duration_ns").Int(pause.duration_ns);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  const Drain::WalkOutcomes& walks = drain.walk_outcomes();
  json.Key("walks").BeginObject();
  json.Key("complete").Uint(walks.complete);
  for (const auto& [name, by_kind] :
       {std::pair{"partial", &walks.partial}, std::pair{"failed", &walks.failed}}) {
    json.Key(name).BeginObject();
    for (const auto& [code, count] : *by_kind) json.Key(WalkErrorFrameName(code)).Uint(count);
    json.EndObject();
  }
  json.EndObject();
  json.Key("health").BeginObject();
  const uint64_t walk_time_ns_avg =
      health.samples_taken == 0 ? 0 : health.walk_time_ns_total / health.samples_taken;
  const uint64_t stale_methods = drain.stale_methods();
  const uint64_t jvm_threads_tracked = drain.jvm_threads_tracked();
#define SPARKPROF_HEALTH_COUNTER(name) json.Key(#name).Uint(health.name);
#define SPARKPROF_HEALTH_DERIVED(name) json.Key(#name).Uint(name);
  SPARKPROF_AGENT_HEALTH_FIELDS(SPARKPROF_HEALTH_COUNTER, SPARKPROF_HEALTH_DERIVED)
#undef SPARKPROF_HEALTH_COUNTER
#undef SPARKPROF_HEALTH_DERIVED
  json.EndObject();
  json.EndObject();
  std::string out = json.Take();
  out += '\n';
  return out;
}

}  // namespace sparkprof::agent
