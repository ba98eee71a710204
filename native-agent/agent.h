// The agent: owns options, thread registry, sampler, GC monitor, drain and outputs, and receives
// the forwarded JVMTI callbacks (agent_entry.cc) and JNI calls (jni/). Created once per process
// and never freed: threads still running at JVM exit may touch it, so it must outlive them.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/http_exposer.h"
#include "metrics/registry.h"
#include "native-agent/agent_cpu.h"
#include "native-agent/agent_options.h"
#include "native-agent/batch_encoder.h"
#include "native-agent/cpu_use.h"
#include "native-agent/drain.h"
#include "native-agent/executor_id.h"
#include "native-agent/gc_monitor.h"
#include "native-agent/jvm_counters.h"
#include "native-agent/memory_use.h"
#include "native-agent/method_resolver.h"
#include "native-agent/monitor_waits.h"
#include "native-agent/ring_budget.h"
#include "native-agent/s3a_rows.h"
#include "native-agent/sampler.h"
#include "native-agent/schedstat.h"
#include "native-agent/thread_state.h"

namespace sparkprof::agent {

class Agent {
 public:
  Agent(JavaVM* vm, jvmtiEnv* jvmti, AgentOptions options);

  // Capabilities + callbacks. Returns false (after logging) when the JVM refuses them.
  bool Initialize();
  // From VMInit, or with `late_start` straight from Agent_OnAttach or the plugin's in-process
  // start when the VM is already live (then nothing before this moment is seen; see
  // docs/agent.md). `current_thread` (may be null) is registered as a profiled thread.
  void Start(JNIEnv* jni, jthread current_thread, bool late_start);

  // JVMTI callbacks (forwarded).
  void OnVmDeath(JNIEnv* jni);
  void OnThreadStart(JNIEnv* jni, jthread thread);
  void OnThreadEnd(JNIEnv* jni, jthread thread);
  void OnClassPrepare(jclass klass);
  // On the contending thread; only task threads' waits are followed (monitor_waits.h).
  void OnMonitorContendedEnter(JNIEnv* jni, jobject object);
  void OnMonitorContendedEntered();
  GcMonitor& gc_monitor() { return gc_monitor_; }
  // From the GarbageCollectionFinish callback (world stopped: no JNI, no JVMTI, no allocation).
  void OnGarbageCollectionFinish() {
    gc_monitor_.OnGarbageCollectionFinish();
    if (JvmCounters* counters = jvm_counters_.load(std::memory_order_acquire)) {
      counters->OnGcFinish();
    }
  }

  // JNI API for the plugin (called on the task thread itself for tags).
  bool running() const { return running_.load(); }
  void SetTaskTag(JNIEnv* jni, const TaskTag& tag);
  void ClearTaskTag(JNIEnv* jni);
  std::vector<uint8_t> DrainBatch(JNIEnv* jni);
  std::string StatusText();
  // The id of every later batch (see executor_id.h); a refused id costs one log line.
  void SetExecutorId(std::string_view id);
  // S3A statistics rows for the next batch (S3aRows::Append); false: a layout this agent does
  // not know.
  // Spark's execution and storage memory in use, as the executor plugin last read them; sent
  // with the next batches.
  void SetSparkMemory(int64_t execution_bytes, int64_t storage_bytes) {
    spark_execution_bytes_.store(execution_bytes > 0 ? static_cast<uint64_t>(execution_bytes) : 0);
    spark_storage_bytes_.store(storage_bytes > 0 ? static_cast<uint64_t>(storage_bytes) : 0);
  }
  bool AddS3aRows(std::span<const int64_t> flat, size_t row_longs) {
    return s3a_rows_.Append(flat, row_longs);
  }
  // One Python worker file (python_profile.h) for the next batch: queued, parsed by DrainBatch
  // after its drain cycle (so the task's latest JVM samples are known). Outcomes as
  // NativeAgent.addPythonProfile returns them.
  enum class PythonOutcome : int { kQueued = 0, kTooLarge = 1, kQueueFull = 2, kNotRunning = 3 };
  PythonOutcome AddPythonProfile(std::string bytes);
  static constexpr size_t kMaxQueuedPythonBytes = size_t{16} << 20;
  static constexpr size_t kMaxQueuedPythonFiles = 4096;

 private:
  ThreadState* RegisterCurrentThread(JNIEnv* jni, jthread thread, std::string name);
  void StartAgentThread(JNIEnv* jni, const char* name, jvmtiStartFunction body);
  static void JNICALL DrainThreadMain(jvmtiEnv* jvmti, JNIEnv* jni, void* arg);
  static void JNICALL JvmtiSamplerMain(jvmtiEnv* jvmti, JNIEnv* jni, void* arg);
  // Runs `body` under drain_mutex_ every period until shutdown; then marks the thread gone.
  void RunPeriodicallyUntilShutdown(int64_t period_ns, const std::function<void()>& body);
  void DrainLoop(JNIEnv* jni);
  void JvmtiSamplerLoop(JNIEnv* jni);
  void SampleWithJvmtiLocked(JNIEnv* jni);
  // `periodic`: the drain thread's own cycle (a batch's and the last one are complete).
  void RunDrainCycleLocked(JNIEnv* jni, bool periodic = false);
  // The monitor waits since the last batch, their names interned in the drain's strings.
  std::vector<MonitorWaitRow> TakeMonitorWaitsLocked();
  void RefreshThreadNamesLocked(JNIEnv* jni);
  // Writes the `out` files; false (after one log line per run of failures) when one failed.
  bool WriteOutputsLocked();
  void SetUpMetrics();
  // The walker's repair of last Java frames (hotspot_layout.h), or one log line why not.
  void EnableAnchorRepairIfRecognised(JNIEnv* jni);
  int64_t DrainPeriodNs() const;
  // Mode cpu+wall: whether schedstat can be read here (one log line when not).
  void ProbeSchedstat();

