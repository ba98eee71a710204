// The few HotSpot structure offsets the stack walker uses, read from the tables libjvm exports for
// its Serviceability Agent (gHotSpotVMStructs and the gHotSpotVMStructEntry*Offset describing an
// entry's layout). They serve one repair: a thread that called from compiled Java code into the
// VM (allocation slow paths, reflection, class resolution) records its last Java frame's sp but
// not yet its pc, so AsyncGetCallTrace gives up with unknown_not_Java; HotSpot's own
// make_walkable() fills the pc from sp[-1] when it needs to walk, and so does the walker (x86-64,
// thread in the VM only). On a JVM whose tables lack an entry, or whose values fail the checks
// on a live thread, the repair stays off, said in one log line. Not async-signal-safe.
#pragma once

#include <jni.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sparkprof::agent {

// HotSpot's JavaThreadState values used here (stable since JDK 8: globalDefinitions.hpp).
inline constexpr int32_t kThreadInNative = 4;
inline constexpr int32_t kThreadInVm = 6;
inline constexpr int32_t kThreadInVmTrans = 7;

struct HotSpotLayout {
  // JavaThread::_jni_environment (the JNIEnv inside the thread). Only JVMs built with JVMCI list
  // it; elsewhere it is where HotSpot 17-25 declare it, after the anchor (three words) and the
  // entry point, and CheckLayoutOnCurrentThread is what vouches for it.
  size_t thread_env_offset = 0;
  bool thread_env_offset_derived = false;
  size_t thread_state_offset = 0;   // JavaThread::_thread_state (an int)
  size_t thread_anchor_offset = 0;  // JavaThread::_anchor (a JavaFrameAnchor)
  size_t anchor_sp_offset = 0;      // JavaFrameAnchor::_last_Java_sp
  size_t anchor_pc_offset = 0;      // JavaFrameAnchor::_last_Java_pc
};

// How one table entry is laid out (the exported gHotSpotVMStructEntry*Offset values).
struct VmStructsTable {
  const void* entries = nullptr;  // gHotSpotVMStructs: the first entry; ends at a null type name
  uint64_t stride = 0;
  uint64_t type_name_offset = 0;
  uint64_t field_name_offset = 0;
  uint64_t is_static_offset = 0;
  uint64_t offset_offset = 0;
};

// Finds the layout's offsets in `table`; an error names what is missing or implausible.
Result<HotSpotLayout> ReadHotSpotLayout(const VmStructsTable& table);

// The exported table of the libjvm in this process; an error when libjvm exports none.
Result<VmStructsTable> FindVmStructsTable();

// Checks `layout` on the calling thread, which must be a Java thread running native code (a
// JVMTI callback or JNI call): its JavaThread, found from `env`, must say "in native" where the
// state lives, and its last Java frame must be none or on this thread's stack.
Status CheckLayoutOnCurrentThread(const HotSpotLayout& layout, JNIEnv* env);

}  // namespace sparkprof::agent
