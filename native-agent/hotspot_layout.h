// The few HotSpot structure offsets the stack walker uses, read from the tables libjvm exports for
// its Serviceability Agent (gHotSpotVMStructs / gHotSpotVMTypes and the gHotSpotVMStructEntry*
// values describing an entry's layout). They serve two repairs of a thread that called from
// compiled Java code into the VM (allocation slow paths, reflection, class resolution):
// - its last Java frame has an sp but not yet a pc, so AsyncGetCallTrace gives up with
//   unknown_not_Java; HotSpot's own make_walkable() fills the pc from sp[-1] when it needs to
//   walk, and so does the walker;
// - that frame is a runtime stub (C2's allocation and runtime-call stubs), which
//   AsyncGetCallTrace cannot step over (not_walkable_not_Java): the walker finds the stub's
//   CodeBlob in the code cache (code heaps and their segment maps), steps over its frame size,
//   and walks from the Java caller (stack_walker.cc).
// x86-64, threads in the VM only. On a JVM whose tables lack an entry or type an entry otherwise,
// or whose values fail the checks on a live thread and on the code cache, both repairs stay off,
// said in one log line. Not async-signal-safe.
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
inline constexpr int32_t kThreadBlocked = 10;  // parked, waiting, sleeping, or on monitor entry

// Bounds that tell a code cache from memory misread as one: HotSpot has one to three code heaps
// and segments of 64 or 128 bytes (CodeCacheSegmentSize).
inline constexpr int32_t kMaxCodeHeaps = 16;
inline constexpr int32_t kMinLog2Segment = 4;
inline constexpr int32_t kMaxLog2Segment = 16;

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
  size_t anchor_fp_offset = 0;      // JavaFrameAnchor::_last_Java_fp

  // The code cache: &CodeCache::_heaps (a GrowableArray<CodeHeap*>*) and its bounds' addresses.
  uintptr_t code_heaps_address = 0;
  uintptr_t code_low_bound_address = 0;
  uintptr_t code_high_bound_address = 0;
  size_t array_length_offset = 0;       // GrowableArrayBase::_len (an int)
  size_t array_data_offset = 0;         // GrowableArray<int>::_data (any element type)
  size_t heap_memory_offset = 0;        // CodeHeap::_memory (a VirtualSpace)
  size_t heap_segment_map_offset = 0;   // CodeHeap::_segmap (a VirtualSpace)
  size_t heap_log2_segment_offset = 0;  // CodeHeap::_log2_segment_size (an int)
  size_t space_low_offset = 0;          // VirtualSpace::_low
  size_t space_high_offset = 0;         // VirtualSpace::_high
  size_t block_header_offset = 0;       // HeapBlock::_header
  size_t block_used_offset = 0;         // HeapBlock::Header::_used (a bool)
  size_t block_size = 0;                // sizeof(HeapBlock): the blob follows its block header
  size_t blob_name_offset = 0;          // CodeBlob::_name (const char*)
  size_t blob_size_offset = 0;          // CodeBlob::_size (an int, bytes)
  size_t blob_frame_size_offset = 0;    // CodeBlob::_frame_size (an int, words)

  // For naming the frames of a thread in the deoptimization handler (stack_walker.cc).
  size_t nmethod_method_offset = 0;  // CompiledMethod::_method (JDK 17, 21) or nmethod::_method
  size_t method_const_offset = 0;    // Method::_constMethod
  size_t const_method_constants_offset = 0;  // ConstMethod::_constants
  size_t const_method_idnum_offset = 0;      // ConstMethod::_method_idnum (a u2)
  size_t pool_holder_offset = 0;             // ConstantPool::_pool_holder
  size_t klass_method_ids_offset = 0;        // InstanceKlass::_methods_jmethod_ids
  size_t thread_stack_base_offset = 0;       // JavaThread::_stack_base (the stack's high end)
  size_t thread_stack_size_offset = 0;       // JavaThread::_stack_size
  size_t thread_vframe_array_offset = 0;  // JavaThread::_vframe_array_head: set while frames move
};

// How one type table entry is laid out (the exported gHotSpotVMTypeEntry*Offset values).
struct VmTypesTable {
  const void* entries = nullptr;  // gHotSpotVMTypes: the first entry; ends at a null type name
  uint64_t stride = 0;
  uint64_t type_name_offset = 0;
  uint64_t size_offset = 0;
};

// How one table entry is laid out (the exported gHotSpotVMStructEntry*Offset values).
struct VmStructsTable {
  const void* entries = nullptr;  // gHotSpotVMStructs: the first entry; ends at a null type name
  uint64_t stride = 0;
  uint64_t type_name_offset = 0;
  uint64_t field_name_offset = 0;
  uint64_t is_static_offset = 0;
  uint64_t offset_offset = 0;
  uint64_t type_string_offset = 0;  // the field's C++ type, e.g. "int"
  uint64_t address_offset = 0;      // a static field's address
};

// Finds the layout's offsets in `table` and sizes in `types`; an error names what is missing,
// typed otherwise than expected, or implausible.
Result<HotSpotLayout> ReadHotSpotLayout(const VmStructsTable& table, const VmTypesTable& types);

// The address of a static field `type::field` the table lists (e.g. PerfMemory::_start); an
// error when it lists none or an unusable address.
Result<uintptr_t> StaticFieldAddress(const VmStructsTable& table, std::string_view type,
                                     std::string_view field);

// A `bool` product or diagnostic flag (-XX:...) as HotSpot's flag table lists it (JVMFlag::flags,
// JVMFlag::numFlags and each entry's _name, _addr, _flags and _type, the Serviceability Agent's
// own way in).
struct BoolFlag {
  bool* value = nullptr;        // where the JVM keeps the flag's value (libjvm's data)
  bool set_explicitly = false;  // its value did not come from the default (command line,
                                // ergonomics, management, ...): leave it alone
};

// Finds the bool flag `name`; an error when the table lists no flag table, the layout reads
// implausibly, the flag is missing, or its type is not bool.
Result<BoolFlag> FindBoolFlag(const VmStructsTable& table, const VmTypesTable& types,
                              std::string_view name);

// The exported tables of the libjvm in this process; an error when libjvm exports none.
Result<VmStructsTable> FindVmStructsTable();
Result<VmTypesTable> FindVmTypesTable();

// Both tables, or the first one's error.
struct HotSpotTables {
  VmStructsTable structs;
  VmTypesTable types;
};
Result<HotSpotTables> FindHotSpotTables();

// Checks that `layout` finds `method_id` again from the Method it names (Method -> ConstMethod ->
// ConstantPool -> InstanceKlass -> its jmethodID table), as the walker does for compiled frames.
// `method_id` must be a live method's (JVMTI GetClassMethods).
Status CheckMethodIdLookup(const HotSpotLayout& layout, jmethodID method_id);

// Checks the code cache as `layout` reads it: a few heaps, each a non-empty range inside the
// cache's bounds with a segment map and a plausible segment size.
Status CheckCodeCache(const HotSpotLayout& layout);

// Checks `layout` on the calling thread, which must be a Java thread running native code (a
// JVMTI callback or JNI call): its JavaThread, found from `env`, must say "in native" where the
// state lives, and its last Java frame must be none or on this thread's stack.
Status CheckLayoutOnCurrentThread(const HotSpotLayout& layout, JNIEnv* env);

}  // namespace sparkprof::agent
