// The symbols the JVM looks up: Agent_OnLoad, Agent_OnAttach, Agent_OnUnload, and the plugin's
// in-process start (agent_entry.h). JVMTI callbacks here only forward to the Agent. Everything
// else in the library has hidden visibility.
#include "native-agent/agent_entry.h"

#include <jni.h>
#include <jvmti.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "native-agent/agent.h"
#include "native-agent/agent_options.h"

namespace sparkprof::agent {
namespace {

// One start per library copy. The mutex serialises Agent_OnLoad, Agent_OnAttach (Attach Listener
// thread) and StartInProcess (any Java thread, possibly several at once); a later caller sees
// the first one's result. A second -agentpath of the same file gets this same library instance.
std::mutex g_start_mutex;
bool g_start_attempted = false;            // guarded by g_start_mutex
bool g_declined_for_another_copy = false;  // guarded by g_start_mutex
// A second copy of the library (another path, or another class loader's extracted file) has its
// own statics; the environment variable, keyed by pid so child JVMs are not affected, lets it
// decline too.
constexpr const char kLoadedEnvironmentVariable[] = "SPARKPROF_AGENT_LOADED_PID";
constexpr const char kAlreadyLoaded[] = "an agent is already loaded in this JVM; ignoring this one";

enum class StartedBy { kAgentPath, kAttach, kPlugin };

void JNICALL OnVmInit(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  if (Agent* agent = CurrentAgent()) agent->Start(jni, thread, /*late_start=*/false);
}
void JNICALL OnVmDeath(jvmtiEnv*, JNIEnv* jni) {
  if (Agent* agent = CurrentAgent()) agent->OnVmDeath(jni);
}
void JNICALL OnThreadStart(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  if (Agent* agent = CurrentAgent()) agent->OnThreadStart(jni, thread);
}
void JNICALL OnThreadEnd(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  if (Agent* agent = CurrentAgent()) agent->OnThreadEnd(jni, thread);
}
// Enabled because AsyncGetCallTrace requires it; methods are not linked yet at ClassLoad.
void JNICALL OnClassLoad(jvmtiEnv*, JNIEnv*, jthread, jclass) {}
void JNICALL OnClassPrepare(jvmtiEnv*, JNIEnv*, jthread, jclass klass) {
  if (Agent* agent = CurrentAgent()) agent->OnClassPrepare(klass);
}
// GC callbacks run with the world stopped: no JNI, no JVMTI, no allocation.
void JNICALL OnGcStart(jvmtiEnv*) {
  if (Agent* agent = CurrentAgent()) agent->gc_monitor().OnGarbageCollectionStart();
}
void JNICALL OnGcFinish(jvmtiEnv*) {
  if (Agent* agent = CurrentAgent()) agent->OnGarbageCollectionFinish();
}
// Enabled only so HotSpot records debug info at non-safepoints; nothing to do.
void JNICALL OnCompiledMethodLoad(jvmtiEnv*, jmethodID, jint, const void*, jint,
                                  const jvmtiAddrLocationMap*, const void*) {}

void JNICALL OnMonitorContendedEnter(jvmtiEnv*, JNIEnv* jni, jthread, jobject object) {
  if (Agent* agent = CurrentAgent()) agent->OnMonitorContendedEnter(jni, object);
}
void JNICALL OnMonitorContendedEntered(jvmtiEnv*, JNIEnv*, jthread, jobject) {
  if (Agent* agent = CurrentAgent()) agent->OnMonitorContendedEntered();
}

bool AlreadyLoadedByAnotherCopy() {
  const char* value = std::getenv(kLoadedEnvironmentVariable);
  return value != nullptr && std::to_string(getpid()) == value;
}

// For -agentpath the agent starts later, at VMInit, and kStarted means "will start".
StartOutcome Load(JavaVM* vm, const char* options_text, StartedBy started_by) {
  std::lock_guard<std::mutex> lock(g_start_mutex);
  if (g_start_attempted) {
    // The plugin asking again is normal (it cannot know about an earlier start): no log line.
    if (started_by != StartedBy::kPlugin) LogLine("%s", kAlreadyLoaded);
    if (g_declined_for_another_copy) return StartOutcome::kAnotherCopyRunning;
    Agent* agent = CurrentAgent();
    return agent != nullptr && agent->running() ? StartOutcome::kAlreadyRunning
                                                : StartOutcome::kFailed;
  }
  g_start_attempted = true;
  if (AlreadyLoadedByAnotherCopy()) {
    g_declined_for_another_copy = true;
    if (started_by == StartedBy::kPlugin) {
      LogLine("another copy of the agent library owns profiling in this JVM; this one stays off");
    } else {
      LogLine("%s", kAlreadyLoaded);
    }
    return StartOutcome::kAnotherCopyRunning;
  }
  // Once per JVM. POSIX leaves setenv beside a concurrent getenv undefined; glibc serialises
  // setenv calls and, on the process's first one, copies the start-up environment into a new
  // array without freeing the old, so a getenv reading meanwhile still reads valid memory (a
  // second setenv elsewhere in the JVM could realloc that array: none is known in HotSpot or
  // Spark after start-up). NOLINTNEXTLINE(concurrency-mt-unsafe)
  setenv(kLoadedEnvironmentVariable, std::to_string(getpid()).c_str(), 1);
  auto options = ParseAgentOptions(options_text != nullptr ? options_text : "");
  if (!options.ok()) {
    LogLine("bad agent options: %s; the JVM runs without profiling",
            options.status().message().c_str());
    return StartOutcome::kFailed;
  }
  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK ||
      jvmti == nullptr) {
    LogLine("JVMTI 1.2 is not available; the JVM runs without profiling");
    return StartOutcome::kFailed;
  }
  auto* agent = new Agent(vm, jvmti, std::move(*options));  // never freed, see agent.h
  if (!agent->Initialize()) return StartOutcome::kFailed;
  jvmtiEventCallbacks callbacks{};
  callbacks.VMInit = OnVmInit;
  callbacks.VMDeath = OnVmDeath;
  callbacks.ThreadStart = OnThreadStart;
  callbacks.ThreadEnd = OnThreadEnd;
  callbacks.ClassLoad = OnClassLoad;
  callbacks.ClassPrepare = OnClassPrepare;
  callbacks.GarbageCollectionStart = OnGcStart;
  callbacks.GarbageCollectionFinish = OnGcFinish;
  callbacks.CompiledMethodLoad = OnCompiledMethodLoad;
  callbacks.MonitorContendedEnter = OnMonitorContendedEnter;
  callbacks.MonitorContendedEntered = OnMonitorContendedEntered;
  if (jvmti->SetEventCallbacks(&callbacks, sizeof(callbacks)) != JVMTI_ERROR_NONE) {
    LogLine("cannot set JVMTI callbacks; the JVM runs without profiling");
    return StartOutcome::kFailed;
  }
  SetCurrentAgent(agent);
  if (started_by == StartedBy::kAgentPath) {
    jvmti->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, nullptr);
    return StartOutcome::kStarted;
  }
  JNIEnv* jni = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jni), JNI_VERSION_1_8) != JNI_OK || jni == nullptr) {
    LogLine("this thread has no JNI environment; the JVM runs without profiling");
    return StartOutcome::kFailed;
  }
  // The calling thread (Attach Listener, or the plugin's init thread) is not a worker: it is
  // registered only if it ever tags itself.
  agent->Start(jni, nullptr, /*late_start=*/true);
  return agent->running() ? StartOutcome::kStarted : StartOutcome::kFailed;
}

}  // namespace

StartOutcome StartInProcess(JavaVM* vm, const std::string& options) {
  return Load(vm, options.c_str(), StartedBy::kPlugin);
}

}  // namespace sparkprof::agent

extern "C" {

// Both return JNI_OK whatever happened: a profiler problem never stops the JVM.
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  sparkprof::agent::Load(vm, options, sparkprof::agent::StartedBy::kAgentPath);
  return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  sparkprof::agent::Load(vm, options, sparkprof::agent::StartedBy::kAttach);
  return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {
  // Nothing to free: the agent outlives every thread that could still reach it.
}

}  // extern "C"
