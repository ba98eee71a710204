#include "native-agent/agent.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>

#include "common/errno_text.h"
#include "common/json_writer.h"
#include "native-agent/agent_counters.h"
#include "native-agent/batch_encoder.h"
#include "native-agent/profile_writers.h"
#include "native-agent/schedstat.h"
#include "native-agent/signal_handler.h"
#include "native-agent/stack_walker.h"

#ifndef SPARKPROF_AGENT_HAVE_FLAMEGRAPH
#define SPARKPROF_AGENT_HAVE_FLAMEGRAPH 0
#endif
#if SPARKPROF_AGENT_HAVE_FLAMEGRAPH
#include "native-agent/flamegraph_output.h"
#endif

namespace sparkprof::agent {
namespace {

std::atomic<Agent*> g_agent{nullptr};

constexpr const char kAgentThreadPrefix[] = "sparkprof-";
constexpr int64_t kNameRefreshNs = 1'000'000'000;
constexpr int64_t kHeapReadPeriodNs = 1'000'000'000;  // the heap peak: one reading a second
// Every thread's run delay (ProcessRunDelay) on the driver: four steps a second, fine enough to
// tell its gaps between jobs (often under a second) from the stages around them.
constexpr int64_t kRunDelayPollNs = 250'000'000;
constexpr int kMaxJvmtiSampledThreads = 256;

pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Set on a thread the ring budget refused, so its every task does not ask again.
thread_local bool t_refused_for_ring_memory = false;

std::string MebibytesText(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "";
  return buffer;
}

}  // namespace

Agent* CurrentAgent() { return g_agent.load(); }
void SetCurrentAgent(Agent* agent) { g_agent.store(agent); }

void LogLine(const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  std::fprintf(stderr, "sparkprof: %s\n", message);
  std::fflush(stderr);
}

Agent::Agent(JavaVM* vm, jvmtiEnv* jvmti, AgentOptions options)
    : vm_(vm),
      jvmti_(jvmti),
      options_(std::move(options)),
      pid_(getpid()),
      out_path_(ExpandOutPath(options_.out_path, pid_)),
      executor_id_(options_.executor_id),
      ring_budget_(options_.ring_memory_bytes),
      sampler_(options_.mode, options_.interval_ns, registry_),
      resolver_(jvmti),
      drain_(DrainConfig{.interval_ns = options_.interval_ns,
                         .max_stacks = options_.max_stacks,
                         .keep_cumulative = !options_.out_path.empty()},
             registry_, resolver_, gc_monitor_, timeline_) {
  // Weights are CPU clock advances only in cpu mode with the signal walker (Start may still fall
  // back to the JVMTI sampler, which switches this off).
  drain_.set_charge_cpu_tails(options_.mode != SamplingMode::kWall &&
                              options_.walker != WalkerChoice::kJvmti);
}

bool Agent::Initialize() {
  jvmtiCapabilities capabilities{};
  capabilities.can_generate_garbage_collection_events = 1;
  // CompiledMethodLoad makes HotSpot keep debug info at non-safepoints (like
  // -XX:+DebugNonSafepoints), so AsyncGetCallTrace attributes samples to the right inlined frame.
  capabilities.can_generate_compiled_method_load_events = 1;
  // Both are "always" capabilities in HotSpot, granted in the live phase too (plugin start).
  if (jvmti_->AddCapabilities(&capabilities) != JVMTI_ERROR_NONE) {
    capabilities.can_generate_compiled_method_load_events = 0;
    if (jvmti_->AddCapabilities(&capabilities) != JVMTI_ERROR_NONE) {
      LogLine("the JVM refused GC event capabilities; the JVM runs without profiling");
      return false;
    }
  }
  compiled_method_load_ = capabilities.can_generate_compiled_method_load_events != 0;
  if (options_.monitor_waits) {
    // "Always" capabilities in HotSpot too; asked apart so a JVM refusing them only loses the
    // monitor waits.
    jvmtiCapabilities monitors{};
    monitors.can_generate_monitor_events = 1;
    monitors.can_get_monitor_info = 1;
    monitor_capabilities_ = jvmti_->AddCapabilities(&monitors) == JVMTI_ERROR_NONE;
    if (!monitor_capabilities_) {
      LogLine("the JVM refused monitor event capabilities; monitor waits are not recorded");
    }
  }
  return true;
}

void Agent::Start(JNIEnv* jni, jthread current_thread, bool late_start) {
  late_start_.store(late_start);
  start_epoch_ns_ = EpochNowNs();
  batch_start_epoch_ns_ = start_epoch_ns_;
  last_dump_ns_ = MonotonicNowNs();
  // Walker: AsyncGetCallTrace unless missing or walker=jvmti.
  use_jvmti_walker_ = options_.walker == WalkerChoice::kJvmti;
  if (!use_jvmti_walker_ && !ResolveAsyncGetCallTrace()) {
    use_jvmti_walker_ = true;
    drain_.set_charge_cpu_tails(false);
    LogLine(
        "AsyncGetCallTrace not found in libjvm; falling back to JVMTI stack sampling "
        "(GetThreadListStackTraces: safepoint-biased, higher overhead)");
  }
  // jmethodIDs for classes loaded before us (for a late start: every class the application has
  // used so far); ClassPrepare covers the rest from here on. Enabled first, so a class prepared
  // during the walk is covered by one or the other.
  // AsyncGetCallTrace also refuses to walk (ticks_no_class_load) unless ClassLoad is enabled.
  jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, nullptr);
  jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_CLASS_PREPARE, nullptr);
  const int64_t method_ids_start_ns = CurrentThreadCpuNs();
  PreallocateMethodIdsForLoadedClasses(jvmti_, jni);
  method_id_cpu_ns_.fetch_add(
      static_cast<uint64_t>(std::max<int64_t>(0, CurrentThreadCpuNs() - method_ids_start_ns)));

  if (!use_jvmti_walker_) {
    if (options_.vm_structs) {
      EnableAnchorRepairIfRecognised(jni);
    } else {
      LogLine(
          "vmstructs=off: AsyncGetCallTrace alone (no last Java frame repair, no stepping "
          "over stub frames)");
    }
    std::string error;
    if (!InstallCrashGuard(&error)) {
      LogLine("%s; the JVM runs without profiling", error.c_str());
      return;
    }
    SetStackWalker(AsyncGetCallTraceWalker);
    // CPU mode: each sample weighs the CPU its thread used since its last sample, so the
    // profile's time adds up to the threads' CPU whatever the kernel's tick does to the timer.
    SetFixedSampleWeight(options_.mode == SamplingMode::kWall ? options_.interval_ns : 0);
    SetTaskWallSplit(options_.mode == SamplingMode::kCpuWall);
    if (options_.vm_structs) SetJavaThreadStateReader(HotSpotJavaThreadState);
    if (options_.mode == SamplingMode::kCpuWall) ProbeSchedstat();
    sampler_.set_cpu_meter(&agent_cpu_);
    Status started = sampler_.Start();
    if (!started.ok()) {
      LogLine("cannot start sampling (%s); the JVM runs without profiling",
              started.message().c_str());
      return;
    }
  }
  for (jvmtiEvent event :
       {JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_GARBAGE_COLLECTION_START,
        JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, JVMTI_EVENT_VM_DEATH}) {
    jvmti_->SetEventNotificationMode(JVMTI_ENABLE, event, nullptr);
  }
  debug_non_safepoints_ = EnableNonSafepointDebugInfo();
  if (Result<JvmCounters*> counters = JvmCounters::OpenInProcess(); counters.ok()) {
    jvm_counters_.store(*counters, std::memory_order_release);
  } else {
    LogLine(
        "the JVM's memory counters were not found (%s): heap pools and after-GC use are not "
        "reported",
        counters.status().message().c_str());
  }
  if (monitor_capabilities_) {
    MonitorWaitConfig config;
    config.depth = options_.depth;
    config.waiter_stack_period_ns = options_.interval_ns;
    monitor_waits_ = new MonitorWaits(config);
    jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, nullptr);
    jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, nullptr);
  }
  if (options_.mode != SamplingMode::kWall && options_.jvm_internal_threads) {
    // Polled by the drain; an agent started in a running JVM counts their CPU from now on.
    jvm_threads_ = std::make_unique<JvmInternalThreads>(options_.interval_ns, !late_start);
    drain_.set_jvm_internal_threads(jvm_threads_.get());
  }
  SetUpMetrics();
  running_.store(true);
  EnableSampling(!use_jvmti_walker_);
  // The thread that runs VMInit (main) started before ThreadStart was enabled.
  if (current_thread != nullptr) {
    std::string name = ThreadName(jvmti_, jni, current_thread);
    if (name.rfind(kAgentThreadPrefix, 0) != 0) RegisterCurrentThread(jni, current_thread, name);
  }
  StartAgentThread(jni, "sparkprof-drain", DrainThreadMain);
  if (use_jvmti_walker_) StartAgentThread(jni, "sparkprof-jvmti-sampler", JvmtiSamplerMain);
  LogLine("profiling: mode=%s interval=%lldus %s, walker=%s%s%s%s", SamplingModeName(options_.mode),
          static_cast<long long>(options_.interval_ns / 1000),
          use_jvmti_walker_ ? "(JVMTI sampler)" : sampler_.mechanism().c_str(),
          use_jvmti_walker_ ? "jvmti" : "AsyncGetCallTrace",
          out_path_.empty() ? "" : ", out=", out_path_.c_str(),
          late_start ? ", started in the running JVM" : "");
}