 public:
  // A schedstat read failed after the probe: cpu_starved off from now on, said once.
  void OnSchedstatUnreadable();
  // Makes HotSpot record debug info at non-safepoints (samples in compiled code then name the
  // right inlined method); returns how (debug_non_safepoints_'s values).
  const char* EnableNonSafepointDebugInfo();

 private:
  JavaVM* vm_;
  jvmtiEnv* jvmti_;
  AgentOptions options_;
  int pid_;
  std::string out_path_;
  int64_t start_epoch_ns_ = 0;
  bool use_jvmti_walker_ = false;
  std::atomic<bool> late_start_{false};  // read by StatusText on any thread
  // Whether HotSpot granted CompiledMethodLoad events (and so keeps non-safepoint debug info).
  bool compiled_method_load_ = false;
  // How HotSpot was made to keep non-safepoint debug info (EnableNonSafepointDebugInfo): "flag",
  // "event", "command line" (the user's -XX:[+-]DebugNonSafepoints stands) or "off".
  std::atomic<const char*> debug_non_safepoints_{"off"};
  // CPU the class-prepare callbacks (jmethodIDs for AsyncGetCallTrace) took on the threads that
  // load classes, and the start's pass over the classes already loaded: the agent's own.
  std::atomic<uint64_t> method_id_cpu_ns_{0};  // read by StatusText on any thread
  // Whether monitor contention events and GetObjectMonitorUsage were granted (monitors=on).
  bool monitor_capabilities_ = false;
  std::atomic<bool> schedstat_usable_{false};
  ExecutorId executor_id_;

  RingBudget ring_budget_;  // before registry_: its states give their bytes back on destruction
  std::atomic<bool> ring_shrink_logged_{false};
  std::atomic<bool> ring_refusal_logged_{false};
  ThreadRegistry registry_;
  Sampler sampler_;
  GcMonitor gc_monitor_;
  TaskTimeline timeline_;
  JvmtiMethodResolver resolver_;
  Drain drain_;
  std::unique_ptr<JvmInternalThreads> jvm_threads_;  // CPU mode: GC/JIT/VM threads' CPU
  CpuUseMeter cpu_use_;                              // host, process and cgroup CPU per batch
  // Under drain_mutex_: every thread's run delay, polled at each batch's end and, on the driver,
  // every kRunDelayPollNs by the drain; off (one log line) when the thread list cannot be read.
  ProcessRunDelay run_delay_;
  bool run_delay_usable_ = true;
  int64_t last_run_delay_poll_ns_ = 0;
  void PollRunDelayLocked(int64_t now_ns);
  AgentCpuMeter agent_cpu_;         // the agent's own threads' CPU clocks
  uint64_t agent_cpu_sent_ns_ = 0;  // under drain_mutex_: up to the last batch
  uint64_t batch_cpu_ns_ = 0;  // under drain_mutex_: DrainBatch's own CPU on the plugin's thread
  // Under drain_mutex_: the agent's CPU so far (agent_cpu.h), never below what was sent.
  uint64_t AgentCpuNsLocked();
  MemoryUseMeter memory_use_;  // process, cgroup and Python workers' memory per batch
  // HotSpot's counters (never freed: the GC callback may read them at exit); null when not found.
  std::atomic<JvmCounters*> jvm_counters_{nullptr};
  JavaMemoryFigures java_memory_;      // under drain_mutex_
  uint64_t heap_used_peak_bytes_ = 0;  // under drain_mutex_: this batch window's most
  uint64_t jvm_memory_reads_ = 0;      // under drain_mutex_: per batch, and their cost
  uint64_t jvm_memory_read_ns_ = 0;
  int64_t last_heap_read_ns_ = 0;  // under drain_mutex_
  std::atomic<uint64_t> spark_execution_bytes_{0};
  std::atomic<uint64_t> spark_storage_bytes_{0};
  // Monitors task threads waited to enter; null with monitors=off or without the capabilities.
  // Never freed (a JVMTI callback may still run on another thread at exit).
  MonitorWaits* monitor_waits_ = nullptr;
  S3aRows s3a_rows_;                     // the plugin's S3A statistics for the next batch
  void AddQueuedPythonProfilesLocked();  // under drain_mutex_
  std::mutex python_mutex_;
  std::vector<std::string> python_queue_;  // under python_mutex_
  size_t python_queue_bytes_ = 0;          // under python_mutex_
  bool python_refusal_logged_ = false;     // under drain_mutex_

  std::mutex drain_mutex_;  // serialises drain cycles, batch encoding, outputs, JVMTI sampling
  std::mutex wakeup_mutex_;
  std::condition_variable wakeup_;
  std::atomic<bool> running_{false};
  std::atomic<bool> shutting_down_{false};
  std::atomic<int> agent_threads_alive_{0};
  int64_t last_name_refresh_ns_ = 0;
  int64_t last_dump_ns_ = 0;
  int64_t batch_start_epoch_ns_ = 0;
  bool output_failure_logged_ = false;  // under drain_mutex_

  metrics::Registry metrics_;
  std::unique_ptr<metrics::HttpExposer> exposer_;
  metrics::Histogram* gc_pause_histogram_ = nullptr;
  std::atomic<uint64_t> category_time_ns_[classifier::kCategoryCount] = {};
};

// The process's agent, or nullptr when none runs (no -agentpath, bad options, declined).
Agent* CurrentAgent();
void SetCurrentAgent(Agent* agent);

// One line on stderr, prefixed "sparkprof: ". Never from a signal handler.
void LogLine(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace sparkprof::agent
