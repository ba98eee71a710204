// The symbols the JVM looks up: Agent_OnLoad, Agent_OnAttach, Agent_OnUnload. JVMTI callbacks
// here only forward to the Agent. Everything else in the library has hidden visibility.
#include <jni.h>
#include <jvmti.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "native-agent/agent.h"
#include "native-agent/agent_options.h"

namespace sparkprof::agent {
namespace {

// A second -agentpath of the same file gets the same library instance: this flag declines it.
std::atomic<bool> g_load_attempted{false};
// A second copy of the library (another path) has its own statics; the environment variable,
// keyed by pid so child JVMs are not affected, lets it decline too.
constexpr const char kLoadedEnvironmentVariable[] = "SPARKPROF_AGENT_LOADED_PID";

void JNICALL OnVmInit(jvmtiEnv*, JNIEnv* jni, jthread thread) {
  if (Agent* agent = CurrentAgent()) agent->Start(jni, thread);
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
  if (Agent* agent = CurrentAgent()) agent->gc_monitor().OnGarbageCollectionFinish();
}
// Enabled only so HotSpot records debug info at non-safepoints; nothing to do.
void JNICALL OnCompiledMethodLoad(jvmtiEnv*, jmethodID, jint, const void*, jint,
                                  const jvmtiAddrLocationMap*, const void*) {}

bool AlreadyLoadedByAnotherCopy() {
  const char* value = std::getenv(kLoadedEnvironmentVariable);
  return value != nullptr && std::to_string(getpid()) == value;
}

jint Load(JavaVM* vm, char* options_text, bool live_phase) {
  if (g_load_attempted.exchange(true) || AlreadyLoadedByAnotherCopy()) {
    LogLine("an agent is already loaded in this JVM; ignoring this one");
    return JNI_OK;
  }
  setenv(kLoadedEnvironmentVariable, std::to_string(getpid()).c_str(), 1);
  auto options = ParseAgentOptions(options_text != nullptr ? options_text : "");
  if (!options.ok()) {
    LogLine("bad agent options: %s; the JVM runs without profiling",
            options.status().message().c_str());
    return JNI_OK;
  }
  jvmtiEnv* jvmti = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&jvmti), JVMTI_VERSION_1_2) != JNI_OK || jvmti == nullptr) {
    LogLine("JVMTI 1.2 is not available; the JVM runs without profiling");
    return JNI_OK;
  }
  auto* agent = new Agent(vm, jvmti, std::move(*options));  // never freed, see agent.h
  if (!agent->Initialize()) return JNI_OK;
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
  if (jvmti->SetEventCallbacks(&callbacks, sizeof(callbacks)) != JVMTI_ERROR_NONE) {
    LogLine("cannot set JVMTI callbacks; the JVM runs without profiling");
    return JNI_OK;
  }
  SetCurrentAgent(agent);
  if (live_phase) {
    JNIEnv* jni = nullptr;
    if (vm->GetEnv(reinterpret_cast<void**>(&jni), JNI_VERSION_1_8) != JNI_OK) return JNI_OK;
    jthread thread = nullptr;
    jvmti->GetCurrentThread(&thread);
    agent->Start(jni, nullptr);  // the attach thread itself is not a worker: do not sample it
    if (thread != nullptr) jni->DeleteLocalRef(thread);
  } else {
    jvmti->SetEventNotificationMode(JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, nullptr);
  }
  return JNI_OK;
}

}  // namespace
}  // namespace sparkprof::agent

extern "C" {

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  return sparkprof::agent::Load(vm, options, /*live_phase=*/false);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM* vm, char* options, void*) {
  return sparkprof::agent::Load(vm, options, /*live_phase=*/true);
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM*) {
  // Nothing to free: the agent outlives every thread that could still reach it.
}

}  // extern "C"
