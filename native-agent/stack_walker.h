// Stack walkers for the signal handler: HotSpot's AsyncGetCallTrace, resolved with dlsym from
// libjvm (it is not a public API). Error codes are AsyncGetCallTrace's, plus kWalkCrashed.
#pragma once

#include <string_view>

#include "native-agent/hotspot_layout.h"
#include "native-agent/signal_handler.h"

namespace sparkprof::agent {

// AsyncGetCallTrace's num_frames error codes (hotspot/share/prims/forte.cpp).
enum WalkError : int {
  kNoJavaFrame = 0,
  kNoClassLoad = -1,
  kGcActive = -2,
  kUnknownNotJava = -3,
  kNotWalkableNotJava = -4,
  kUnknownJava = -5,
  kNotWalkableJava = -6,
  kUnknownState = -7,
  kThreadExit = -8,
  kDeopt = -9,
  kSafepoint = -10,
};

// not async-signal-safe: finds AsyncGetCallTrace in libjvm. Returns false when it is missing
// (non-HotSpot JVM, or a future JDK that removed it).
bool ResolveAsyncGetCallTrace();

// not async-signal-safe: lets the walker mend a thread's last Java frame with `layout` (see
// hotspot_layout.h); call before sampling starts. False (nothing enabled) off x86-64.
bool EnableAnchorRepair(const HotSpotLayout& layout);

// async-signal-safe: the StackWalker that calls AsyncGetCallTrace; walk_context is the JNIEnv*.
int AsyncGetCallTraceWalker(void* walk_context, RawFrame* frames, int max_frames, void* ucontext,
                            int32_t* partial_error);

// async-signal-safe: the JavaThreadState of the thread whose JNIEnv* is `walk_context` (a
// JavaThreadStateReader), -1 when HotSpot's structures are not in use (vmstructs=off, not
// x86-64, not recognised).
int32_t HotSpotJavaThreadState(void* walk_context);

// Frame name the drain uses for a sample whose walk failed, e.g. "[gc_active]".
std::string_view WalkErrorFrameName(int code);

}  // namespace sparkprof::agent