void Agent::OnClassPrepare(jclass klass) {
  const int64_t start_ns = CurrentThreadCpuNs();
  PreallocateMethodIds(jvmti_, klass);
  method_id_cpu_ns_.fetch_add(
      static_cast<uint64_t>(std::max<int64_t>(0, CurrentThreadCpuNs() - start_ns)),
      std::memory_order_relaxed);
}

// HotSpot keeps the debug info that places a pc of compiled code in the right inlined method only
// at safepoints, unless -XX:+DebugNonSafepoints, or, when that flag is left at its default, while
// a JVMTI agent has CompiledMethodLoad events enabled (DebugInformationRecorder). Those events
// cost: the JVM's Service Thread builds and posts an address map and the inlining records of every
// method it compiles (0.36 s of the demo executors' 58 s of CPU, bench/RESULTS.md; async-profiler
// avoids them the same way). So the agent sets the flag itself where HotSpot's flag table lists
// it, and enables the events only where it does not. A value the user set stays as set.
const char* Agent::EnableNonSafepointDebugInfo() {
  std::string why;  // stays empty with vmstructs=off: the user chose it, and it was said
  if (options_.vm_structs) {
    Result<HotSpotTables> tables = FindHotSpotTables();
    Result<BoolFlag> flag = tables.ok()
                                ? FindBoolFlag(tables->structs, tables->types, "DebugNonSafepoints")
                                : Result<BoolFlag>(tables.status());
    Dl_info library{};
    if (flag.ok() && (dladdr(flag->value, &library) == 0 || library.dli_fname == nullptr ||
                      std::strstr(library.dli_fname, "libjvm") == nullptr)) {
      flag = InvalidArgument("the flag's value does not lie in libjvm");
    }
    if (flag.ok()) {
      if (flag->set_explicitly) return "command line";
      *static_cast<volatile bool*>(flag->value) = true;
      return "flag";
    }
    why = flag.status().message();
  }
  if (!compiled_method_load_) return "off";
  if (!why.empty()) {
    LogLine(
        "DebugNonSafepoints is not set through HotSpot's flag table (%s); CompiledMethodLoad "
        "events keep the inlined frames' debug info instead",
        why.c_str());
  }
  jvmti_->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, nullptr);
  return "event";
}

