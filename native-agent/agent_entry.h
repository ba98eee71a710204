// The three ways the agent starts in a JVM: -agentpath (Agent_OnLoad, before VMInit), the attach
// API (Agent_OnAttach, live phase) and the Spark plugin in a JVM without -agentpath
// (StartInProcess, live phase, reached through jni/sparkprof_jni.cc). All three go through one
// start routine that runs at most once per library copy, serialised by one mutex.
#pragma once

#include <jni.h>

#include <string>

namespace sparkprof::agent {

// What StartInProcess did. The numbers cross JNI: NativeAgent.java maps them, keep them stable.
enum class StartOutcome : int {
  kStarted = 0,             // this call started the agent; it samples now
  kAlreadyRunning = 1,      // this library's agent already runs (-agentpath, attach, earlier call)
  kAnotherCopyRunning = 2,  // another copy of the library (other path or class loader) owns the
                            // agent; this copy stays off, its NativeAgent calls do nothing
  kFailed = 3,              // the agent does not run; the first try logged why
};

// Starts the agent in this live JVM with `options` (the -agentpath option syntax). Safe to call
// twice or from several threads at once: later callers wait for the first and report its result.
// Never throws, never kills the JVM. `vm` from JNIEnv::GetJavaVM on a Java thread.
StartOutcome StartInProcess(JavaVM* vm, const std::string& options);

}  // namespace sparkprof::agent
