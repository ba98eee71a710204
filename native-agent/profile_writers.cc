#include "native-agent/profile_writers.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "native-agent/agent_counters.h"
#include "native-agent/stack_walker.h"

namespace sparkprof::agent {
namespace {

void AppendFrame(std::string& out, const std::string& frame) {
  for (char c : frame) out += (c == ';' || c == '\n' || c == '\r') ? '_' : c;
}

void AppendKeyNumber(std::string& out, std::string_view key, uint64_t value, bool comma = true) {
  out += '"';
  out += key;
  out += "\":";
  out += std::to_string(value);
  if (comma) out += ',';
}

struct CategoryTotals {
  uint64_t samples[classifier::kCategoryCount] = {};
  uint64_t time_ns[classifier::kCategoryCount] = {};
};

void AppendCategories(std::string& out, const CategoryTotals& totals) {
  out += "\"categories\":{";
  bool first = true;
  for (int i = 0; i < classifier::kCategoryCount; ++i) {
    if (totals.samples[i] == 0 && totals.time_ns[i] == 0) continue;
    if (!first) out += ',';
    first = false;
    out += '"';
    out += classifier::CategoryName(static_cast<Category>(i));
    out += "\":{";
    AppendKeyNumber(out, "samples", totals.samples[i]);
    AppendKeyNumber(out, "time_ns", totals.time_ns[i], false);
    out += '}';
  }
  out += '}';
}

void AppendTag(std::string& out, const TaskTag& tag) {
  out += "\"stage_id\":" + std::to_string(tag.stage_id) +
         ",\"stage_attempt\":" + std::to_string(tag.stage_attempt) +
         ",\"task_attempt_id\":" + std::to_string(tag.task_attempt_id) + ',';
}

}  // namespace

HealthSnapshot ReadHealthCounters() {
  HealthSnapshot s;
  s.samples_taken = g_counters.samples_taken.load();
  s.samples_dropped_ring_full = g_counters.samples_dropped_ring_full.load();
  s.samples_walk_failed = g_counters.samples_walk_failed.load();
  s.samples_no_thread_state = g_counters.samples_no_thread_state.load();
  s.samples_reentrant = g_counters.samples_reentrant.load();
  s.walk_crashes_recovered = g_counters.walk_crashes_recovered.load();
  s.walk_anchor_repairs = g_counters.walk_anchor_repairs.load();
  s.walk_stub_steps = g_counters.walk_stub_steps.load();
  s.walk_deopt_walks = g_counters.walk_deopt_walks.load();
  s.walk_entry_frames_named = g_counters.walk_entry_frames_named.load();
  s.walk_waiting_in_stub = g_counters.walk_waiting_in_stub.load();
  s.walk_time_ns_total = g_counters.walk_time_ns_total.load();
  s.stacks_dropped_cap = g_counters.stacks_dropped_cap.load();
  s.gc_pauses_dropped = g_counters.gc_pauses_dropped.load();
  s.batches_encoded = g_counters.batches_encoded.load();
  s.native_memory_bytes = g_counters.native_memory_bytes.load();
  s.threads_registered = g_counters.threads_registered.load();
  s.timer_create_failures = g_counters.timer_create_failures.load();
  s.rings_shrunk = g_counters.rings_shrunk.load();
  s.threads_unprofiled_ring_memory = g_counters.threads_unprofiled_ring_memory.load();
  return s;
}

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
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

std::string RenderJson(const ReportContext& context, const Drain& drain, const HealthSnapshot& health) {
  const Profile& profile = drain.cumulative();
  const StringTable& strings = drain.strings();
  std::string out = "{\"format\":\"sparkprof-agent-profile\",\"version\":1,";
  out += "\"mode\":\"" + JsonEscape(context.mode) + "\",";
  out += "\"mechanism\":\"" + JsonEscape(context.mechanism) + "\",";
  out += "\"walker\":\"" + JsonEscape(context.walker) + "\",";
  AppendKeyNumber(out, "interval_ns", static_cast<uint64_t>(context.interval_ns));
  AppendKeyNumber(out, "pid", static_cast<uint64_t>(context.pid));
  AppendKeyNumber(out, "start_epoch_ns", static_cast<uint64_t>(context.start_epoch_ns));
  AppendKeyNumber(out, "end_epoch_ns", static_cast<uint64_t>(context.end_epoch_ns));
  AppendKeyNumber(out, "samples", profile.total_samples());
  AppendKeyNumber(out, "distinct_stacks", profile.stacks().size());

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
  out += "\"total\":{";
  AppendCategories(out, all);
  out += "},\"tasks\":[";
  bool first = true;
  for (const auto& [tag, totals] : per_task) {
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendTag(out, TaskTag{std::get<0>(tag), std::get<1>(tag), std::get<2>(tag)});
    AppendCategories(out, totals);
    out += '}';
  }
  out += "],\"threads\":[";
  first = true;
  for (const auto& [name, totals] : per_thread) {
    if (!first) out += ',';
    first = false;
    out += "{\"thread\":\"" + JsonEscape(name) + "\",";
    AppendCategories(out, totals);
    out += '}';
  }
  const GcSummary& gc = drain.gc_summary();
  out += "],\"gc\":{\"note\":\"stop-the-world pauses only (JVMTI GarbageCollectionStart/Finish); "
         "concurrent GC phases are not pauses and are not counted\",";
  AppendKeyNumber(out, "pauses", gc.pauses);
  AppendKeyNumber(out, "total_pause_ns", gc.total_ns);
  AppendKeyNumber(out, "max_pause_ns", gc.max_ns);
  out += "\"recent_pauses\":[";
  first = true;
  for (const GcPause& pause : drain.recent_pauses()) {
    if (!first) out += ',';
    first = false;
    out += "{\"start_epoch_ns\":" + std::to_string(pause.start_epoch_ns) +
           ",\"duration_ns\":" + std::to_string(pause.duration_ns) + '}';
  }
  out += "]},\"walks\":{";
  const Drain::WalkOutcomes& walks = drain.walk_outcomes();
  AppendKeyNumber(out, "complete", walks.complete);
  for (const auto& [name, by_kind] : {std::pair{"partial", &walks.partial},
                                      std::pair{"failed", &walks.failed}}) {
    out += '"';
    out += name;
    out += "\":{";
    bool first_kind = true;
    for (const auto& [code, count] : *by_kind) {
      if (!first_kind) out += ',';
      first_kind = false;
      out += "\"" + JsonEscape(WalkErrorFrameName(code)) + "\":" + std::to_string(count);
    }
    out += '}';
    if (by_kind == &walks.partial) out += ',';
  }
  out += "},\"health\":{";
  AppendKeyNumber(out, "samples_taken", health.samples_taken);
  AppendKeyNumber(out, "samples_dropped_ring_full", health.samples_dropped_ring_full);
  AppendKeyNumber(out, "samples_walk_failed", health.samples_walk_failed);
  AppendKeyNumber(out, "samples_no_thread_state", health.samples_no_thread_state);
  AppendKeyNumber(out, "samples_reentrant", health.samples_reentrant);
  AppendKeyNumber(out, "walk_crashes_recovered", health.walk_crashes_recovered);
  AppendKeyNumber(out, "walk_anchor_repairs", health.walk_anchor_repairs);
  AppendKeyNumber(out, "walk_stub_steps", health.walk_stub_steps);
  AppendKeyNumber(out, "walk_deopt_walks", health.walk_deopt_walks);
  AppendKeyNumber(out, "walk_entry_frames_named", health.walk_entry_frames_named);
  AppendKeyNumber(out, "walk_waiting_in_stub", health.walk_waiting_in_stub);
  AppendKeyNumber(out, "walk_time_ns_total", health.walk_time_ns_total);
  AppendKeyNumber(out, "walk_time_ns_avg",
                  health.samples_taken == 0 ? 0 : health.walk_time_ns_total / health.samples_taken);
  AppendKeyNumber(out, "stacks_dropped_cap", health.stacks_dropped_cap);
  AppendKeyNumber(out, "stale_methods", drain.stale_methods());
  AppendKeyNumber(out, "gc_pauses_dropped", health.gc_pauses_dropped);
  AppendKeyNumber(out, "batches_encoded", health.batches_encoded);
  AppendKeyNumber(out, "threads_registered", health.threads_registered);
  AppendKeyNumber(out, "jvm_threads_tracked", drain.jvm_threads_tracked());
  AppendKeyNumber(out, "timer_create_failures", health.timer_create_failures);
  AppendKeyNumber(out, "rings_shrunk", health.rings_shrunk);
  AppendKeyNumber(out, "threads_unprofiled_ring_memory", health.threads_unprofiled_ring_memory);
  AppendKeyNumber(out, "native_memory_bytes", health.native_memory_bytes, false);
  out += "}}\n";
  return out;
}

}  // namespace sparkprof::agent