void Agent::EnableAnchorRepairIfRecognised(JNIEnv* jni) {
  Result<HotSpotTables> tables = FindHotSpotTables();
  Result<HotSpotLayout> layout = tables.ok() ? ReadHotSpotLayout(tables->structs, tables->types)
                                             : Result<HotSpotLayout>(tables.status());
  Status checked = layout.ok() ? CheckLayoutOnCurrentThread(*layout, jni) : layout.status();
  if (checked.ok()) checked = CheckCodeCache(*layout);
  if (checked.ok()) {
    // A live method's id, found again from its Method as the walker does in the handler.
    jint count = 0;
    jmethodID* methods = nullptr;
    jclass object_class = jni->FindClass("java/lang/Object");
    if (object_class == nullptr ||
        jvmti_->GetClassMethods(object_class, &count, &methods) != JVMTI_ERROR_NONE || count == 0) {
      jni->ExceptionClear();
      checked = Unsupported("no method of java.lang.Object to check jmethodIDs with");
    } else {
      checked = CheckMethodIdLookup(*layout, methods[0]);
    }
    if (methods != nullptr) jvmti_->Deallocate(reinterpret_cast<unsigned char*>(methods));
    if (object_class != nullptr) jni->DeleteLocalRef(object_class);
  }
  if (checked.ok() && EnableAnchorRepair(*layout)) return;
  LogLine(
      "HotSpot's VM structures not recognised (%s); samples of threads stopped in the VM "
      "may stay [unknown_not_Java] or [not_walkable_not_Java]",
      checked.ok() ? "x86-64 only" : checked.message().c_str());
}

