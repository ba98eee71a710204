// jmethodID bookkeeping with JVMTI: creating the ids AsyncGetCallTrace needs (GetClassMethods on
// ClassPrepare and for already-loaded classes) and turning ids into "package.Class.method".
// Runs only on Java threads (JVMTI callbacks, the drain agent thread); never in a signal handler.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <string>
#include <string_view>

#include "native-agent/drain.h"

namespace sparkprof::agent {

// Forces jmethodIDs for every method of `klass` to exist (and to stay valid until it unloads).
void PreallocateMethodIds(jvmtiEnv* jvmti, jclass klass);
// Same for every class loaded so far; returns the number of classes visited.
int PreallocateMethodIdsForLoadedClasses(jvmtiEnv* jvmti, JNIEnv* jni);

class JvmtiMethodResolver : public MethodNameResolver {
 public:
  explicit JvmtiMethodResolver(jvmtiEnv* jvmti) : jvmti_(jvmti) {}
  // The JNIEnv of the thread that is about to run a drain cycle (for local references).
  void set_jni(JNIEnv* jni) { jni_ = jni; }
  std::string Resolve(const void* method_id) override;

 private:
  jvmtiEnv* jvmti_;
  JNIEnv* jni_ = nullptr;
};

// "Lcom/foo/Bar$$Lambda$14.0x0000000800c0b3c8;" -> "com.foo.Bar$$Lambda$14": dotted, without the
// hidden-class address suffix (it differs per run and per class loader).
std::string ClassNameFromSignature(std::string_view signature);

// The thread's current name via GetThreadInfo; "" on error.
std::string ThreadName(jvmtiEnv* jvmti, JNIEnv* jni, jthread thread);

}  // namespace sparkprof::agent
