// The JNI boundary for the Spark plugin (Java side:
// spark-plugin/.../io/sparkprof/NativeAgent.java). Each function converts, forwards to the Agent,
// and releases what it created. Until an agent runs (no -agentpath and no startInProcess0 yet),
// every call but startInProcess0 is a cheap no-op.
#include <jni.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "jni/java_exceptions.h"
#include "jni/jni_strings.h"
#include "native-agent/agent.h"
#include "native-agent/agent_counters.h"
#include "native-agent/agent_entry.h"

namespace {

using sparkprof::agent::Agent;
using sparkprof::agent::CurrentAgent;
using sparkprof::jni::ThrowJava;

// Batches above this are refused rather than handed to Spark RPC.
constexpr size_t kMaxBatchBytes = 64u << 20;

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM*, void*) { return JNI_VERSION_1_8; }

// The plugin-only install: starts the agent in this running JVM. Returns a StartOutcome number
// (agent_entry.h). Never throws; a failure's reason is logged once by the agent.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAgent_startInProcess0(JNIEnv* env, jclass,
                                                                     jstring options) {
  JavaVM* vm = nullptr;
  if (env->GetJavaVM(&vm) != JNI_OK || vm == nullptr) {
    sparkprof::agent::LogLine("GetJavaVM failed; the JVM runs without profiling");
    return static_cast<jint>(sparkprof::agent::StartOutcome::kFailed);
  }
  // Standard UTF-8 (an out= path with an emoji names the file the user wrote).
  std::string text = sparkprof::jni::ToUtf8(env, options);
  return static_cast<jint>(sparkprof::agent::StartInProcess(vm, text));
}

JNIEXPORT jboolean JNICALL Java_io_sparkprof_NativeAgent_isLoaded0(JNIEnv*, jclass) {
  Agent* agent = CurrentAgent();
  return agent != nullptr && agent->running() ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT void JNICALL Java_io_sparkprof_NativeAgent_setTaskTag(JNIEnv* env, jclass, jint stage_id,
                                                                jint stage_attempt,
                                                                jlong task_attempt_id) {
  if (Agent* agent = CurrentAgent()) {
    agent->SetTaskTag(env, sparkprof::agent::TaskTag{stage_id, stage_attempt, task_attempt_id});
  }
}

JNIEXPORT void JNICALL Java_io_sparkprof_NativeAgent_clearTaskTag(JNIEnv* env, jclass) {
  if (Agent* agent = CurrentAgent()) agent->ClearTaskTag(env);
}

JNIEXPORT jbyteArray JNICALL Java_io_sparkprof_NativeAgent_drainBatch(JNIEnv* env, jclass) {
  Agent* agent = CurrentAgent();
  if (agent == nullptr) return nullptr;
  std::vector<uint8_t> bytes = agent->DrainBatch(env);
  if (bytes.empty()) return nullptr;
  if (bytes.size() > kMaxBatchBytes) {
    ThrowJava(env, "java/lang/IllegalStateException",
              "sparkprof batch of " + std::to_string(bytes.size()) + " bytes exceeds the limit");
    return nullptr;
  }
  jbyteArray array = env->NewByteArray(static_cast<jsize>(bytes.size()));
  if (array == nullptr) return nullptr;  // OutOfMemoryError is pending
  env->SetByteArrayRegion(array, 0, static_cast<jsize>(bytes.size()),
                          reinterpret_cast<const jbyte*>(bytes.data()));
  return array;
}

// Rows of S3A statistics for the next batch (native-agent/s3a_rows.h). Never throws: an array of
// another layout (an older or newer plugin) is ignored.
JNIEXPORT void JNICALL Java_io_sparkprof_NativeAgent_addS3aStatistics(JNIEnv* env, jclass,
                                                                      jlongArray rows,
                                                                      jint row_longs) {
  Agent* agent = CurrentAgent();
  if (agent == nullptr || rows == nullptr || row_longs <= 0) return;
  jsize length = env->GetArrayLength(rows);
  std::vector<int64_t> flat(static_cast<size_t>(length));
  env->GetLongArrayRegion(rows, 0, length, reinterpret_cast<jlong*>(flat.data()));
  if (env->ExceptionCheck()) return;
  agent->AddS3aRows(flat, static_cast<size_t>(row_longs));
}

// Spark's execution and storage memory in use (the executor plugin's reading) for the next
// batches. Never throws.
JNIEXPORT void JNICALL Java_io_sparkprof_NativeAgent_setSparkMemory0(JNIEnv*, jclass,
                                                                     jlong execution_bytes,
                                                                     jlong storage_bytes) {
  if (Agent* agent = CurrentAgent()) agent->SetSparkMemory(execution_bytes, storage_bytes);
}

// One Python worker's profile file (native-agent/python_profile.h) for the next batch. Returns
// Agent::PythonOutcome: 0 queued, 1 too large, 2 queue full, 3 no agent running. Never throws.
JNIEXPORT jint JNICALL Java_io_sparkprof_NativeAgent_addPythonProfile0(JNIEnv* env, jclass,
                                                                       jbyteArray bytes) {
  Agent* agent = CurrentAgent();
  if (agent == nullptr || bytes == nullptr) return 3;
  const jsize length = env->GetArrayLength(bytes);
  if (static_cast<size_t>(length) > sparkprof::agent::kMaxPythonProfileBytes) {
    sparkprof::agent::g_counters.python_profiles_refused.fetch_add(1);
    return static_cast<jint>(Agent::PythonOutcome::kTooLarge);
  }
  std::string copy(static_cast<size_t>(length), '\0');
  env->GetByteArrayRegion(bytes, 0, length, reinterpret_cast<jbyte*>(copy.data()));
  if (env->ExceptionCheck()) return 3;
  return static_cast<jint>(agent->AddPythonProfile(std::move(copy)));
}

// Never throws: a null, unreadable or refused id leaves the batches' id as it was.
JNIEXPORT void JNICALL Java_io_sparkprof_NativeAgent_setExecutorId(JNIEnv* env, jclass,
                                                                   jstring id) {
  Agent* agent = CurrentAgent();
  if (agent == nullptr || id == nullptr) return;
  // One character more than can fit, so an over-long id reaches the agent and is refused there
  // with its reason. Standard UTF-8: a supplementary character is one 4-byte sequence, and NUL
  // becomes U+FFFD (so it cannot cut the id short).
  std::string utf8 = sparkprof::jni::ToUtf8(env, id, sparkprof::agent::kMaxExecutorIdBytes + 1);
  agent->SetExecutorId(utf8);
}

JNIEXPORT jstring JNICALL Java_io_sparkprof_NativeAgent_status(JNIEnv* env, jclass) {
  Agent* agent = CurrentAgent();
  std::string text = agent != nullptr ? agent->StatusText() : "{\"running\":false}";
  return sparkprof::jni::ToJavaString(env, text);
}

}  // extern "C"
