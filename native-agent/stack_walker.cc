#include "native-agent/stack_walker.h"

#include <dlfcn.h>
#include <jni.h>

#include <atomic>
#include <cstddef>

namespace sparkprof::agent {
namespace {

// HotSpot's types (hotspot/share/prims/forte.cpp); not in any public header.
struct AgctCallFrame {
  jint lineno;
  jmethodID method_id;
};
struct AgctCallTrace {
  JNIEnv* env_id;
  jint num_frames;
  AgctCallFrame* frames;
};
using AsyncGetCallTraceFn = void (*)(AgctCallTrace*, jint, void*);

static_assert(sizeof(AgctCallFrame) == sizeof(RawFrame) &&
                  offsetof(AgctCallFrame, lineno) == offsetof(RawFrame, bci_or_line) &&
                  offsetof(AgctCallFrame, method_id) == offsetof(RawFrame, method_id),
              "ring frames must be written by AsyncGetCallTrace in place");

std::atomic<AsyncGetCallTraceFn> g_async_get_call_trace{nullptr};
static_assert(std::atomic<AsyncGetCallTraceFn>::is_always_lock_free);

}  // namespace

// not async-signal-safe
bool ResolveAsyncGetCallTrace() {
  void* symbol = nullptr;
  // RTLD_NOLOAD: only look at the libjvm already in the process, never load another one.
  if (void* libjvm = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD)) {
    symbol = dlsym(libjvm, "AsyncGetCallTrace");
    dlclose(libjvm);
  }
  if (symbol == nullptr) symbol = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
  g_async_get_call_trace.store(reinterpret_cast<AsyncGetCallTraceFn>(symbol));
  return symbol != nullptr;
}

// async-signal-safe
int AsyncGetCallTraceWalker(void* walk_context, RawFrame* frames, int max_frames, void* ucontext) {
  AsyncGetCallTraceFn function = g_async_get_call_trace.load(std::memory_order_relaxed);
  if (function == nullptr || walk_context == nullptr) return kUnknownState;
  AgctCallTrace trace;
  trace.env_id = static_cast<JNIEnv*>(walk_context);
  trace.num_frames = 0;
  trace.frames = reinterpret_cast<AgctCallFrame*>(frames);
  function(&trace, max_frames, ucontext);
  return trace.num_frames;
}

// not async-signal-safe
std::string_view WalkErrorFrameName(int code) {
  switch (code) {
    case kNoJavaFrame: return "[no_Java_frame]";
    case kNoClassLoad: return "[no_class_load]";
    case kGcActive: return "[gc_active]";
    case kUnknownNotJava: return "[unknown_not_Java]";
    case kNotWalkableNotJava: return "[not_walkable_not_Java]";
    case kUnknownJava: return "[unknown_Java]";
    case kNotWalkableJava: return "[not_walkable_Java]";
    case kUnknownState: return "[unknown_state]";
    case kThreadExit: return "[thread_exit]";
    case kDeopt: return "[deoptimization]";
    case kSafepoint: return "[safepoint]";
    case kWalkCrashed: return "[walk_crashed]";
    default: return "[walk_error]";
  }
}

}  // namespace sparkprof::agent