void Agent::SetUpMetrics() {
  if (options_.prometheus.empty()) return;
  auto samples = metrics_.AddCounter("sparkprof_agent_samples_total",
                                     "Profiling signals that took a sample on a profiled thread.");
  auto dropped = metrics_.AddCounter("sparkprof_agent_samples_dropped_total",
                                     "Samples not recorded, by reason.");
  auto walk_failed = metrics_.AddCounter("sparkprof_agent_walk_failures_total",
                                         "Samples whose stack walk returned no Java frames.");
  auto walk_seconds = metrics_.AddCounter("sparkprof_agent_stack_walk_seconds_total",
                                          "Time spent walking stacks inside the signal handler.");
  auto stacks_dropped =
      metrics_.AddCounter("sparkprof_agent_stacks_dropped_total",
                          "Samples folded into [overflow]: distinct-stack cap reached.");
  auto category = metrics_.AddCounter("sparkprof_agent_task_time_seconds_total",
                                      "Sampled thread time by category (gc: the GC threads' CPU "
                                      "and stop-the-world pause time overlapping tasks; jit, vm: "
                                      "the JVM's compiler and VM threads' CPU).");
  auto memory = metrics_.AddGauge("sparkprof_agent_native_memory_bytes",
                                  "Native memory held by the agent's rings and tables.");
  auto threads = metrics_.AddGauge("sparkprof_agent_threads", "Threads the agent samples.");
  auto pauses = metrics_.AddHistogram(
      "sparkprof_agent_gc_pause_seconds",
      "Stop-the-world GC pauses (JVMTI GarbageCollectionStart/Finish; concurrent phases excluded).",
      {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  if (!samples.ok() || !dropped.ok() || !walk_failed.ok() || !walk_seconds.ok() ||
      !stacks_dropped.ok() || !category.ok() || !memory.ok() || !threads.ok() || !pauses.ok()) {
    LogLine("internal error registering metrics; /metrics disabled");
    return;
  }
  gc_pause_histogram_ = &(*pauses)->WithLabels();
  drain_.set_pause_observer(
      [this](const GcPause& pause) { gc_pause_histogram_->Observe(pause.duration_ns / 1e9); });
  // Counters mirror the agent's atomics: add the difference since the last scrape.
  auto mirror = [](metrics::Counter* counter, double value) {
    double delta = value - counter->Value();
    if (delta > 0) counter->Increment(delta);
  };
  metrics::Counter* samples_counter = &(*samples)->WithLabels();
  metrics::Counter* ring_full = &(*dropped)->WithLabels({{"reason", "ring_full"}});
  metrics::Counter* reentrant = &(*dropped)->WithLabels({{"reason", "reentrant"}});
  metrics::Counter* no_thread = &(*dropped)->WithLabels({{"reason", "unknown_thread"}});
  metrics::Counter* walk_failed_counter = &(*walk_failed)->WithLabels();
  metrics::Counter* walk_seconds_counter = &(*walk_seconds)->WithLabels();
  metrics::Counter* stacks_counter = &(*stacks_dropped)->WithLabels();
  metrics::Gauge* memory_gauge = &(*memory)->WithLabels();
  metrics::Gauge* threads_gauge = &(*threads)->WithLabels();
  std::vector<metrics::Counter*> category_counters;
  category_counters.reserve(classifier::kCategoryCount);
  for (int i = 0; i < classifier::kCategoryCount; ++i) {
    category_counters.push_back(&(*category)->WithLabels(
        {{"category", std::string(classifier::CategoryName(static_cast<Category>(i)))}}));
  }
  metrics_.AddCollectCallback([=, this] {
    HealthSnapshot health = ReadHealthCounters();
    mirror(samples_counter, static_cast<double>(health.samples_taken));
    mirror(ring_full, static_cast<double>(health.samples_dropped_ring_full));
    mirror(reentrant, static_cast<double>(health.samples_reentrant));
    mirror(no_thread, static_cast<double>(health.samples_no_thread_state));
    mirror(walk_failed_counter, static_cast<double>(health.samples_walk_failed));
    mirror(walk_seconds_counter, health.walk_time_ns_total / 1e9);
    mirror(stacks_counter, static_cast<double>(health.stacks_dropped_cap));
    memory_gauge->Set(static_cast<double>(health.native_memory_bytes));
    threads_gauge->Set(static_cast<double>(registry_.LiveCount()));
    for (int i = 0; i < classifier::kCategoryCount; ++i) {
      mirror(category_counters[i], category_time_ns_[i].load() / 1e9);
    }
  });
  metrics::HttpExposerLimits limits;
  // The server's own failure (out of memory) costs /metrics only: one line, profiling goes on.
  limits.on_failure = [](const std::string& message) {
    LogLine("%s; /metrics disabled, profiling continues", message.c_str());
  };
  auto exposer = metrics::HttpExposer::Start(
      options_.prometheus, [this] { return metrics_.Render(); }, std::move(limits));
  if (!exposer.ok()) {
    LogLine("prometheus=%s: %s; /metrics disabled, profiling continues",
            options_.prometheus.c_str(), exposer.status().message().c_str());
    return;
  }
  exposer_ = std::move(*exposer);
  LogLine("serving /metrics on port %d", exposer_->port());
}

ThreadState* Agent::RegisterCurrentThread(JNIEnv* jni, jthread thread, std::string name) {
  if (t_refused_for_ring_memory) return nullptr;
  const uint32_t slots = ring_budget_.Reserve(options_.ring, options_.depth);
  if (slots == 0) {
    t_refused_for_ring_memory = true;  // this thread stays unprofiled; no retry per task
    g_counters.threads_unprofiled_ring_memory.fetch_add(1);
    if (!ring_refusal_logged_.exchange(true)) {
      LogLine(
          "ringmemory=%s is used up by %zu threads' rings; threads started from now on are "
          "not profiled (counted as threads_unprofiled_ring_memory)",
          MebibytesText(ring_budget_.budget_bytes()).c_str(), registry_.LiveCount());
    }
    return nullptr;
  }
  if (slots < SampleRing::RoundedCapacity(options_.ring)) {
    g_counters.rings_shrunk.fetch_add(1);
    if (!ring_shrink_logged_.exchange(true)) {
      LogLine(
          "ring=%u x depth=%d needs %s per thread; rings get %u slots or fewer to stay within "
          "ringmemory=%s (counted as rings_shrunk)",
          options_.ring, options_.depth,
          MebibytesText(SampleRing::MemoryBytesFor(options_.ring, options_.depth)).c_str(), slots,
          MebibytesText(ring_budget_.budget_bytes()).c_str());
    }
  }
  auto state = std::make_unique<ThreadState>(CurrentTid(), slots, options_.depth, &ring_budget_);
  if (!state->ring.allocated()) {
    t_refused_for_ring_memory = true;
    g_counters.threads_unprofiled_ring_memory.fetch_add(1);
    if (!ring_refusal_logged_.exchange(true)) {
      LogLine("cannot allocate %s for a sample ring; that thread is not profiled",
              MebibytesText(state->ring.memory_bytes()).c_str());
    }
    return nullptr;
  }
  state->walk_context = jni;
  state->last_cpu_ns.store(CurrentThreadCpuNs());  // before the timer: the first sample's base
  state->thread_global_ref = jni->NewGlobalRef(thread);
  state->name = std::move(name);
  ThreadState* registered = registry_.Add(std::move(state));
  BindCurrentThread(registered);
  sampler_.OnThreadStarted(registered);
  g_counters.threads_registered.fetch_add(1);
  return registered;
}

void Agent::OnThreadStart(JNIEnv* jni, jthread thread) {
  if (!running_.load() || shutting_down_.load() || CurrentThreadState() != nullptr) return;
  std::string name = ThreadName(jvmti_, jni, thread);
  if (name.rfind(kAgentThreadPrefix, 0) == 0) return;
  RegisterCurrentThread(jni, thread, std::move(name));
}

void Agent::OnThreadEnd(JNIEnv* jni, jthread thread) {
  ThreadState* state = CurrentThreadState();
  if (state == nullptr) return;
  // Order matters: no more timer signals, then unbind (a late signal finds no state), then
  // hand the state to the drain, which empties its ring and frees it.
  sampler_.OnThreadEnding(state);
  BindCurrentThread(nullptr);
  state->end_cpu_ns.store(std::max<int64_t>(CurrentThreadCpuNs(), 1));  // the drain charges it
  timeline_.End(state, MonotonicNowNs());
  registry_.Retire(state);
}

void Agent::OnMonitorContendedEnter(JNIEnv* jni, jobject object) {
  if (monitor_waits_ == nullptr || !running_.load() || shutting_down_.load()) return;
  ThreadState* state = CurrentThreadState();
  if (state == nullptr) return;
  const TaskTag tag = state->tag.Read();
  if (!tag.is_task()) return;
  monitor_waits_->OnContendedEnter(jvmti_, jni, object, tag);
}

void Agent::OnMonitorContendedEntered() {
  if (monitor_waits_ != nullptr) monitor_waits_->OnContendedEntered();
}

void Agent::SetTaskTag(JNIEnv* jni, const TaskTag& tag) {
  if (!running_.load() || shutting_down_.load()) return;
  ThreadState* state = CurrentThreadState();
  if (state == nullptr) {
    // A thread that existed before the agent (late attach, or a thread started before VMInit).
    jthread thread = nullptr;
    if (jvmti_->GetCurrentThread(&thread) != JVMTI_ERROR_NONE || thread == nullptr) return;
    state = RegisterCurrentThread(jni, thread, ThreadName(jvmti_, jni, thread));
    jni->DeleteLocalRef(thread);
    if (state == nullptr) return;  // over the ring memory budget: the thread is not profiled
  }
  if (options_.mode == SamplingMode::kCpuWall) {
    // The split's baselines, before the tag: the first wall sample measures from here.
    int64_t run_delay_ns = -1;
    if (schedstat_usable_.load(std::memory_order_relaxed)) {
      int fd = state->schedstat_fd.load();
      if (fd < 0) {
        fd = OpenSchedstat(state->tid);
        if (fd >= 0) {
          std::lock_guard<std::mutex> lock(registry_.mutex());
          state->schedstat_fd.store(fd);
        }
      }
      std::optional<SchedstatReading> read = ReadSchedstat(fd);
      if (read) {
        run_delay_ns = read->run_delay_ns;
      } else {
        OnSchedstatUnreadable();
      }
    }
    // Run delay up to two intervals old that no sample charged yet stays to be charged.
    MarkTaskWallBaseline(state, run_delay_ns, 2 * options_.interval_ns);
  }
  state->tag.Set(tag);
  sampler_.OnTaskTagged(state);
  timeline_.Begin(state, tag, MonotonicNowNs());
}

void Agent::ClearTaskTag(JNIEnv* jni) {
  ThreadState* state = CurrentThreadState();
  if (state == nullptr) return;
  // cpu+wall: the task's CPU after its last wall sample is not charged to the next untagged CPU
  // sample (it belongs to the task; see docs/agent.md, the task's tail). Before the tag goes.
  if (options_.mode == SamplingMode::kCpuWall) MarkTaskWallBaseline(state, /*run_delay_ns=*/-1);
  state->tag.Clear();
  timeline_.End(state, MonotonicNowNs());
}

void Agent::ProbeSchedstat() {
  int fd = OpenSchedstat(CurrentTid());
  std::optional<SchedstatReading> read = ReadSchedstat(fd);
  if (fd >= 0) close(fd);
  if (!read) {
    schedstat_usable_.store(false);
    LogLine(
        "cannot read /proc/self/task/<tid>/schedstat (%s); task threads' off-CPU time is not "
        "split into cpu_starved (run delay)",
        fd < 0 ? ErrnoText(errno).c_str() : "unexpected content");
    return;
  }
  schedstat_usable_.store(true);
  sampler_.set_read_schedstat(true);
  sampler_.set_schedstat_failure_callback([] {
    if (Agent* agent = CurrentAgent()) agent->OnSchedstatUnreadable();
  });
}

void Agent::OnSchedstatUnreadable() {
  if (!schedstat_usable_.exchange(false)) return;
  sampler_.set_read_schedstat(false);
  LogLine(
      "a task thread's /proc/self/task/<tid>/schedstat became unreadable; from now on "
      "off-CPU time is not split into cpu_starved (run delay)");
}

void Agent::StartAgentThread(JNIEnv* jni, const char* name, jvmtiStartFunction body) {
  jclass thread_class = jni->FindClass("java/lang/Thread");
  jmethodID constructor =
      thread_class ? jni->GetMethodID(thread_class, "<init>", "(Ljava/lang/String;)V") : nullptr;
  jstring thread_name = jni->NewStringUTF(name);
  jobject thread = (constructor && thread_name)
                       ? jni->NewObject(thread_class, constructor, thread_name)
                       : nullptr;
  if (thread == nullptr) {
    jni->ExceptionClear();
    LogLine("cannot create the %s thread; profiles will only be written at exit", name);
    return;
  }
  agent_threads_alive_.fetch_add(1);
  if (jvmti_->RunAgentThread(thread, body, this, JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE) {
    agent_threads_alive_.fetch_sub(1);
    LogLine("cannot start the %s thread", name);
  }
  jni->DeleteLocalRef(thread);
  jni->DeleteLocalRef(thread_name);
  jni->DeleteLocalRef(thread_class);
}

void JNICALL Agent::DrainThreadMain(jvmtiEnv*, JNIEnv* jni, void* arg) {
  static_cast<Agent*>(arg)->DrainLoop(jni);
}

void JNICALL Agent::JvmtiSamplerMain(jvmtiEnv*, JNIEnv* jni, void* arg) {
  static_cast<Agent*>(arg)->JvmtiSamplerLoop(jni);
}

int64_t Agent::DrainPeriodNs() const {
  // A ring must not fill between drains: drain after a quarter of it, within 5..50 ms.
  int64_t quarter_ring = options_.interval_ns * static_cast<int64_t>(options_.ring) / 4;
  return std::clamp<int64_t>(quarter_ring, 5'000'000, 50'000'000);
}

void Agent::RunPeriodicallyUntilShutdown(int64_t period_ns, const std::function<void()>& body) {
  const auto period = std::chrono::nanoseconds(period_ns);
  while (!shutting_down_.load()) {
    {
      std::unique_lock<std::mutex> lock(wakeup_mutex_);
      wakeup_.wait_for(lock, period, [this] { return shutting_down_.load(); });
    }
    std::lock_guard<std::mutex> lock(drain_mutex_);
    if (shutting_down_.load()) break;
    body();
  }
  {
    std::lock_guard<std::mutex> lock(wakeup_mutex_);
    agent_threads_alive_.fetch_sub(1);
  }
  wakeup_.notify_all();
}

void Agent::DrainLoop(JNIEnv* jni) {
  agent_cpu_.AddCurrentThread();
  RunPeriodicallyUntilShutdown(DrainPeriodNs(), [this, jni] {
    RunDrainCycleLocked(jni, /*periodic=*/true);
    if (options_.dump_seconds > 0 && !out_path_.empty() &&
        MonotonicNowNs() - last_dump_ns_ >= options_.dump_seconds * 1'000'000'000) {
      last_dump_ns_ = MonotonicNowNs();
      WriteOutputsLocked();
    }
  });
}

void Agent::JvmtiSamplerLoop(JNIEnv* jni) {
  agent_cpu_.AddCurrentThread();
  RunPeriodicallyUntilShutdown(options_.interval_ns, [this, jni] { SampleWithJvmtiLocked(jni); });
}

// The fallback walker: safepoint-biased, but needs nothing from HotSpot beyond JVMTI. Holding
// drain_mutex_ keeps every state alive (only the drain frees) and makes us the rings' only
// producer and consumer-excluder.
void Agent::SampleWithJvmtiLocked(JNIEnv* jni) {
  std::vector<ThreadState*> states = registry_.LiveSnapshot();
  if (states.size() > kMaxJvmtiSampledThreads) states.resize(kMaxJvmtiSampledThreads);
  std::vector<jthread> threads;
  threads.reserve(states.size());
  for (ThreadState* state : states)
    threads.push_back(static_cast<jthread>(state->thread_global_ref));
  if (threads.empty()) return;
  jvmtiStackInfo* infos = nullptr;
  int64_t start_ns = MonotonicNowNs();
  if (jvmti_->GetThreadListStackTraces(static_cast<jint>(threads.size()), threads.data(),
                                       options_.depth, &infos) != JVMTI_ERROR_NONE) {
    return;
  }
  int64_t now_ns = MonotonicNowNs();
  for (size_t i = 0; i < states.size(); ++i) {
    const jvmtiStackInfo& info = infos[i];
    if (info.state & JVMTI_THREAD_STATE_TERMINATED) continue;
    bool runnable = (info.state & JVMTI_THREAD_STATE_RUNNABLE) != 0;
    bool task = states[i]->tag.Read().is_task();
    if (options_.mode == SamplingMode::kCpu && !runnable) continue;
    // cpu+wall: untagged threads as in cpu mode; a tagged thread waiting is off CPU.
    if (options_.mode == SamplingMode::kCpuWall && !runnable && !task) continue;
    g_counters.samples_taken.fetch_add(1, std::memory_order_relaxed);
    SampleRecord* record = states[i]->ring.TryReserve();
    if (record == nullptr) {
      g_counters.samples_dropped_ring_full.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    record->tag = states[i]->tag.Read();
    // JVMTI sees thread states, not CPU clocks: a waiting task thread's interval is off CPU.
    bool off_cpu = options_.mode == SamplingMode::kCpuWall && task && !runnable;
    record->weight_ns = off_cpu ? 0 : options_.interval_ns;
    record->off_cpu_ns = off_cpu ? options_.interval_ns : 0;
    record->cpu_starved_ns = 0;
    record->idle_before_us = 0;
    record->jvm_thread_state =
        (info.state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) ? kThreadBlocked : -1;
    record->partial_walk_error = 0;
    int frames = std::min<int>(info.frame_count, states[i]->ring.depth());
    for (int f = 0; f < frames; ++f) {
      record->frames[f].bci_or_line = static_cast<int32_t>(info.frame_buffer[f].location);
      record->frames[f].method_id = info.frame_buffer[f].method;
    }
    record->num_frames = frames;
    states[i]->ring.Commit();
  }
  g_counters.walk_time_ns_total.fetch_add(static_cast<uint64_t>(now_ns - start_ns));
  jvmti_->Deallocate(reinterpret_cast<unsigned char*>(infos));
}

void Agent::RefreshThreadNamesLocked(JNIEnv* jni) {
  for (ThreadState* state : registry_.LiveSnapshot()) {
    if (state->thread_global_ref == nullptr) continue;
    std::string name = ThreadName(jvmti_, jni, static_cast<jthread>(state->thread_global_ref));
    if (!name.empty()) state->name = std::move(name);
  }
}

void Agent::PollRunDelayLocked(int64_t now_ns) {
  last_run_delay_poll_ns_ = now_ns;
  if (!run_delay_usable_) return;
  if (!run_delay_.Poll(EpochNowNs() / 1'000'000)) {
    run_delay_usable_ = false;
    LogLine(
        "cannot list /proc/self/task (%s); the JVM's threads' run delay (CpuUse.run_delay_ns) "
        "is not measured",
        ErrnoText(errno).c_str());
  }
}

void Agent::RunDrainCycleLocked(JNIEnv* jni, bool periodic) {
  int64_t now = MonotonicNowNs();
  // The heap's use about once a second, for the batch window's peak (two native calls).
  if (jni != nullptr && now - last_heap_read_ns_ >= kHeapReadPeriodNs) {
    last_heap_read_ns_ = now;
    heap_used_peak_bytes_ = std::max(heap_used_peak_bytes_, java_memory_.HeapUsed(jni, jvmti_));
  }
  // Every thread's run delay in steps on the driver (its wait while no task runs); executors
  // read it once per batch (their task threads' own run delay is the sampler's).
  if (periodic && now - last_run_delay_poll_ns_ >= kRunDelayPollNs &&
      executor_id_.Get() == "driver") {
    PollRunDelayLocked(now);
  }
  if (now - last_name_refresh_ns_ >= kNameRefreshNs) {
    last_name_refresh_ns_ = now;
    RefreshThreadNamesLocked(jni);
  }
  resolver_.set_jni(jni);
  drain_.RunCycle(
      [jni](ThreadState* state) {
        if (state->thread_global_ref != nullptr) {
          jni->DeleteGlobalRef(static_cast<jobject>(state->thread_global_ref));
          state->thread_global_ref = nullptr;
        }
      },
      periodic);
  const auto& totals = drain_.category_time_ns();
  for (int i = 0; i < classifier::kCategoryCount; ++i) category_time_ns_[i].store(totals[i]);
}

bool Agent::WriteOutputsLocked() {
  if (out_path_.empty()) return false;
  ReportContext context;
  context.mode = SamplingModeName(options_.mode);
  context.mechanism = use_jvmti_walker_ ? "jvmti: GetThreadListStackTraces" : sampler_.mechanism();
  context.walker = use_jvmti_walker_ ? "JVMTI" : "AsyncGetCallTrace";
  context.interval_ns = options_.interval_ns;
  context.pid = pid_;
  context.start_epoch_ns = start_epoch_ns_;
  context.end_epoch_ns = EpochNowNs();
  HealthSnapshot health = ReadHealthCounters();
  std::string collapsed = RenderCollapsed(drain_.cumulative(), drain_.strings());
  Status status = WriteFileAtomically(out_path_ + ".collapsed", collapsed);
  if (status.ok())
    status = WriteFileAtomically(out_path_ + ".json", RenderJson(context, drain_, health));
#if SPARKPROF_AGENT_HAVE_FLAMEGRAPH
  if (status.ok()) status = WriteFlameGraphHtml(out_path_ + ".html", drain_, context);
#endif
  if (status.ok()) {
    output_failure_logged_ = false;
    return true;
  }
  // Once per run of failures, not at every dump.
  if (!output_failure_logged_) LogLine("%s; profile files not written", status.message().c_str());
  output_failure_logged_ = true;
  return false;
}

Agent::PythonOutcome Agent::AddPythonProfile(std::string bytes) {
  if (!running_.load() || shutting_down_.load()) return PythonOutcome::kNotRunning;
  if (bytes.size() > kMaxPythonProfileBytes) {
    g_counters.python_profiles_refused.fetch_add(1);
    return PythonOutcome::kTooLarge;
  }
  std::lock_guard<std::mutex> lock(python_mutex_);
  if (python_queue_.size() >= kMaxQueuedPythonFiles ||
      python_queue_bytes_ + bytes.size() > kMaxQueuedPythonBytes) {
    g_counters.python_profiles_queue_full.fetch_add(1);
    return PythonOutcome::kQueueFull;
  }
  python_queue_bytes_ += bytes.size();
  python_queue_.push_back(std::move(bytes));
  return PythonOutcome::kQueued;
}

void Agent::AddQueuedPythonProfilesLocked() {
  std::vector<std::string> queue;
  {
    std::lock_guard<std::mutex> lock(python_mutex_);
    queue.swap(python_queue_);
    python_queue_bytes_ = 0;
  }
  PythonTaskProfile profile;
  for (const std::string& bytes : queue) {
    if (std::optional<std::string> error = ParsePythonProfile(bytes, profile)) {
      g_counters.python_profiles_refused.fetch_add(1);
      if (!python_refusal_logged_) {
        python_refusal_logged_ = true;
        LogLine(
            "a Python worker's profile was refused (%s); further refusals are counted "
            "(python_profiles_refused)",
            error->c_str());
      }
      continue;
    }
    g_counters.python_worker_files_dropped.fetch_add(profile.files_dropped);
    if (drain_.AddPythonProfile(profile)) {
      g_counters.python_profiles_added.fetch_add(1);
    } else {
      g_counters.python_profiles_unknown_task.fetch_add(1);
    }
  }
}

std::vector<MonitorWaitRow> Agent::TakeMonitorWaitsLocked() {
  std::vector<MonitorWaitRow> rows;
  if (monitor_waits_ == nullptr) return rows;
  auto frames = [&](const std::vector<const void*>* methods) {
    std::vector<uint32_t> ids;
    if (methods == nullptr) return ids;
    ids.reserve(methods->size());
    for (const void* method : *methods) ids.push_back(drain_.InternMethod(method));
    return ids;
  };
  for (const MonitorWaitDelta& delta : monitor_waits_->table().TakeDeltas()) {
    MonitorWaitRow row;
    row.stage_id = delta.stage_id;
    row.stage_attempt = delta.stage_attempt;
    row.monitor_class = drain_.InternText(delta.monitor_class);
    row.waiter = frames(delta.waiter);
    row.holder = frames(delta.holder);
    if (!delta.holder_thread.empty()) row.holder_thread = drain_.InternText(delta.holder_thread);
    row.waits = delta.waits;
    row.wait_ns = delta.wait_ns;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<uint8_t> Agent::DrainBatch(JNIEnv* jni) {
  if (!running_.load()) return {};
  std::lock_guard<std::mutex> lock(drain_mutex_);
  // On the plugin's thread that asked for the batch: its CPU here is the agent's, counted in the
  // next batch's agent_cpu_ns (this one is encoded before its end).
  const int64_t batch_cpu_start = CurrentThreadCpuNs();
  struct AddBatchCpu {
    uint64_t& total;
    int64_t start;
    ~AddBatchCpu() {
      total += static_cast<uint64_t>(std::max<int64_t>(0, CurrentThreadCpuNs() - start));
    }
  } add_batch_cpu{batch_cpu_ns_, batch_cpu_start};
  RunDrainCycleLocked(jni);
  AddQueuedPythonProfilesLocked();
  std::vector<GcPause> pauses = drain_.TakePendingPauses();
  std::vector<S3aRow> s3a = s3a_rows_.Take();
  std::vector<MonitorWaitRow> monitors = TakeMonitorWaitsLocked();
  if (drain_.pending().empty() && pauses.empty() && s3a.empty() && monitors.empty()) return {};
  PollRunDelayLocked(MonotonicNowNs());  // the window's last step ends as it does
  BatchHeader header;
  header.executor_id = executor_id_.Get();
  header.host = HostName();
  header.pid = pid_;
  header.start_epoch_ns = batch_start_epoch_ns_;
  header.end_epoch_ns = EpochNowNs();
  header.interval_ns = options_.interval_ns;
  header.mode = SamplingModeName(options_.mode);
  batch_start_epoch_ns_ = header.end_epoch_ns;
  g_counters.batches_encoded.fetch_add(1);
  // Read per batch sent: a window with nothing to send adds to the next one, as its start does.
  CpuUseDelta cpu = cpu_use_.TakeDelta();
  ProcessRunDelay::Taken run_delay = run_delay_.Take();
  cpu.run_delay_polls = run_delay.polls;
  cpu.run_delay_ns = run_delay.total_ns;
  cpu.run_delay_steps = std::move(run_delay.steps);
  cpu.agent_cpu_ns = AgentCpuNsLocked() - agent_cpu_sent_ns_;
  agent_cpu_sent_ns_ += cpu.agent_cpu_ns;
  const MemoryUseReading memory = memory_use_.Read();
  const int64_t jvm_read_start = CurrentThreadCpuNs();
  JvmMemoryFigures jvm_memory;
  if (JvmCounters* counters = jvm_counters_.load(std::memory_order_acquire)) {
    jvm_memory.counters = counters->Read();
  }
  jvm_memory.java = java_memory_.Read(jni, jvmti_);
  jvm_memory.heap_used_bytes = jvm_memory.java.known ? jvm_memory.java.heap_used_bytes()
                                                     : jvm_memory.counters.heap_used_bytes;
  jvm_memory.heap_used_peak_bytes = std::max(heap_used_peak_bytes_, jvm_memory.heap_used_bytes);
  heap_used_peak_bytes_ = 0;
  ++jvm_memory_reads_;
  jvm_memory_read_ns_ +=
      static_cast<uint64_t>(std::max<int64_t>(0, CurrentThreadCpuNs() - jvm_read_start));
  jvm_memory.spark_execution_bytes = spark_execution_bytes_.load();
  jvm_memory.spark_storage_bytes = spark_storage_bytes_.load();
  std::vector<uint8_t> bytes =
      EncodeBatch(header, drain_.pending(), drain_.strings(), pauses, ReadHealthCounters(), s3a,
                  &cpu, &memory, monitors, &jvm_memory);
  drain_.pending().Clear();
  return bytes;
}

uint64_t Agent::AgentCpuNsLocked() {
  uint64_t total = agent_cpu_.ThreadsNs() + batch_cpu_ns_ + method_id_cpu_ns_.load();
  // The signal handlers' walks run on the sampled threads; the JVMTI walker's on its own thread,
  // whose CPU clock counts them already.
  if (!use_jvmti_walker_) total += g_counters.walk_time_ns_total.load();
  if (monitor_waits_ != nullptr) total += monitor_waits_->enter_cpu_ns();
  return std::max(total, agent_cpu_sent_ns_);
}

std::string Agent::StatusText() {
  HealthSnapshot health = ReadHealthCounters();
  JsonWriter json(JsonWriter::Options{.indent = 0});
  json.BeginObject();
  json.Field("running", running_.load() && !shutting_down_.load());
  json.Field("mode", SamplingModeName(options_.mode));
  json.Field("interval_ns", options_.interval_ns);
  json.Field("walker", use_jvmti_walker_ ? "jvmti" : "agct");
  json.Key("threads").Uint(registry_.LiveCount());
  json.Key("samples_taken").Uint(health.samples_taken);
  json.Key("samples_dropped_ring_full").Uint(health.samples_dropped_ring_full);
  json.Key("samples_walk_failed").Uint(health.samples_walk_failed);
  json.Key("walk_crashes_recovered").Uint(health.walk_crashes_recovered);
  json.Key("walk_time_ns_total").Uint(health.walk_time_ns_total);
  json.Key("batches_encoded").Uint(health.batches_encoded);
  json.Key("native_memory_bytes").Uint(health.native_memory_bytes);
  json.Field("executor_id", executor_id_.Get());
  json.Field("late_start", late_start_.load());
  json.Key("rings_shrunk").Uint(health.rings_shrunk);
  json.Key("threads_unprofiled_ring_memory").Uint(health.threads_unprofiled_ring_memory);
  json.Key("python_profiles_added").Uint(g_counters.python_profiles_added.load());
  json.Key("python_profiles_refused").Uint(g_counters.python_profiles_refused.load());
  json.Key("python_profiles_unknown_task").Uint(g_counters.python_profiles_unknown_task.load());
  json.Key("python_profiles_queue_full").Uint(g_counters.python_profiles_queue_full.load());
  json.Key("python_worker_files_dropped").Uint(g_counters.python_worker_files_dropped.load());
  json.Key("wall_signals_skipped_idle").Uint(g_counters.wall_signals_skipped_idle.load());
  json.Key("wall_signals_skipped_busy").Uint(g_counters.wall_signals_skipped_busy.load());
  json.Field("compiled_method_load", compiled_method_load_);
  json.Field("debug_non_safepoints", debug_non_safepoints_.load());
  json.Key("method_id_cpu_ns_total").Uint(method_id_cpu_ns_.load());
  json.Key("profile_entries_folded").Uint(g_counters.profile_entries_folded.load());
  json.Field("jvm_counters", jvm_counters_.load() != nullptr);
  {
    std::lock_guard<std::mutex> lock(drain_mutex_);
    json.Key("jvm_memory_reads").Uint(jvm_memory_reads_);
    json.Key("jvm_memory_read_cpu_ns_total").Uint(jvm_memory_read_ns_);
  }
  json.Field("monitor_waits", monitor_waits_ != nullptr);
  if (monitor_waits_ != nullptr) {
    json.Key("monitor_wait_rows").Uint(monitor_waits_->table().rows());
    json.Key("monitor_waits_dropped").Uint(monitor_waits_->table().dropped_waits());
    json.Key("monitor_holder_looks").Uint(monitor_waits_->holder_looks());
    json.Key("monitor_holder_looks_lost").Uint(monitor_waits_->holder_looks_lost());
    json.Key("monitor_enter_ns_total").Uint(monitor_waits_->enter_ns());
    json.Key("monitor_look_ns_total").Uint(monitor_waits_->look_ns());
    json.Key("monitor_enter_cpu_ns_total").Uint(monitor_waits_->enter_cpu_ns());
  }
  json.EndObject();
  return json.Take();
}

void Agent::SetExecutorId(std::string_view id) {
  Status status = executor_id_.Set(id);
  if (!status.ok())
    LogLine("setExecutorId: %s; batches keep their executor id", status.message().c_str());
}

void Agent::OnVmDeath(JNIEnv* jni) {
  if (shutting_down_.exchange(true)) return;
  // 1. Stop every signal source and recording. 2. Let the agent threads leave their loops.
  // 3. Final drain and outputs. Memory is never freed here: late threads may still run.
  sampler_.Stop();
  EnableSampling(false);
  {
    std::lock_guard<std::mutex> lock(wakeup_mutex_);
    wakeup_.notify_all();
  }
  {
    std::unique_lock<std::mutex> lock(wakeup_mutex_);
    wakeup_.wait_for(lock, std::chrono::seconds(2),
                     [this] { return agent_threads_alive_.load() == 0; });
  }
  std::lock_guard<std::mutex> lock(drain_mutex_);
  RunDrainCycleLocked(jni);
  drain_.ChargeLiveThreadTails();  // the CPU each live thread used after its last sample
  output_failure_logged_ = false;  // the final write's failure is always worth its line
  bool written = WriteOutputsLocked();
  if (exposer_) exposer_->Stop();
  running_.store(false);
  HealthSnapshot health = ReadHealthCounters();
  if (written) {
    LogLine(
        "wrote %s.{collapsed,json%s}: %llu samples, %llu dropped (ring full), %llu walk failures",
        out_path_.c_str(), SPARKPROF_AGENT_HAVE_FLAMEGRAPH ? ",html" : "",
        static_cast<unsigned long long>(health.samples_taken),
        static_cast<unsigned long long>(health.samples_dropped_ring_full),
        static_cast<unsigned long long>(health.samples_walk_failed));
  }
}

}  // namespace sparkprof::agent
